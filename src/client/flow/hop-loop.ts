import type { HttpError } from '../../errors/index.js';
import { isStream, type PreparedPayload } from '../bodies/payload.js';
import type { PayloadReplay } from '../bodies/payload-replay.js';
import type { BodyNotes } from '../bodies/read.js';
import type { CachedFlow } from '../cache/cache-call.js';
import type { CacheLayer } from '../cache/layer.js';
import { aborted, requestError, requestTimeout } from '../contract/errors.js';
import type {
    Agents,
    EffectiveOptions,
    HopRequest,
    HopResponse,
    RequestPromise,
    ResendReason
} from '../contract/types.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { CallTrace } from '../pipeline/tracing.js';
import type { Destination } from '../wire/destination.js';
import { type AnsweredHop, Hop } from '../wire/hop.js';
import type { CallDeadline, DeadlineOwner } from './deadline.js';
import type { Finisher } from './finisher.js';
import { redirectMethodFor } from './redirect.js';
import { RedirectChain, type RedirectingFlow } from './redirects.js';
import type { Retries, RetryingFlow } from './retries.js';
import { attemptsOf, discardResponse, withAttempts } from './retry.js';
import { type ResendingFlow, resendIfStale } from './stale-resend.js';
import { StreamPayload } from './stream-payload.js';

/**
 * The hops of one call (request-flow.ts sets the call up and starts the first): one hop after another
 * (wire/hop.ts) — the first request, each redirect (redirects.ts), each retry (retries.ts), a stale
 * connection's re-send (stale-resend.ts) — deciding after each what comes next, and the promise settled
 * exactly once. It owns what spans hops: the signal, the `timeout` timer, the `deadline` and the stream
 * payload (stream-payload.ts); anything that stops the call from outside the wire goes through `interrupt()`.
 */
export abstract class HopLoop implements CachedFlow, DeadlineOwner, RedirectingFlow, RetryingFlow, ResendingFlow {
    readonly promise: RequestPromise;
    readonly agents: Agents;
    readonly readsResponseBody: boolean;
    firstReq: HopRequest | undefined;
    redirectCount = 0;
    retryCount = 0;
    staleResends = 0;

    // What the call's set-up (request-flow.ts) gives the loop: the pipeline it reports to (the client's
    // emitter, when it had listeners as the call began), the caller's signal, the `deadline`, the `retry`
    // option at work, and the cache layer every hop goes through (cache/layer.ts).
    protected pipeline: Pipeline | undefined;
    protected signal: AbortSignal | undefined;
    protected deadline: CallDeadline | undefined;
    protected retries: Retries | undefined;
    protected cache: CacheLayer | undefined;

    private resolve!: (value: unknown) => void;
    private reject!: (err: HttpError) => void;
    private isSettled = false;
    private readonly finisher: Finisher;
    // The hop under way, or the last one (ended) between hops.
    private hop: Hop | undefined;
    // The stream payload being sent, with the copy a 307/308 redirect or a retry re-sends.
    private stream: StreamPayload | undefined;
    // `timeout` bounds each attempt with its redirects and beforeRedirect: armed by its first hop that
    // has a timeout, it runs on across redirects (each hop gets what is left); a retry re-arms it.
    private timer: NodeJS.Timeout | undefined;
    private timeoutMs = 0;
    // Made with the first redirect followed.
    private redirects: RedirectChain | undefined;

    /** True once the promise has settled (the cache layer checks before acting on a late store answer). */
    get settled(): boolean {
        return this.isSettled;
    }

    /** The request of the hop under way, once it exists. */
    get currentRequest(): HopRequest | undefined {
        return this.hop?.req;
    }

    constructor(agents: Agents, finisher: Finisher) {
        this.agents = agents;
        this.finisher = finisher;
        this.readsResponseBody = finisher.readsBody;
        this.promise = new Promise<unknown>((resolve, reject) => {
            this.resolve = resolve;
            this.reject = reject;
        }) as RequestPromise;
    }

    startHop(method: string, target: URL | Destination, options: EffectiveOptions, resendReason?: ResendReason): void {
        if (this.cache === undefined) {
            this.sendHop(new Hop(this, method, options, this.pipeline, resendReason), target);
        } else {
            // The cache answers the hop, or sends it (through sendHop) once it has looked.
            this.cache.start(method, target, options, resendReason);
        }
    }

    /** Sends a hop: this flow's own, or one its cache layer made. */
    sendHop(hop: Hop, target: URL | Destination): void {
        this.hop = hop;
        hop.send(target);
        this.redirects?.hopSent();
    }

    // The hop's side (HopOwner).

