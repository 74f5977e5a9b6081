import type { HttpError } from '../../errors/index.js';
import type { CachedResponse } from '../contract/cache-store.js';
import { clientFailure } from '../contract/errors.js';
import type { HopResponse } from '../contract/types.js';
import type { Hop } from '../wire/hop.js';
import { writeResponse, writeUpdate } from './answer-writes.js';
import { type CacheCall, type CachedFlow, cacheKey, FlowHopOwner, passOn, type WireAnswer } from './cache-call.js';
import { CallCoalescing } from './coalescing.js';
import { type Fills, fillsFor } from './fills.js';
import { currentAge } from './freshness.js';
import { GuardedStore } from './guarded-store.js';
import { judgeOriginResponse, staleForFailure } from './origin-answer.js';
import { invalidatedUrls } from './policy.js';
import { responseFrom } from './response.js';
import type { CacheSettings } from './settings.js';

/**
 * The hops the cache layer sends, from their outcome on (layer.ts looks each call up and sends them):
 * as their owner, the cache's decision on the origin's answer (origin-answer.ts judges it) — a
 * response stored, a 304 merged into the stored one, a stale response in place of a failure or a 5xx
 * (RFC 5861), an invalidation — carried out, and the response the call ends with handed to the flow
 * with its Cache-Status.
 */
export abstract class SentHops extends FlowHopOwner {
    protected readonly store: GuardedStore;
    // The hop under way (a flow runs one at a time).
    protected call: CacheCall | undefined;
    // With request coalescing (on by default): this call's part in it.
    protected readonly coalescing: CallCoalescing | undefined;

    constructor(
        flow: CachedFlow,
        protected readonly settings: CacheSettings,
        /** The request has a pipeline: listeners see the responses of its hops. */
        private readonly observed: boolean
    ) {
        super(flow);
        const { store, fills } = storeOf(settings);
        this.store = store;
        this.coalescing = fills === undefined ? undefined : new CallCoalescing(fills, settings.coalesce!);
    }

    // The hop's side (HopOwner): the rest is the flow's (FlowHopOwner).

    hopFailed(hop: Hop, err: HttpError): void {
        this.dropValidators(hop, this.call);
        // The flow re-sends a stale connection's hop or retries first; answersFailure() is its last resort.
        this.flow.hopFailed(hop, err);
    }

    /**
     * The flow has nothing more to try for `hop`'s failure: true when a stale response answers it
     * instead. Only a network failure or a timeout (not the caller's abort) may be (RFC 5861 4).
     */
    answersFailure(hop: Hop, err: HttpError): boolean {
        const call = this.call;
        const stale = call === undefined ? undefined : staleForFailure(call, err);
        if (stale !== undefined) {
            this.answerAfter(hop, call!, stale.entry, stale.cacheStatus);
        }

        return stale !== undefined;
    }

    /** The origin's response headers arrived: decide what the cache makes of them, and say so in Cache-Status before the hop reports it. */
    responseArrived(hop: Hop, res: HopResponse): void {
        const call = this.call;
        if (call !== undefined) {
            try {
                call.answer = judgeOriginResponse(call, hop, res, this.settings, this.flow, this.observed);
            } catch {
                // A response the rules could not read is passed on as it came.
                call.answer = passOn;
            }
        }
    }

    hopResponded(hop: Hop, res: HopResponse): void {
        const call = this.call!;
        this.dropValidators(hop, call);
        const answer = call.answer ?? passOn;
        call.answer = undefined;
        const invalidated = invalidatedUrls(hop.method, hop.destination.href, res.statusCode as number, res.rawHeaders);
        if (invalidated.length === 0) {
            this.guard(() => this.responded(call, hop, res, answer));
            return;
        }

        // The caller's next request must not find what this one changed: the invalidation ends first.
        const socketPath = call.options.socketPath;
        const deletions = invalidated.map((url) => this.store.delete(cacheKey('GET', url.href, socketPath)));
        Promise.all(deletions).then(() => {
            if (this.flow.settled) {
                res.destroy();
            } else {
                this.guard(() => this.responded(call, hop, res, answer));
            }
        });
    }

