import type { EventEmitter } from 'eventemitter3';
import type { HttpError } from '../../errors/index.js';
import { isHttpError } from '../../errors/index.js';
import { acceptEncodingOffer } from '../bodies/content-decoding.js';
import { isStream, type PreparedPayload } from '../bodies/payload.js';
import { PayloadReplay, streamReplayLimit } from '../bodies/payload-replay.js';
import type { BodyNotes, DeadlineLeft } from '../bodies/read.js';
import type { CachedFlow, CacheLayer } from '../cache/layer.js';
import { loadCacheLayer, loadedCacheLayer } from '../cache/load-layer.js';
import { cacheSettingsOf } from '../cache/settings.js';
import {
    aborted,
    badUpstream,
    clientFailure,
    invalidOption,
    requestError,
    requestTimeout
} from '../contract/errors.js';
import type {
    Agents,
    CacheOptions,
    ClientEvents,
    EffectiveOptions,
    HopRequest,
    HopResponse,
    RequestAndReadOptions,
    RequestPromise,
    ResendReason
} from '../contract/types.js';
import {
    checkHeaders,
    checkOptions,
    copyHeaders,
    mergeOptions,
    normalizeMethod,
    type StoredDefaults
} from '../options/options.js';
import { proxyConflict } from '../options/proxy.js';
import { observedPipeline, type Pipeline } from '../pipeline/pipeline.js';
import { cachedDestination, type Destination, resolveUri } from '../wire/destination.js';
import { type AnsweredHop, Hop } from '../wire/hop.js';
import { CallDeadline, type DeadlineOwner } from './deadline.js';
import { type RedirectHop, redirectMethodFor, redirectOptions, resolveRedirect } from './redirect.js';
import {
    attemptsOf,
    discardResponse,
    isRetryableError,
    type RetryPolicy,
    responseRetryDelay,
    retryPolicy,
    withAttempts
} from './retry.js';
import { type FailedHop, failedOnStaleConnection, staleResendReason } from './stale-connection.js';

/** What a request needs from its client. */
export interface ClientContext {
    readonly agents: Agents;
    readonly events?: EventEmitter<ClientEvents>;
}

/** How a request settles with its final response: `request()` resolves with it, the helpers read it first. */
export interface Finisher {
    /** True when the finisher reads the response's body before the caller can see the response. */
    readonly readsBody: boolean;
    /**
     * `deadline`: what is left of the call's `deadline`, for a finisher that goes on reading;
     * `bodyNotes`: the hop's timings, for a finisher that reads to tell how the reading ended (at once,
     * where the hop's own listeners, when it has them, would tell on a later tick).
     */
    finish(
        res: HopResponse,
        resolve: (value: unknown) => void,
        reject: (err: HttpError) => void,
        deadline: DeadlineLeft | undefined,
        bodyNotes: BodyNotes
    ): void;
}

/** The finisher of `request()`: the response, its body unread. */
export const resolveResponse: Finisher = {
    readsBody: false,
    finish(res, resolve) {
        resolve(res);
    }
};

/**
 * One call of `request()` or of a helper: validates, then runs one hop after another (hop.ts) — the
 * first request, each redirect, each retry — deciding after each what comes next, and settles the
 * promise exactly once. It owns what spans hops: the signal, the `timeout` timer, the `deadline`, the
 * stream payload's replay, the redirect trace, the retry count and the stale-connection re-sends.
 */
export class RequestFlow implements CachedFlow, DeadlineOwner {
    readonly promise: RequestPromise;
    readonly agents: Agents;
    readonly readsResponseBody: boolean;
    firstReq: HopRequest | undefined;
    redirectCount = 0;
    retryCount = 0;
    staleResends = 0;

    private resolve!: (value: unknown) => void;
    private reject!: (err: HttpError) => void;
    private isSettled = false;
    private signal: AbortSignal | undefined;
    // The pipeline this request reports to: the client's emitter, when it had listeners as the request began.
    private pipeline: Pipeline | undefined;
    // The hop under way, or the last one (ended) between hops.
    private hop: Hop | undefined;
    // The stream payload being sent, with the copy a 307/308 redirect or a retry re-sends.
    private replay: PayloadReplay | undefined;
    // `timeout` bounds each attempt with its redirects and beforeRedirect: armed by its first hop that
    // has a timeout, it runs on across redirects (each hop gets what is left); a retry re-arms it.
    private timer: NodeJS.Timeout | undefined;
    private timeoutMs = 0;
    // With the `retry` option: the policy and the wait before the next attempt.
    private retry: RetryPolicy | undefined;
    private retryTimer: NodeJS.Timeout | undefined;
    // The redirect responses so far: `data` of the errors that end the chain.
    private trace: RedirectHop[] | undefined;
    // With the `deadline` option: the bound on the whole call.
    private deadline: CallDeadline | undefined;
    // With the `cache` option: the layer every hop goes through (cache/layer.ts).
    private cache: CacheLayer | undefined;
    // What retriesResponse() decided for the response at hand, for its hop's report to act on.
    private responseRetry: { res: HopResponse; delay: number | undefined } | undefined;
    // A redirect's `redirected` callback, due once the next hop's request exists.
    private redirectedDue: (() => void) | undefined;

