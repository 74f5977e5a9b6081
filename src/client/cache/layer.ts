import type { HttpError } from '../../errors/index.js';
import type { CachedResponse } from '../contract/cache-store.js';
import { clientFailure } from '../contract/errors.js';
import type { EffectiveOptions, HopResponse, ResendReason } from '../contract/types.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { Destination } from '../wire/destination.js';
import { Hop } from '../wire/hop.js';
import { writeResponse, writeUpdate } from './answer-writes.js';
import { type CacheCall, type CachedFlow, FlowHopOwner, member, passOn, type WireAnswer } from './cache-call.js';
import { CallCoalescing } from './coalescing.js';
import { fillsFor } from './fills.js';
import { currentAge } from './freshness.js';
import { GuardedStore } from './guarded-store.js';
import { parseHttpDate } from './http-date.js';
import { judgeOriginResponse, staleForFailure } from './origin-answer.js';
import { bypassesCache, invalidatedUrls, judge, requestDirectives } from './policy.js';
import { gatewayTimeout, responseFrom } from './response.js';
import { revalidateInBackground } from './revalidation.js';
import type { CacheSettings } from './settings.js';
import { answerFromCache, answerStored } from './stored-answer.js';
import { conditionalFields, satisfiesCallerCondition } from './validators.js';
import { varyMatches } from './vary.js';

/** The store key of a URL: GET and HEAD share one (a HEAD is answered from a stored GET), other methods have their own. */
export function cacheKey(method: string, href: string, socketPath: string | undefined): string {
    const hash = href.indexOf('#');
    const url = hash === -1 ? href : href.slice(0, hash);
    const where = socketPath === undefined ? url : `unix:${socketPath} ${url}`;
    return method === 'GET' || method === 'HEAD' ? where : `${method} ${where}`;
}

/**
 * The HTTP cache in front of one request's flow (README "Cache"): each hop the flow starts comes
 * here first and is answered from the store, sent with the stored validators, or sent as it is; what
 * comes back is stored, merged into the stored response (a 304) or replaced by a stale one (RFC
 * 5861). The layer owns the hops it sends and hands their outcome on to the flow, with its
 * Cache-Status; the hop and the flow know nothing of the RFC 9111 rules (policy.ts).
 */
export class CacheLayer extends FlowHopOwner {
    private readonly store: GuardedStore;
    // The hop under way (a flow runs one at a time), and a count that makes a lookup outrun by the next one moot.
    private call: CacheCall | undefined;
    private lookups = 0;
    // The flow's retry count at the last hop: a hop that raised it is a retry.
    private retries = 0;
    // The option copies made to carry validators, back to the options the flow gave.
    private readonly originals = new WeakMap<EffectiveOptions, EffectiveOptions>();
    // With request coalescing (on by default): this call's part in it.
    private readonly coalescing: CallCoalescing | undefined;

    constructor(
        flow: CachedFlow,
        private readonly settings: CacheSettings,
        private readonly pipeline: Pipeline | undefined
    ) {
        super(flow);
        this.store = guardedStoreOf(settings);
        const coalesce = settings.coalesce;
        this.coalescing = coalesce === undefined ? undefined : new CallCoalescing(fillsFor(this.store), coalesce);
    }

    /** The flow settled: a fill this call still leads ends without an answer (its waiters go on). */
    callSettled(): void {
        this.coalescing?.end('failed');
    }

    /** The flow starts a hop: look it up, then answer it or send it. */
    start(method: string, target: URL | Destination, given: EffectiveOptions, resendReason?: ResendReason): void {
        const previous = this.call;
        const options = this.originals.get(given) ?? given;
        const headers = options.headers;
        const call: CacheCall = {
            method,
            target,
            options,
            resendReason,
            key: cacheKey(method, target.href, options.socketPath),
            directives: requestDirectives(headers),
            outcome: 'bypass',
            entry: undefined,
            judgement: undefined,
            validating: false,
            requestTime: 0,
            answer: undefined,
            collapsed: undefined,
            fetcher: undefined
        };
        this.call = call;
        const lookup = ++this.lookups;
        if (!this.settings.methods.has(method) || bypassesCache(headers)) {
            this.forward(call, undefined);
            return;
        }

        const retry = this.flow.retryCount > this.retries;
        this.retries = this.flow.retryCount;
        if (retry) {
            // A retry asks the origin again: answering it with the stored response it retries would only repeat it.
            call.outcome = 'request';
            if (previous?.key === call.key && previous.entry !== undefined) {
                // That response still answers the last failure, when nothing more will be tried (stale-if-error).
                call.entry = previous.entry;
                call.judgement = judge(previous.entry, call.directives, this.settings.shared, Date.now());
            }

            this.forward(call, undefined);
            return;
        }

        this.store.get(call.key).then((entries) => {
            if (lookup === this.lookups && !this.flow.settled) {
                this.guard(() => this.decide(call, entries));
            }
        });
    }

