import type { HttpError } from '../../errors/index.js';
import type { EffectiveOptions, HopResponse } from '../contract/types.js';
import type { Destination } from '../wire/destination.js';
import type { AnsweredHop } from '../wire/hop.js';
import { discardResponse, isRetryableError, type RetryPolicy, responseRetryDelay } from './retry.js';

/** What retrying needs of the call's flow (hop-loop.ts). */
export interface RetryingFlow {
    readonly settled: boolean;
    retryCount: number;
    /** True when the hop's payload (none, a string, a Buffer, or a stream with its copy) can be sent again. */
    canResend(hop: AnsweredHop): boolean;
    /** True when a wait of `delay` ms leaves time for the attempt after it, within the call's `deadline`. */
    waitFits(delay: number): boolean;
    /** A retry's wait begins (`retryCount` counts it already): no attempt timer runs during it. */
    retryWaitBegins(): void;
    /** The stream payload goes to the next attempt, not to the one whose response is discarded. */
    detachPayload(): void;
    startHop(method: string, target: URL | Destination, options: EffectiveOptions): void;
}

/**
 * The `retry` option of one call at work (README "Retries"): after each failed attempt, whether and
 * when it is tried again, as the pure policy of retry.ts says; each retry is a new hop. Made only for
 * a call with the option.
 */
export class Retries {
    private timer: NodeJS.Timeout | undefined;
    // What retriesResponse() decided for the response at hand, for its hop's report to act on.
    private decided: { res: HopResponse; delay: number | undefined } | undefined;

    constructor(
        readonly policy: RetryPolicy,
        private readonly flow: RetryingFlow
    ) {}

    /** True while waiting for a retry: the retry counted is not yet an attempt made. */
    get waiting(): boolean {
        return this.timer !== undefined;
    }

    /** Retries the hop that failed with `err` when the policy allows; true when it will be. */
    failureRetried(hop: AnsweredHop, err: HttpError): boolean {
        const policy = this.policy;
        if (!this.canRetry(hop) || !isRetryableError(policy, err)) {
            return false;
        }

        const delay = policy.backoff(this.flow.retryCount + 1);
        if (!this.flow.waitFits(delay)) {
            return false;
        }

        this.schedule(hop, delay);
        return true;
    }

    /**
     * True when the flow will retry `res` once its hop reports it: its status asks for it, the retry
     * budget, Retry-After and the deadline allow. The cache asks before it answers a 5xx with a stale
     * response (stale-if-error is for when nothing more will be tried). Decided once per response: the
     * backoff may be random, or the caller's function.
     */
    retriesResponse(hop: AnsweredHop, res: HopResponse): boolean {
        const delay = this.responseRetryWait(hop, res);
        this.decided = { res, delay };
        return delay !== undefined;
    }

    /** Retries the hop when its status asks for it (and Retry-After allows); true when it will be. */
    responseRetried(hop: AnsweredHop, res: HopResponse): boolean {
        const decided = this.decided;
        this.decided = undefined;
        const delay = decided?.res === res ? decided.delay : this.responseRetryWait(hop, res);
        if (delay === undefined) {
            return false;
        }

        discardResponse(res);
        this.flow.detachPayload();
        this.schedule(hop, delay);
        return true;
    }

    /** The wait is over: the next attempt, to the same URL, with the method and options the last one had. */
    retryNow(hop: AnsweredHop): void {
        this.timer = undefined;
        this.flow.startHop(hop.method, hop.destination, hop.options);
    }

    stop(): void {
        clearTimeout(this.timer);
    }

    /** True when one more attempt of `hop` is allowed: retries left, method, payload. */
    private canRetry(hop: AnsweredHop): boolean {
        const flow = this.flow;
        return (
            !flow.settled &&
            flow.retryCount < this.policy.limit &&
            this.policy.methods.has(hop.method) &&
            flow.canResend(hop)
        );
    }

    /** The wait before `res` is retried, or undefined when it will not be. */
    private responseRetryWait(hop: AnsweredHop, res: HopResponse): number | undefined {
        if (!this.policy.statusCodes.has(res.statusCode as number) || !this.canRetry(hop)) {
            return undefined;
        }

        const delay = responseRetryDelay(this.policy, res, this.flow.retryCount + 1);
        return delay !== undefined && this.flow.waitFits(delay) ? delay : undefined;
    }

    /**
     * Waits, then runs `hop` again as a new hop. No timer runs during the wait: the next attempt arms
     * the `timeout` anew. An abort during the wait fails the request at once (no hop is under way).
     */
    private schedule(hop: AnsweredHop, delay: number): void {
        this.flow.retryCount++;
        this.flow.retryWaitBegins();
        this.timer = setTimeout(onRetryDue, delay, this, hop);
    }
}

function onRetryDue(retries: Retries, hop: AnsweredHop): void {
    retries.retryNow(hop);
}
