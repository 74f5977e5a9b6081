import type { HttpError } from '../../errors/index.js';
import type { PreparedPayload } from '../bodies/payload.js';
import type { PayloadReplay } from '../bodies/payload-replay.js';
import type { CachedResponse } from '../contract/cache-store.js';
import type { Agents, EffectiveOptions, HopRequest, HopResponse, RequestUri, ResendReason } from '../contract/types.js';
import type { Destination } from '../wire/destination.js';
import type { AnsweredHop, Hop, HopOwner } from '../wire/hop.js';
import {
    type CacheOutcome,
    type CacheStatusFacts,
    cacheStatusMember,
    notStoredDetails,
    ttlSeconds
} from './cache-status.js';
import type { CacheDirectives } from './directives.js';
import type { StoreWrite } from './guarded-store.js';
import type { Judgement } from './policy.js';

/** What the cache layer needs of the request flow it sits in front of (flow/hop-loop.ts). */
export interface CachedFlow extends HopOwner {
    readonly settled: boolean;
    /** Sends a hop the layer made (the layer owns it: its outcome comes back here first). */
    sendHop(hop: Hop, target: URL | Destination): void;
    hopResponded(hop: AnsweredHop, res: HopResponse): void;
    /** True when the flow will retry `res` once its hop reports it. */
    retriesResponse(hop: AnsweredHop, res: HopResponse): boolean;
}

/**
 * The side of the hops the cache layer sends (HopOwner) that stays the flow's: its agents and counts, the
 * stream payload, the request made, a failure before anything was sent. The layer adds their outcome.
 */
export abstract class FlowHopOwner implements HopOwner {
    constructor(protected readonly flow: CachedFlow) {}

    get agents(): Agents {
        return this.flow.agents;
    }

    get redirectCount(): number {
        return this.flow.redirectCount;
    }

    get retryCount(): number {
        return this.flow.retryCount;
    }

    get staleResends(): number {
        return this.flow.staleResends;
    }

    /** The flow's reader, a helper's, reads the response the call ends with (HopOwner): the origin's or the one the cache makes. */
    get readsResponseBody(): boolean {
        return this.flow.readsResponseBody === true;
    }

    streamFor(payload: PreparedPayload, options: EffectiveOptions): PayloadReplay | HttpError | undefined {
        return this.flow.streamFor(payload, options);
    }

    requestCreated(req: HopRequest, options: EffectiveOptions): void {
        this.flow.requestCreated(req, options);
    }

    fail(err: HttpError): void {
        this.flow.fail(err);
    }

    abstract hopResponded(hop: AnsweredHop, res: HopResponse): void;
    abstract hopFailed(hop: Hop, err: HttpError): void;
}

/** The store key of a URL: GET and HEAD share one (a HEAD is answered from a stored GET), other methods have their own. */
export function cacheKey(method: string, href: string, socketPath: string | undefined): string {
    const hash = href.indexOf('#');
    const url = hash === -1 ? href : href.slice(0, hash);
    const where = socketPath === undefined ? url : `unix:${socketPath} ${url}`;
    return method === 'GET' || method === 'HEAD' ? where : `${method} ${where}`;
}

/** One hop's dealings with the cache: what was asked, what was stored, what was decided. */
export interface CacheCall {
    readonly method: string;
    readonly target: URL | Destination;
    /** The hop's options as the flow gave them (without the validators the layer adds). */
    readonly options: EffectiveOptions;
    readonly resendReason: ResendReason | undefined;
    readonly key: string;
    readonly directives: CacheDirectives;
    outcome: CacheOutcome;
    /** The stored response judged for this call, and the judgement. */
    entry: CachedResponse | undefined;
    judgement: Judgement | undefined;
    /** The layer sent the stored validators: a 304 updates `entry`. */
    validating: boolean;
    requestTime: number;
    /** What the origin's response means for the cache, decided as its headers arrive. */
    answer: WireAnswer | undefined;
    /**
     * Request coalescing (coalescing.ts): undefined when the call did not wait for another's fetch; once
     * it did, false, then true when the store answered it (Cache-Status `collapsed`, or `collapsed=?0`).
     */
    collapsed: boolean | undefined;
    /** The hop of the call it waited for, when that one ran in this process: `uri.collapsedInto`. */
    fetcher: RequestUri | undefined;
}