    streamFor(payload: PreparedPayload, options: EffectiveOptions): PayloadReplay | HttpError | undefined {
        if (this.stream === undefined) {
            if (!isStream(payload)) {
                return undefined;
            }

            this.stream = new StreamPayload(this.retries !== undefined, (err) => this.interrupt(requestError(err)));
        }

        return this.stream.for(payload, options);
    }

    requestCreated(req: HopRequest, options: EffectiveOptions): void {
        this.firstReq ??= req;
        if (options.timeout && this.timer === undefined) {
            // After preRequest, which may set it.
            this.timeoutMs = options.timeout;
            this.timer = setTimeout(onTimeout, options.timeout, this);
        }
    }

    hopResponded(hop: AnsweredHop, res: HopResponse): void {
        this.redirects?.hopAnswered();
        if (this.retries?.responseRetried(hop, res) === true) {
            return;
        }

        const options = hop.options;
        const redirectMethod =
            options.redirects === false || options.redirects === undefined
                ? null
                : redirectMethodFor(res.statusCode as number, hop.method, options);
        if (redirectMethod === null) {
            this.finish(res, hop.clock);
            return;
        }

        // The 3xx body is of no use to the caller, but a small one of declared length is read to its end:
        // its connection then serves the next hop, and a cache storing the 3xx (a 301 with a lifetime)
        // gets it whole. Any other is destroyed rather than drained.
        discardResponse(res);
        // The stream payload goes to the next hop, not to this finished one.
        this.stream?.detach();
        this.redirects ??= new RedirectChain(this);
        this.redirects.follow(hop, res, redirectMethod);
    }

    hopFailed(hop: Hop, err: HttpError): void {
        if (resendIfStale(this, hop, err) || this.retries?.failureRetried(hop, err) === true) {
            return;
        }

        // Nothing more to try on the wire: the cache may still answer with a stale response (stale-if-error).
        if (this.cache?.answersFailure(hop, err) !== true) {
            this.fail(err);
        }
    }

    fail(err: HttpError): void {
        if (this.isSettled) {
            return;
        }

        const retries = this.retries;
        if (retries !== undefined) {
            // While waiting for a retry, the retry counted is not yet an attempt made.
            withAttempts(err, retries.waiting ? this.retryCount : this.retryCount + 1);
        }

        this.settle();
        this.reject(err);
    }

    /** The call is traced: its promise settles inside the call's `asyncStart` (pipeline/tracing.ts). */
    settleThrough(tracing: CallTrace): void {
        const { resolve, reject } = this;
        this.resolve = (value) => tracing.resolved(value, resolve);
        this.reject = (err) => tracing.rejected(err, reject);
    }

    // What the cache layer, the redirects and the retries ask of the flow.

    retriesResponse(hop: AnsweredHop, res: HopResponse): boolean {
        return this.retries?.retriesResponse(hop, res) === true;
    }

    canResend(hop: AnsweredHop): boolean {
        return !isStream(hop.options.payload) || this.stream?.replayable() !== false;
    }

    waitFits(delay: number): boolean {
        return this.deadline === undefined || this.deadline.allows(delay);
    }

    retryWaitBegins(): void {
        clearTimeout(this.timer);
        this.timer = undefined;
    }

    detachPayload(): void {
        this.stream?.detach();
    }

    // What stops the request from outside the wire.

    /** The AbortSignal listener (an object listener, so no closure per request). */
    handleEvent(): void {
        this.interrupt(aborted(this.signal!, 'request'));
    }

    /** The request `timeout` elapsed before the response headers of the last hop arrived. */
    timeout(): void {
        this.interrupt(requestTimeout(this.timeoutMs));
    }

    /** The call's `deadline` passed: whatever is under way stops, and nothing more is tried. */
    deadlinePassed(err: HttpError): void {
        this.interrupt(err);
    }

    /** Ends the hop under way with `err`; between hops (beforeRedirect, a retry's wait), fails the request. */
    interrupt(err: HttpError): void {
        const hop = this.hop;
        if (hop === undefined || hop.ended) {
            this.fail(err);
        } else {
            hop.end(err, undefined);
        }
    }

    // The end.

    private finish(res: HopResponse, bodyNotes: BodyNotes): void {
        if (this.retries !== undefined) {
            attemptsOf.set(res, this.retryCount + 1);
        }

        // The helpers read the body within what is left of the deadline.
        const deadline = this.deadline?.handOver();
        this.settle();
        this.finisher.finish(res, this.resolve, this.reject, deadline, bodyNotes);
    }

    private settle(): void {
        this.isSettled = true;
        clearTimeout(this.timer);
        this.retries?.stop();
        this.deadline?.stop();
        this.signal?.removeEventListener('abort', this);
        this.stream?.dispose();
        // A fill of the cache this call still leads ends: its waiters go on (request coalescing).
        this.cache?.callSettled();
    }
}

function onTimeout(flow: HopLoop): void {
    flow.timeout();
}