    /** True once the promise has settled (the cache layer checks before acting on a late store answer). */
    get settled(): boolean {
        return this.isSettled;
    }

    constructor(
        private readonly context: ClientContext,
        private readonly finisher: Finisher
    ) {
        this.agents = context.agents;
        this.readsResponseBody = finisher.readsBody;
        this.promise = new Promise<unknown>((resolve, reject) => {
            this.resolve = resolve;
            this.reject = reject;
        }) as RequestPromise;
    }

    /** Validates the call, then starts the first hop; any problem rejects the promise, nothing throws. */
    begin(
        method: unknown,
        uri: unknown,
        options: RequestAndReadOptions | undefined,
        defaults: StoredDefaults | undefined
    ): void {
        const normalizedMethod = normalizeMethod(method);
        const problem =
            (typeof normalizedMethod === 'string' ? undefined : normalizedMethod) ??
            (options === undefined || options === null
                ? undefined
                : typeof options === 'object'
                  ? checkOptions(options as Record<string, unknown>)
                  : invalidOption('Request options must be an object'));
        if (problem !== undefined) {
            this.fail(problem);
            return;
        }

        const merged = mergeOptions(defaults, options ?? undefined);
        if (merged.gunzip && merged.headers['accept-encoding'] === undefined) {
            // The caller will decode: offer what read() decodes here (@hapi/wreck offers gzip alone).
            merged.headers['accept-encoding'] = acceptEncodingOffer;
        }

        this.pipeline = observedPipeline(this.context.events);
        const target =
            typeof uri === 'string'
                ? cachedDestination(uri, merged.baseUrl ?? socketBaseFor(uri, merged.socketPath))
                : resolveUri(uri, merged.baseUrl);
        if (target instanceof Error) {
            this.fail(target);
            return;
        }

        const conflict =
            merged.agent && merged.rejectUnauthorized !== undefined
                ? invalidOption(
                      'Option agent cannot be combined with rejectUnauthorized: set rejectUnauthorized on the agent instead'
                  )
                : (checkHeaders(merged.headers) ?? proxyConflict(merged));
        if (conflict !== undefined) {
            this.fail(conflict);
            return;
        }

        const signal = merged.signal;
        if (signal !== undefined) {
            if (signal.aborted) {
                this.fail(aborted(signal, 'request'));
                return;
            }

            this.signal = signal;
            signal.addEventListener('abort', this);
        }

        if (merged.deadline) {
            this.deadline = new CallDeadline(merged.deadline, this);
        }

        this.retry = retryPolicy(merged.retry);
        if (merged.cache !== undefined && merged.cache !== false) {
            const Layer = loadedCacheLayer();
            if (Layer === undefined) {
                this.startOnceCacheLoaded(normalizedMethod as string, target, merged);
                return;
            }

            this.cache = new Layer(this, cacheSettingsOf(merged.cache), this.pipeline);
        }

        this.startHop(normalizedMethod as string, target, merged);
    }

    /** The process's first request with a cache: the cache layer's module loads, then the request starts, unless it was stopped meanwhile. */
    private startOnceCacheLoaded(method: string, target: URL | Destination, options: EffectiveOptions): void {
        loadCacheLayer().then(
            (Layer) => {
                if (this.isSettled) {
                    return;
                }

                try {
                    this.cache = new Layer(this, cacheSettingsOf(options.cache as true | CacheOptions), this.pipeline);
                    this.startHop(method, target, options);
                } catch (err) {
                    this.fail(clientFailure(`The request could not be started: ${(err as Error).message}`, err));
                }
            },
            (err: unknown) => this.fail(clientFailure('The cache could not be loaded', err))
        );
    }

    private startHop(
        method: string,
        target: URL | Destination,
        options: EffectiveOptions,
        resendReason?: ResendReason
    ): void {
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
        const redirectedDue = this.redirectedDue;
        if (redirectedDue !== undefined && hop.req !== undefined) {
            this.redirectedDue = undefined;
            redirectedDue();
        }
    }

    // The hop's side (HopOwner).

