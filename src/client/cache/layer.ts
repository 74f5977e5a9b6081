import type { CachedResponse } from '../contract/cache-store.js';
import type { EffectiveOptions, ResendReason } from '../contract/types.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { Destination } from '../wire/destination.js';
import { Hop } from '../wire/hop.js';
import { type CacheCall, type CachedFlow, cacheKey, member } from './cache-call.js';
import type { JoinedTurn } from './coalescing.js';
import { parseHttpDate } from './http-date.js';
import { bypassesCache, judge, requestDirectives } from './policy.js';
import { gatewayTimeout } from './response.js';
import { revalidateInBackground } from './revalidation.js';
import { SentHops } from './sent-hops.js';
import type { CacheSettings } from './settings.js';
import { answerFromCache, answerStored } from './stored-answer.js';
import { conditionalFields, satisfiesCallerCondition } from './validators.js';
import { varyMatches } from './vary.js';

/**
 * The HTTP cache in front of one request's flow (README "Cache"): each hop the flow starts comes
 * here first and is looked up — answered from the store, sent with the stored validators, or sent as
 * it is, coalesced with the calls for the same request when it may be. What comes back to the hops it
 * sends is the part it extends (sent-hops.ts): stored, merged into the stored response (a 304) or
 * replaced by a stale one (RFC 5861), then handed on to the flow with its Cache-Status. The hop and the
 * flow know nothing of the RFC 9111 rules (policy.ts).
 */
export class CacheLayer extends SentHops {
    // A count that makes a lookup outrun by the next one moot.
    private lookups = 0;
    // The flow's retry count at the last hop: a hop that raised it is a retry.
    private retries = 0;
    // The last option copy made to carry validators, and the options the flow gave, which a hop re-sent
    // with that copy starts from again (a flow runs one hop at a time: no older copy comes back). Plain
    // fields: a weak map's write per revalidation was work for every young collection.
    private validatedCopy: EffectiveOptions | undefined;
    private validatedFrom: EffectiveOptions | undefined;

    constructor(
        flow: CachedFlow,
        settings: CacheSettings,
        private readonly pipeline: Pipeline | undefined
    ) {
        super(flow, settings, pipeline !== undefined);
    }

    /** The flow settled: a fill this call still leads ends without an answer (its waiters go on). */
    callSettled(): void {
        this.coalescing?.end('failed');
    }

    /** The flow starts a hop: look it up, then answer it or send it. */
    start(method: string, target: URL | Destination, given: EffectiveOptions, resendReason?: ResendReason): void {
        const previous = this.call;
        const options = given === this.validatedCopy ? this.validatedFrom! : given;
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
                this.toOrigin(call, entries, undefined, now);
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
            // What it found is shared with this process's waiters, when this call led them.
            this.coalescing?.end('shared', entry);
            const notModified =
                callerConditional && satisfiesCallerCondition(entry, ifNoneMatch, ifModifiedSince, parseHttpDate);
            answerStored(this.flow, this.pipeline, call, entry, judgement, notModified, now);
            if (judgement.suitability === 'stale-while-revalidate') {
                // After the answer: the call's hops are numbered as they start (the tracing channels' `number`
                // and `reason`), and the stale answer is the call's own hop, the revalidation one nobody waits for.
                revalidateInBackground(this.flow, this.pipeline, this.store, this.settings, call, entry);
            }

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
            this.forward(call, validators, now);
        } else {
            this.toOrigin(call, entries, validators, now);
        }
    }

    /**
     * Sends the call to the origin, coalesced with the calls for the same request when it may be
     * (coalescing.ts): it leads the fill and sends, or waits for the one under way, then looks again.
     * `now`: when the lookup was judged, the request's time if it is sent in this turn.
     */
    private toOrigin(call: CacheCall, entries: readonly CachedResponse[], validators: Validators, now: number): void {
        const coalescing = this.coalescing;
        if (coalescing === undefined || !coalescing.applies(call)) {
            this.forward(call, validators, now);
            return;
        }

        const turn = coalescing.join(call, entries);
        const lookup = this.lookups;
        if (turn instanceof Promise) {
            turn.then((taken) => this.took(call, validators, taken, lookup));
        } else if (turn.waited || turn.recheck || turn.shared !== undefined) {
            this.took(call, validators, turn, lookup);
        } else {
            // Known at once that it fetches (it leads, or the request is marked pass): in this turn of the loop.
            this.forward(call, validators, now);
        }
    }

    /**
     * The call goes on with its turn in the fill: one that waited is answered by what the fetch stored
     * (looked up again when it was another instance's), or goes on its own; one that took the store's
     * lock looks again before it fetches.
     */
    private took(call: CacheCall, validators: Validators, turn: JoinedTurn, lookup: number): void {
        const wanted = () => lookup === this.lookups && !this.flow.settled;
        const go = (found: readonly CachedResponse[] | undefined) => {
            if (!wanted()) {
                this.coalescing!.end('failed');
            } else {
                this.guard(() => (found === undefined ? this.forward(call, validators) : this.decide(call, found)));
            }
        };
        const shared = turn.shared;
        if ((turn.waited || turn.recheck) && wanted() && shared === undefined) {
            this.store.get(call.key).then(go);
        } else {
            go(shared === undefined ? undefined : [shared]);
        }
    }

    /**
     * Sends the call's request as a hop the layer owns, with `validators` added when given. `now`: the
     * request's time (RFC 9111 4.2.3), read once for the lookup and the sending in one turn.
     */
    private forward(call: CacheCall, validators: Validators, now = Date.now()): void {
        let options = call.options;
        if (validators !== undefined && hasFields(validators)) {
            // The fields copied, then the validators set on the copy: a second spread into one literal
            // went through the runtime, a property at a time.
            const headers = { ...options.headers };
            for (const name in validators) {
                headers[name] = validators[name]!;
            }

            options = { ...options, headers };
            this.validatedCopy = options;
            this.validatedFrom = call.options;
            call.validating = true;
        }

        call.requestTime = now;
        const hop = new Hop(this, call.method, options, this.pipeline, call.resendReason);
        this.coalescing?.sent(hop);
        this.flow.sendHop(hop, call.target);
    }
}

/** The conditional fields the layer adds to validate a stored response. */
type Validators = Readonly<Record<string, string>> | undefined;

function hasFields(fields: Readonly<Record<string, string>>): boolean {
    for (const _ in fields) {
        return true;
    }

    return false;
}

function header(value: string | number | readonly string[] | undefined): string | undefined {
    return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : String(value);
}