    /**
     * Hands the flow the response the call ends with, storing what is to be stored; a fill the call
     * leads ends as its answer says, once what it stores has landed. A response's Cache-Status says
     * `stored` only once the write has landed, and why not when it did not (docs/cache.md "Cache-Status").
     */
    private responded(call: CacheCall, hop: Hop, res: HopResponse, answer: WireAnswer): void {
        const written = this.coalescing?.answered(answer, res, () => this.flow.retriesResponse(hop, res));
        switch (answer.kind) {
            case 'updated': {
                if (!answer.stores) {
                    res.resume();
                    this.answerAfter(hop, call, answer.entry, answer.member.told);
                    return;
                }

                // The update lands before the caller has the response it made (docs/cache.md, "The `cache` option").
                const landed = writeUpdate(this.store, call.key, answer, res, written);
                if (typeof landed === 'string') {
                    this.answerAfter(hop, call, answer.entry, landed);
                } else {
                    landed.then((cacheStatus) => {
                        if (!this.flow.settled) {
                            this.guard(() => this.answerAfter(hop, call, answer.entry, cacheStatus));
                        }
                    });
                }

                return;
            }
            case 'stale-if-error':
                res.resume();
                this.answerAfter(hop, call, answer.entry, answer.cacheStatus);
                return;
            case 'keep':
                writeResponse(this.store, call.key, answer, this.settings.shared, res, written);
                break;
        }

        this.flow.hopResponded(hop, res);
    }

    /** The flow gets a response made from `entry` in place of the one the hop got (a 304, a 5xx) or did not get. */
    private answerAfter(hop: Hop, call: CacheCall, entry: CachedResponse, cacheStatus: string): void {
        const res = responseFrom(entry, call.method, currentAge(entry, Date.now()), cacheStatus);
        hop.clock.carriedBy(res, this.observed || this.flow.readsResponseBody !== true);
        this.flow.hopResponded(hop, res);
    }

    /**
     * The validators the layer added are for this hop's URL only: gone from its options before the flow
     * derives a redirect's or a retry's options from them.
     */
    private dropValidators(hop: Hop, call: CacheCall | undefined): void {
        if (call?.validating !== true) {
            return;
        }

        const headers = hop.options.headers;
        if (holdsBesideValidators(headers, call.options.headers)) {
            // Nothing changed the copy the validators went in (no listener edited it): the fields it was
            // made from are those without them. A delete made the copy a dictionary, which cost more than
            // the copy itself.
            hop.options.headers = call.options.headers;
        } else {
            delete headers['if-none-match'];
            delete headers['if-modified-since'];
        }
    }

    /** Runs a step begun outside the flow's own call stack: a throw fails the request rather than the process. */
    protected guard(step: () => void): void {
        try {
            step();
        } catch (err) {
            this.flow.fail(clientFailure(`The cache failed: ${(err as Error).message}`, err));
        }
    }
}

type Headers = CacheCall['options']['headers'];

/** True when `copy` holds the fields of `original` (which has no validators), the same values, and the validators alone beside them. */
function holdsBesideValidators(copy: Headers, original: Headers): boolean {
    let fields = 0;
    for (const name in copy) {
        if (name === 'if-none-match' || name === 'if-modified-since') {
            continue;
        }

        if (copy[name] !== original[name]) {
            return false;
        }

        fields++;
    }

    for (const _ in original) {
        fields--;
    }

    return fields === 0;
}

/** The store of one cache's settings as the layer uses it, and its fills when calls are coalesced. */
interface LayerStore {
    readonly store: GuardedStore;
    readonly fills: Fills | undefined;
}

// One guarded view per settings (its entry limit is read once), found with its fills in one lookup a call.
const layerStores = new WeakMap<CacheSettings, LayerStore>();
function storeOf(settings: CacheSettings): LayerStore {
    let found = layerStores.get(settings);
    if (found === undefined) {
        const store = new GuardedStore(settings.store, settings.storeTimeout);
        found = { store, fills: settings.coalesce === undefined ? undefined : fillsFor(store) };
        layerStores.set(settings, found);
    }

    return found;
}