    streamFor(payload: PreparedPayload, options: EffectiveOptions): PayloadReplay | HttpError | undefined {
        const replay = this.replay;
        if (!isStream(payload)) {
            if (replay !== undefined) {
                // A redirect that drops the payload: the stream is no longer ours to read.
                replay.dispose();
                this.replay = undefined;
            }

            return undefined;
        }

        if (replay !== undefined && replay.source === payload) {
            return replay.replayProblem() ?? replay;
        }

        replay?.dispose();
        // A copy is kept only when a redirect or a retry may need to re-send the stream.
        const limit =
            (typeof options.redirects === 'number' && options.redirects > 0) || this.retry !== undefined
                ? streamReplayLimit
                : 0;
        const made = new PayloadReplay(payload, limit, (err) => this.interrupt(requestError(err)));
        this.replay = made;
        return made.replayProblem() ?? made;
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
        // A redirect answered from the cache has no request to tell `redirected` about.
        this.redirectedDue = undefined;
        const options = hop.options;
        const statusCode = res.statusCode as number;
        if (this.retry !== undefined && this.retryResponse(hop, res)) {
            return;
        }

        const redirectMethod =
            options.redirects === false || options.redirects === undefined
                ? null
                : redirectMethodFor(statusCode, hop.method, options);
        if (redirectMethod === null) {
            this.finish(res, hop.clock);
            return;
        }

        // The 3xx body is of no use; destroying it frees the socket rather than draining an unknown length.
        res.destroy();
        // The stream payload goes to the next hop, not to this finished one.
        this.replay?.detach();
        const from = hop.destination;
        // Only requests that redirect pay for the trace.
        this.trace ??= [];
        this.trace.push({ method: hop.method, url: from.href });
        if (options.redirects === 0) {
            this.fail(badUpstream('Maximum redirections reached', this.trace));
            return;
        }

        const target = resolveRedirect(from.href, res.headers.location, this.trace);
        if (!(target instanceof URL)) {
            this.fail(target);
            return;
        }

        const next = redirectOptions(options, redirectMethod, from.origin, target.origin);
        if (next.beforeRedirect === undefined) {
            this.redirect(redirectMethod, statusCode, target, next);
            return;
        }

        this.askBeforeRedirect(redirectMethod, statusCode, target, next, res);
    }