    /** A stored response answers, or the request goes to the origin (with validators when one can be validated). */
    private decide(call: CacheCall, entries: readonly CachedResponse[]): void {
        const now = Date.now();
        const headers = call.options.headers;
        const entry = entries.find(
            (stored) =>
                (stored.method === call.method || (call.method === 'HEAD' && stored.method === 'GET')) &&
                varyMatches(stored.vary, headers)
        );
        if (entry === undefined) {
            call.outcome = 'miss';
            if (call.directives.onlyIfCached) {
                answerFromCache(this.flow, this.pipeline, call, gatewayTimeout(member({ outcome: 'only-if-cached' })));
            } else {
                this.toOrigin(call, entries, undefined);
            }

            return;
        }

        const judgement = judge(entry, call.directives, this.settings.shared, now);
        call.entry = entry;
        call.judgement = judgement;
        const ifNoneMatch = header(headers['if-none-match']);
        const ifModifiedSince = header(headers['if-modified-since']);
        const callerConditional = ifNoneMatch !== undefined || ifModifiedSince !== undefined;
        if (judgement.suitability !== 'validate') {
            if (judgement.suitability === 'stale-while-revalidate') {
                revalidateInBackground(this.flow, this.pipeline, this.store, this.settings, call, entry);
            }

            // What it found is shared with this process's waiters, when this call led them.
            this.coalescing?.end('shared', entry);
            const notModified =
                callerConditional && satisfiesCallerCondition(entry, ifNoneMatch, ifModifiedSince, parseHttpDate);
            answerStored(this.flow, this.pipeline, call, entry, judgement, notModified, now);
            return;
        }

        if (call.directives.onlyIfCached) {
            answerFromCache(this.flow, this.pipeline, call, gatewayTimeout(member({ outcome: 'only-if-cached' })));
            return;
        }

        call.outcome = judgement.byRequest ? 'request' : 'revalidated';
        // The caller's own precondition goes as it is: its 304 is for the caller.
        const validators = callerConditional ? undefined : conditionalFields(entry);
        if (judgement.byRequest) {
            this.forward(call, validators);
        } else {
            this.toOrigin(call, entries, validators);
        }
    }

    /**
     * Sends the call to the origin, coalesced with the calls for the same request when it may be
     * (coalescing.ts): it leads the fill and sends, or waits for the one under way, then looks again.
     */
    private toOrigin(call: CacheCall, entries: readonly CachedResponse[], validators: Validators): void {
        const coalescing = this.coalescing;
        if (coalescing === undefined || !coalescing.applies(call)) {
            this.forward(call, validators);
            return;
        }

        const lookup = this.lookups;
        const wanted = () => lookup === this.lookups && !this.flow.settled;
        coalescing.join(call, entries).then(async ({ waited, shared, recheck }) => {
            // A call that waited is answered by what the fetch stored (looked up again when it was another
            // instance's), or goes on its own; one that took the store's lock looks again before it fetches.
            const lookAgain = (waited || recheck) && wanted() && shared === undefined;
            const again = lookAgain ? await this.store.get(call.key) : undefined;
            const found = shared === undefined ? again : [shared];
            if (!wanted()) {
                coalescing.end('failed');
            } else {
                this.guard(() => (found === undefined ? this.forward(call, validators) : this.decide(call, found)));
            }
        });
    }

    /** Sends the call's request as a hop the layer owns, with `validators` added when given. */
    private forward(call: CacheCall, validators: Validators): void {
        let options = call.options;
        if (validators !== undefined && Object.keys(validators).length > 0) {
            options = { ...options, headers: { ...options.headers, ...validators } };
            this.originals.set(options, call.options);
            call.validating = true;
        }

        call.requestTime = Date.now();
        const hop = new Hop(this, call.method, options, this.pipeline, call.resendReason);
        this.coalescing?.sent(hop);
        this.flow.sendHop(hop, call.target);
    }

    // The outcome of the hops the layer sends (HopOwner): the rest is the flow's (FlowHopOwner).

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
                call.answer = judgeOriginResponse(call, hop, res, this.settings, this.flow);
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
            case 'updated':
                if (!answer.stores) {
                    res.resume();
                    this.answerAfter(hop, call, answer.entry, answer.member.told);
                    return;
                }

                // The update lands before the caller has the response it made (docs/cache.md, "The `cache` option").
                writeUpdate(this.store, call.key, answer, res, written).then((cacheStatus) => {
                    if (!this.flow.settled) {
                        this.guard(() => this.answerAfter(hop, call, answer.entry, cacheStatus));
                    }
                });
                return;
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
        hop.clock.carriedBy(res);
        this.flow.hopResponded(hop, res);
    }

    /**
     * The validators the layer added are for this hop's URL only: gone from its options before the flow
     * derives a redirect's or a retry's options from them.
     */
    private dropValidators(hop: Hop, call: CacheCall | undefined): void {
        if (call?.validating === true) {
            delete hop.options.headers['if-none-match'];
            delete hop.options.headers['if-modified-since'];
        }
    }

    /** Runs a step begun outside the flow's own call stack: a throw fails the request rather than the process. */
    private guard(step: () => void): void {
        try {
            step();
        } catch (err) {
            this.flow.fail(clientFailure(`The cache failed: ${(err as Error).message}`, err));
        }
    }
}

// One guarded view per store: its entry limit is read once.
const guardedStores = new WeakMap<CacheSettings, GuardedStore>();
function guardedStoreOf(settings: CacheSettings): GuardedStore {
    let store = guardedStores.get(settings);
    if (store === undefined) {
        store = new GuardedStore(settings.store, settings.storeTimeout);
        guardedStores.set(settings, store);
    }

    return store;
}

/** The conditional fields the layer adds to validate a stored response. */
type Validators = Record<string, string> | undefined;

function header(value: string | number | readonly string[] | undefined): string | undefined {
    return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : String(value);
}