/**
 * The Cache-Status member of a response the cache writes to the store: `told` is what the response
 * carries until the write has settled (no `stored`: nothing is stored yet), `facts` what the member
 * says once it has, with `stored` or why not (`afterWrite`).
 */
export interface PendingMember {
    readonly told: string;
    readonly facts: MemberFacts;
    /** The member once the write has landed (`afterWrite`), made the first time it is asked for. */
    stored: string | undefined;
}

/** What the cache makes of a response from the origin. */
export type WireAnswer =
    /**
     * A 304 that updates the stored response: the caller gets that. `reusable`: the entry answers the
     * next call without asking the origin (fresh, or stale as RFC 5861 allows). `stores`: the update is
     * written (`member` completed once it has), else `member.told` is final.
     */
    | {
          kind: 'updated';
          entry: CachedResponse;
          stores: boolean;
          reusable: boolean;
          member: PendingMember;
          /** The 304 carries `member` (it has listeners to see it), to be completed with the write. */
          shown: boolean;
      }
    /** A 5xx a stale response replaces (stale-if-error). */
    | { kind: 'stale-if-error'; entry: CachedResponse; cacheStatus: string }
    /** A response to store once its body has been read (`reusable` as above; `member` completed once written). */
    | { kind: 'keep'; entry: CachedResponse; directives: CacheDirectives; reusable: boolean; member: PendingMember }
    /** A response passed on as it came. */
    | { kind: 'pass' };

export const passOn: WireAnswer = { kind: 'pass' };

/** The facts of a Cache-Status member, those not given unset. */
export type MemberFacts = Partial<CacheStatusFacts> & { outcome: CacheOutcome };

/**
 * The member of a response to be written, until its write has settled (`PendingMember`). Facts equal to
 * the last ones give the last pending member: a key revalidated many times a second asks for the same
 * member each time, and its strings are then made once (each was made anew and compared character by
 * character with the last: a tenth of what the cache added to a `304`).
 */
export function pendingMember(facts: MemberFacts): PendingMember {
    const last = lastPending;
    if (
        last !== undefined &&
        facts.outcome === last.facts.outcome &&
        facts.forwardStatus === last.facts.forwardStatus &&
        // As the member says it, in whole seconds: a stale entry's ttl moves every millisecond.
        wholeTtl(facts.ttl) === wholeTtl(last.facts.ttl) &&
        facts.collapsed === last.facts.collapsed &&
        facts.stored === last.facts.stored &&
        facts.detail === last.facts.detail
    ) {
        return last;
    }

    lastPending = { told: member(facts), facts, stored: undefined };
    return lastPending;
}

let lastPending: PendingMember | undefined;

function wholeTtl(ttl: number | undefined): number | undefined {
    return ttl === undefined ? undefined : ttlSeconds(ttl);
}

/** The member `pending` becomes once its write ended as `write`: `stored`, or a `detail` that says why not. */
export function afterWrite(pending: PendingMember, write: StoreWrite): string {
    const facts = pending.facts;
    if (write !== 'stored') {
        return member({ ...facts, detail: notStoredDetails[write] });
    }

    pending.stored ??= member({ ...facts, stored: true });
    return pending.stored;
}

/** A Cache-Status member (RFC 9211) from the facts given, the others unset. */
export function member(facts: MemberFacts): string {
    return cacheStatusMember({
        stored: false,
        ttl: undefined,
        forwardStatus: undefined,
        detail: undefined,
        collapsed: undefined,
        ...facts
    });
}