    hopFailed(hop: Hop, err: HttpError): void {
        if (this.resendStale(hop, err)) {
            return;
        }

        const retry = this.retry;
        if (retry !== undefined && this.canRetry(retry, hop) && isRetryableError(retry, err)) {
            const delay = retry.backoff(this.retryCount + 1);
            if (this.waitFits(delay)) {
                this.scheduleRetry(hop, delay);
                return;
            }
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

        if (this.retry !== undefined) {
            // While waiting for a retry, the retry counted is not yet an attempt made.
            withAttempts(err, this.retryTimer === undefined ? this.retryCount + 1 : this.retryCount);
        }

        this.settle();
        this.reject(err);
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
    private interrupt(err: HttpError): void {
        const hop = this.hop;
        if (hop === undefined || hop.ended) {
            this.fail(err);
        } else {
            hop.end(err, undefined);
        }
    }

    // Redirects.

    private askBeforeRedirect(
        redirectMethod: string,
        statusCode: number,
        target: URL,
        next: EffectiveOptions,
        res: HopResponse
    ): void {
        let called = false;
        const proceed = (err?: Error) => {
            if (called || this.isSettled) {
                return;
            }

            called = true;
            if (err) {
                this.fail(isHttpError(err) ? err : clientFailure(`Redirect stopped: ${err.message}`, err));
            } else {
                this.redirect(redirectMethod, statusCode, target, next);
            }
        };

        try {
            const result = next.beforeRedirect!(redirectMethod, statusCode, target.href, res.headers, next, proceed);
            if (result instanceof Promise) {
                result.catch(proceed);
            }
        } catch (err) {
            proceed(err instanceof Error ? err : new Error(String(err)));
        }
    }

    private redirect(method: string, statusCode: number, target: URL, next: EffectiveOptions): void {
        // beforeRedirect may have edited the options: hold them to the same rules as the caller's.
        next.headers = copyHeaders(undefined, next.headers);
        const problem = checkOptions(next as unknown as Record<string, unknown>) ?? checkHeaders(next.headers);
        if (problem !== undefined) {
            this.fail(problem);
            return;
        }

        this.redirectCount++;
        const redirected = next.redirected;
        this.redirectedDue =
            redirected === undefined
                ? undefined
                : () => {
                      if (this.isSettled) {
                          return;
                      }

                      try {
                          redirected(statusCode, target.href, this.hop!.req!);
                      } catch (err) {
                          this.interrupt(clientFailure('The redirected callback threw', err));
                      }
                  };
        this.startHop(method, target, next);
    }

    // Stale connections.

    /**
     * Sends the hop again, at once and outside the `retry` budget, when it failed on a kept-alive
     * connection the server had closed (stale-connection.ts); true when it will be. The pool's idle
     * connections older than that one are retired first, so the re-send does not land on another.
     */
    private resendStale(hop: Hop, err: HttpError): boolean {
        const failed: FailedHop = {
            err,
            method: hop.method,
            headers: hop.headers,
            reusedSocket: hop.reusedSocket,
            responseBytes: hop.responseBytes(),
            replayable: !isStream(hop.options.payload) || this.replay?.replayProblem() === undefined,
            resendReason: hop.resendReason
        };
        if (!failedOnStaleConnection(failed)) {
            return false;
        }

        hop.retireIdlePeers();
        const reason = staleResendReason(failed);
        if (reason === undefined || this.isSettled) {
            return false;
        }

        this.staleResends++;
        // After the failed request's own error handling: its socket leaves the pool first.
        process.nextTick(onResendDue, this, hop, reason);
        return true;
    }

    /** The re-send of a stale connection's hop, unless the request was settled (aborted) meanwhile. */
    resendNow(hop: Hop, reason: ResendReason): void {
        if (!this.isSettled) {
            this.startHop(hop.method, hop.destination, hop.options, reason);
        }
    }

    // Retries.

    /** True when one more attempt of `hop` is allowed: retries left, method, payload. */
    private canRetry(retry: RetryPolicy, hop: AnsweredHop): boolean {
        return (
            !this.isSettled &&
            this.retryCount < retry.limit &&
            retry.methods.has(hop.method) &&
            (!isStream(hop.options.payload) || this.replay?.replayProblem() === undefined)
        );
    }

    /**
     * True when the flow will retry `res` once its hop reports it: its status asks for it, the retry
     * budget, Retry-After and the deadline allow. The cache asks before it answers a 5xx with a stale
     * response (stale-if-error is for when nothing more will be tried). Decided once per response: the
     * backoff may be random, or the caller's function.
     */
    retriesResponse(hop: AnsweredHop, res: HopResponse): boolean {
        const delay = this.responseRetryWait(hop, res);
        this.responseRetry = { res, delay };
        return delay !== undefined;
    }

    /** The wait before `res` is retried, or undefined when it will not be. */
    private responseRetryWait(hop: AnsweredHop, res: HopResponse): number | undefined {
        const retry = this.retry;
        if (!retry?.statusCodes.has(res.statusCode as number) || !this.canRetry(retry, hop)) {
            return undefined;
        }

        const delay = responseRetryDelay(retry, res, this.retryCount + 1);
        return delay !== undefined && this.waitFits(delay) ? delay : undefined;
    }

    /** Retries the hop when its status asks for it (and Retry-After allows); true when it will be. */
    private retryResponse(hop: AnsweredHop, res: HopResponse): boolean {
        const decided = this.responseRetry;
        this.responseRetry = undefined;
        const delay = decided?.res === res ? decided.delay : this.responseRetryWait(hop, res);
        if (delay === undefined) {
            return false;
        }

        discardResponse(res);
        this.replay?.detach();
        this.scheduleRetry(hop, delay);
        return true;
    }

    /** No retry starts whose wait alone would take it past the call's `deadline`. */
    private waitFits(delay: number): boolean {
        return this.deadline === undefined || this.deadline.allows(delay);
    }

    /**
     * Waits, then runs `hop` again as a new hop. No timer runs during the wait: the next attempt arms
     * the `timeout` anew. An abort during the wait fails the request at once (no hop is under way).
     */
    private scheduleRetry(hop: AnsweredHop, delay: number): void {
        this.retryCount++;
        clearTimeout(this.timer);
        this.timer = undefined;
        this.retryTimer = setTimeout(onRetryDue, delay, this, hop);
    }

    /** The wait is over: the next attempt, to the same URL, with the method and options the last one had. */
    retryNow(hop: AnsweredHop): void {
        this.retryTimer = undefined;
        this.startHop(hop.method, hop.destination, hop.options);
    }

    // The end.

    private finish(res: HopResponse, bodyNotes: BodyNotes): void {
        if (this.retry !== undefined) {
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
        clearTimeout(this.retryTimer);
        this.deadline?.stop();
        this.signal?.removeEventListener('abort', this);
        // A send under way carries on to its end; only the copy and the error listener go.
        this.replay?.dispose();
    }
}

/**
 * Over a UNIX socket the URI may be a path alone (`/containers/json`, as for the Docker API): it is
 * then read against `http://localhost`, which is also the `host` header sent.
 */
function socketBaseFor(uri: string, socketPath: string | undefined): string | undefined {
    return socketPath !== undefined && uri.charCodeAt(0) === 47 ? 'http://localhost' : undefined;
}

function onResendDue(flow: RequestFlow, hop: Hop, reason: ResendReason): void {
    flow.resendNow(hop, reason);
}

function onRetryDue(flow: RequestFlow, hop: AnsweredHop): void {
    flow.retryNow(hop);
}

function onTimeout(flow: RequestFlow): void {
    flow.timeout();
}
