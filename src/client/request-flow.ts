import type { ClientRequest, IncomingMessage, RequestOptions as NodeRequestOptions } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import type { EventEmitter } from 'eventemitter3';
import type { HttpError } from '../errors/index.js';
import { isHttpError } from '../errors/index.js';
import { cachedDestination, type Destination, destinationOf, resolveUri } from './destination.js';
import { aborted, badUpstream, clientFailure, invalidOption, requestError, requestTimeout } from './errors.js';
import { HelperRead } from './helper-read.js';
import { noteKeepAlive, retireIdleSockets } from './keep-alive.js';
import {
    checkHeaders,
    checkOptions,
    copyHeaders,
    mergeOptions,
    normalizeMethod,
    readOptionsOver,
    type StoredDefaults
} from './options.js';
import { isStream, preparePayload } from './payload.js';
import { PayloadReplay, streamReplayLimit } from './payload-replay.js';
import {
    type ProxyRoute,
    proxyConflict,
    proxyRefusal,
    proxyRequestError,
    routeThroughProxy,
    usesProxy,
    watchProxy
} from './proxy.js';
import { readCheckedPayload } from './read.js';
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
import { type ResendReason, staleResendReason, trackReusedSocket } from './stale-connection.js';
import type {
    Agents,
    ClientEvents,
    EffectiveOptions,
    RequestAndReadOptions,
    RequestPromise,
    RequestUri
} from './types.js';

/**
 * Marks the options handed to `http(s).request()` so `@opentelemetry/instrumentation-http` can skip
 * our requests (`ignoreOutgoingRequestHook`): the client's own events already make their span.
 */
export const clientRequestMarker = Symbol.for('tracewire.client');

/** What a request needs from its client. */
export interface ClientContext {
    readonly agents: Agents;
    readonly events?: EventEmitter<ClientEvents>;
}

/**
 * The emitter a new request reports to. An emitter without a pipeline listener counts as none, so
 * `events: true` costs nothing until something subscribes. The choice holds for the whole request:
 * a listener added while a request is under way sees the requests that start after it, never half
 * of one (a `response` without its `preRequest`).
 */
function observedEmitter(events: EventEmitter<ClientEvents> | undefined): EventEmitter<ClientEvents> | undefined {
    if (
        events === undefined ||
        (events.listenerCount('preRequest') === 0 &&
            events.listenerCount('request') === 0 &&
            events.listenerCount('response') === 0)
    ) {
        return undefined;
    }

    return events;
}

// The request's flow rides on the ClientRequest so the listeners below can be shared functions
// rather than closures made for every request.
const flowOf = Symbol('tracewire.requestFlow');
type FlowRequest = ClientRequest & { [flowOf]: RequestFlow };

/**
 * One call of `request()`: validates, then runs one hop per URL (the first request and each
 * redirect) through the event pipeline, and settles the promise exactly once.
 */
export class RequestFlow {
    readonly promise: RequestPromise;
    firstReq: ClientRequest | undefined;

    private resolve!: (value: unknown) => void;
    private reject!: (err: HttpError) => void;
    private settled = false;
    private signal: AbortSignal | undefined;
    // The stream payload being sent, with the copy a 307/308 redirect re-sends.
    private replay: PayloadReplay | undefined;

    // The current hop.
    private req: ClientRequest | undefined;
    private destination!: Destination;
    // The emitter this request reports to: the client's, when it had pipeline listeners as the request began.
    private events: EventEmitter<ClientEvents> | undefined;
    // The hop's URL as the listeners see it; only with events.
    private uri: RequestUri | undefined;
    private method = '';
    private options!: EffectiveOptions;
    private start = 0;
    // The caller's `timeout` bounds this whole request, redirects and beforeRedirect included: one
    // timer per flow (not per hop), so each hop gets what is left of it. A caller that runs several
    // flows (retries) gives each its own.
    private timer: NodeJS.Timeout | undefined;
    private timeoutMs = 0;
    private hopEnded = true;
    private redirectCount = 0;
    // The proxy the current hop goes through, if any.
    private proxy: ProxyRoute | undefined;
    // With the `retry` option: the policy, the retries made so far and the wait before the next one.
    private retry: RetryPolicy | undefined;
    private retryCount = 0;
    private retryTimer: NodeJS.Timeout | undefined;
    // Why the current hop re-sends the one before it (a stale kept-alive connection), and how many such re-sends so far.
    private resendReason: ResendReason | undefined;
    private staleResends = 0;
    // The redirect responses so far: `data` of the errors that end the chain.
    private trace: RedirectHop[] | undefined;
    // The client's defaults and the caller's options, as given: with `readsPayload`, the read options of the final response.
    private defaults: StoredDefaults | undefined;
    private callerOptions: RequestAndReadOptions | undefined;

    /**
     * `readsPayload`: the flow of a per-method helper, which reads the final response and settles
     * with `{ res, payload }` (or the error status) rather than with the response.
     */
    constructor(
        private readonly context: ClientContext,
        private readonly readsPayload = false
    ) {
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

        this.defaults = defaults;
        this.callerOptions = options;
        const merged = mergeOptions(defaults, options ?? undefined);
        if (merged.gunzip && merged.headers['accept-encoding'] === undefined) {
            // The caller will decode: say so, as @hapi/wreck does (gzip, the one coding every server has).
            merged.headers['accept-encoding'] = 'gzip';
        }

        this.events = observedEmitter(this.context.events);
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

        this.retry = retryPolicy(merged.retry);
        this.startHop(normalizedMethod as string, target, merged);
    }

    /** The AbortSignal listener (an object listener, so no closure per request). */
    handleEvent(): void {
        const err = aborted(this.signal!, 'request');
        if (this.hopEnded) {
            // Between hops (in beforeRedirect): no hop to report.
            this.fail(err);
        } else if (this.req === undefined) {
            // From a preRequest listener: the hop began but no request exists to cancel.
            this.abandonHop(err);
        } else {
            this.failHop(err);
        }
    }

    /** One request: `target` is a URL (a `URL` argument, a redirect) or the cached destination of a string URI. */
    private startHop(method: string, target: URL | Destination, options: EffectiveOptions): void {
        // GET and HEAD carry no body (as with @hapi/wreck): a payload given for them is not sent.
        let payload = bodyless(method) ? undefined : preparePayload(options.payload, options.headers);
        let headers = options.headers;
        const events = this.events;
        this.method = method;
        this.options = options;
        this.hopEnded = false;
        this.req = undefined;
        let req: ClientRequest;
        try {
            let destination: Destination;
            if (events === undefined) {
                destination = target instanceof URL ? destinationOf(target) : target;
            } else {
                this.start = Date.now();
                const uri = (target instanceof URL ? target : new URL(target.href)) as RequestUri;
                uri.method = method;
                uri.headers = headers;
                uri.redirectCount = this.redirectCount;
                uri.retryCount = this.retryCount;
                uri.staleResends = this.staleResends;
                uri.resendReason = this.resendReason;
                this.uri = uri;
                const givenPayload = options.payload;
                events.emit('preRequest', uri, options);
                if (this.settled) {
                    // A listener aborted the signal: nothing to send.
                    return;
                }

                // Listeners may have changed anything: read it all back.
                method = uri.method;
                headers = uri.headers;
                this.method = method;
                if (options.payload !== givenPayload) {
                    // The length described the old body.
                    delete headers['content-length'];
                    payload = bodyless(method) ? undefined : preparePayload(options.payload, headers);
                }

                // Listeners rarely touch the URL: when its href is unchanged, so is the destination made from it.
                destination = !(target instanceof URL) && uri.href === target.href ? target : destinationOf(uri);
            }

            if (isStream(payload)) {
                const problem = this.replayFor(payload, options).replayProblem();
                if (problem !== undefined) {
                    this.abandonHop(problem);
                    return;
                }
            } else if (this.replay !== undefined) {
                // A redirect that drops the payload: the stream is no longer ours to read.
                this.replay.dispose();
                this.replay = undefined;
            }

            this.destination = destination;
            const nodeOptions = toNodeOptions(destination, method, headers, options, this.context.agents);
            // Each hop decides anew: a redirect may lead to a host NO_PROXY exempts, or the other way round.
            const route = usesProxy(options.proxy)
                ? routeThroughProxy(nodeOptions, destination, options.proxy as string | URL | true, this.context.agents)
                : undefined;
            if (route instanceof Error) {
                this.abandonHop(route);
                return;
            }

            this.proxy = route;
            if (typeof nodeOptions.agent === 'object') {
                retireIdleSockets(nodeOptions.agent);
            }

            req = destination.isHttps ? httpsRequest(nodeOptions) : httpRequest(nodeOptions);
        } catch (err) {
            // Only reachable when a preRequest listener threw or made the request impossible (e.g. a
            // header Node refuses): the hop began, so it still gets its response event, without a request.
            this.abandonHop(clientFailure(`Request could not be created: ${(err as Error).message}`, err));
            return;
        }

        (req as FlowRequest)[flowOf] = this;
        this.req = req;
        this.firstReq ??= req;
        if (this.proxy !== undefined) {
            watchProxy(req, this.proxy);
        }

        req.on('response', onResponse);
        req.on('error', onRequestError);
        req.on('close', onRequestClose);
        trackReusedSocket(req);
        if (options.timeout && this.timer === undefined) {
            // Armed by the first hop with a timeout (after preRequest, which may set it), then left running.
            this.timeoutMs = options.timeout;
            this.timer = setTimeout(onTimeout, options.timeout, this);
        }

        if (events !== undefined) {
            try {
                events.emit('request', req);
            } catch (err) {
                this.failHop(clientFailure(`A request event listener threw: ${(err as Error).message}`, err));
                return;
            }
        }

        if (isStream(payload)) {
            // Not a byte is read before the connection exists: a request that cannot connect leaves the stream whole.
            whenConnected(req, sendStreamPayload);
        } else {
            req.end(payload);
        }
    }

    /**
     * The replay of the stream payload of the hop about to start, made when the stream is new. It
     * keeps a copy only when redirects may need to re-send it.
     */
    private replayFor(payload: Readable, options: EffectiveOptions): PayloadReplay {
        const replay = this.replay;
        if (replay !== undefined && replay.source === payload) {
            return replay;
        }

        replay?.dispose();
        const limit =
            (typeof options.redirects === 'number' && options.redirects > 0) || this.retry !== undefined
                ? streamReplayLimit
                : 0;
        this.replay = new PayloadReplay(payload, limit, (err) => this.payloadFailed(err));
        return this.replay;
    }

    /** The hop's request is connected: send the stream payload into it. */
    sendPayload(req: ClientRequest): void {
        if (this.isCurrent(req)) {
            this.replay!.sendTo(req);
        }
    }

    /** The stream payload failed: the request fails with that error, whether a hop is under way or not. */
    private payloadFailed(err: Error): void {
        const failure = requestError(err);
        if (this.hopEnded || this.req === undefined) {
            this.fail(failure);
        } else {
            this.failHop(failure);
        }
    }

    /** A response arrived for the current hop: report it, then follow it or hand it to the caller. */
    handleResponse(req: ClientRequest, res: IncomingMessage): void {
        if (!this.isCurrent(req)) {
            // A response racing an abort or a timeout that already settled this hop.
            res.destroy();
            return;
        }

        noteKeepAlive(res);
        const refusal = this.proxy === undefined ? undefined : proxyRefusal(this.proxy, res);
        if (refusal !== undefined) {
            res.destroy();
            this.failHop(refusal);
            return;
        }

        const listenerFailure = this.endHop(undefined, res);
        if (listenerFailure !== undefined) {
            res.destroy();
            this.fail(listenerFailure);
            return;
        }

        const options = this.options;
        const statusCode = res.statusCode as number;
        if (this.retry !== undefined && this.retryResponse(this.retry, res)) {
            return;
        }

        const redirectMethod =
            options.redirects === false || options.redirects === undefined
                ? null
                : redirectMethodFor(statusCode, this.method, options);
        if (redirectMethod === null) {
            this.finish(res);
            return;
        }

        // The 3xx body is of no use; destroying it frees the socket rather than draining an unknown length.
        res.destroy();
        // The stream payload goes to the next hop, not to this finished one.
        this.replay?.detach();
        const from = this.destination;
        // Only requests that redirect pay for the trace.
        this.trace ??= [];
        this.trace.push({ method: this.method, url: from.href });
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

    private askBeforeRedirect(
        redirectMethod: string,
        statusCode: number,
        target: URL,
        next: EffectiveOptions,
        res: IncomingMessage
    ): void {
        let called = false;
        const proceed = (err?: Error) => {
            if (called || this.settled) {
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
        this.resendReason = undefined;
        this.startHop(method, target, next);
        if (this.settled || next.redirected === undefined) {
            return;
        }

        try {
            next.redirected(statusCode, target.href, this.req!);
        } catch (err) {
            this.failHop(clientFailure('The redirected callback threw', err));
        }
    }

    /**
     * Ends the current hop: emits its one `response` event. A throwing listener
     * must not crash the process from inside a socket callback: its error is returned to fail the request.
     */
    private endHop(err: HttpError | undefined, res: IncomingMessage | undefined): HttpError | undefined {
        this.hopEnded = true;
        const events = this.events;
        if (events === undefined) {
            return undefined;
        }

        try {
            events.emit('response', err, { req: this.req, res, start: this.start, uri: this.uri! });
        } catch (listenerErr) {
            return clientFailure(`A response event listener threw: ${(listenerErr as Error).message}`, listenerErr);
        }

        return undefined;
    }

    /** The current hop failed before its request existed: report it (listeners saw its preRequest), reject. */
    private abandonHop(err: HttpError): void {
        this.fail(this.endHop(err, undefined) ?? err);
    }

    /** The current hop failed before a response: cancel it, report it, reject. */
    failHop(err: HttpError): void {
        this.endHop(err, undefined);
        this.replay?.detach();
        this.req!.destroy();
        if (this.resendStale(err)) {
            return;
        }

        const retry = this.retry;
        if (retry === undefined || !this.canRetry(retry) || !isRetryableError(retry, err)) {
            this.fail(err);
            return;
        }

        this.scheduleRetry(retry.backoff(this.retryCount + 1));
    }

    /**
     * Sends the hop again, at once and outside the `retry` budget, when it failed on a kept-alive
     * connection the server had closed (see stale-connection.ts); true when it will be.
     */
    private resendStale(err: HttpError): boolean {
        const reason = staleResendReason({
            req: this.req!,
            err,
            method: this.method,
            replayable: !isStream(this.options.payload) || this.replay?.replayProblem() === undefined,
            resent: this.resendReason !== undefined
        });
        if (reason === undefined || this.settled) {
            return false;
        }

        this.staleResends++;
        this.resendReason = reason;
        // After the failed request's own error handling: its socket leaves the pool first.
        process.nextTick(onResendDue, this);
        return true;
    }

    /** The re-send of a stale connection's hop, unless the request was settled (aborted) meanwhile. */
    resendNow(): void {
        if (!this.settled) {
            this.startHop(this.method, this.destination, this.options);
        }
    }

    /** True when one more attempt of the current hop is allowed: retries left, method, payload. */
    private canRetry(retry: RetryPolicy): boolean {
        return (
            !this.settled &&
            this.retryCount < retry.limit &&
            retry.methods.has(this.method) &&
            (!isStream(this.options.payload) || this.replay?.replayProblem() === undefined)
        );
    }

    /** Retries the hop when its status asks for it (and Retry-After allows); true when it will be. */
    private retryResponse(retry: RetryPolicy, res: IncomingMessage): boolean {
        if (!retry.statusCodes.has(res.statusCode as number) || !this.canRetry(retry)) {
            return false;
        }

        const delay = responseRetryDelay(retry, res, this.retryCount + 1);
        if (delay === undefined) {
            return false;
        }

        discardResponse(res);
        this.replay?.detach();
        this.scheduleRetry(delay);
        return true;
    }

    /**
     * Waits, then runs the current hop again as a new hop. The `timeout` bounds each attempt: the
     * next one arms it anew. An abort during the wait fails the request at once (no hop is under way).
     */
    private scheduleRetry(delay: number): void {
        this.retryCount++;
        clearTimeout(this.timer);
        this.timer = undefined;
        this.retryTimer = setTimeout(onRetryDue, delay, this);
    }

    /** The wait is over: the next attempt, to the URL, with the method and options the last one had. */
    retryNow(): void {
        this.retryTimer = undefined;
        this.resendReason = undefined;
        this.startHop(this.method, this.destination, this.options);
    }

    private finish(res: IncomingMessage): void {
        if (this.retry !== undefined) {
            attemptsOf.set(res, this.retryCount + 1);
        }

        this.settle();
        if (!this.readsPayload) {
            this.resolve(res);
            return;
        }

        try {
            readCheckedPayload(
                res,
                // The caller's read options, not the request's effective ones that listeners and redirects may have edited.
                readOptionsOver(this.defaults, this.callerOptions),
                (res.statusCode as number) >= 400,
                new HelperRead(res, this.resolve, this.reject)
            );
        } catch (err) {
            res.destroy();
            this.reject(clientFailure(`The response could not be read: ${(err as Error).message}`, err));
        }
    }

    private fail(err: HttpError): void {
        if (this.settled) {
            return;
        }

        if (this.retry !== undefined) {
            // While waiting for a retry, the retry counted is not yet an attempt made.
            withAttempts(err, this.retryTimer === undefined ? this.retryCount + 1 : this.retryCount);
        }

        this.settle();
        this.reject(err);
    }

    private settle(): void {
        this.settled = true;
        clearTimeout(this.timer);
        clearTimeout(this.retryTimer);
        this.signal?.removeEventListener('abort', this);
        // A send under way carries on to its end; only the copy and the error listener go.
        this.replay?.dispose();
    }

    /** True while `req` is the request of a hop still waiting for its response. */
    isCurrent(req: ClientRequest): boolean {
        return req === this.req && !this.hopEnded;
    }

    /** The 502 of a network error of the current hop, naming its proxy when that could not be reached. */
    networkError(err: Error): HttpError {
        return this.proxy === undefined ? requestError(err) : proxyRequestError(this.proxy, err);
    }

    /** The request `timeout` elapsed before the response headers of the last hop arrived. */
    timeout(): void {
        const err = requestTimeout(this.timeoutMs);
        if (this.hopEnded) {
            // Between hops (waiting for beforeRedirect): no hop to report.
            this.fail(err);
        } else {
            this.failHop(err);
        }
    }
}

function onResponse(this: FlowRequest, res: IncomingMessage): void {
    this[flowOf].handleResponse(this, res);
}

function onRequestError(this: FlowRequest, err: Error): void {
    const flow = this[flowOf];
    // Errors after the hop ended (the destroy that follows a timeout or an abort) are already reported.
    if (flow.isCurrent(this)) {
        // req.abort() shows as a 'socket hang up' once the request is on the wire: report what the caller did.
        flow.failHop(this.aborted ? aborted(undefined, 'request') : flow.networkError(err));
    }
}

function bodyless(method: string): boolean {
    return method === 'GET' || method === 'HEAD';
}

/**
 * Over a UNIX socket the URI may be a path alone (`/containers/json`, as for the Docker API): it is
 * then read against `http://localhost`, which is also the `host` header sent.
 */
function socketBaseFor(uri: string, socketPath: string | undefined): string | undefined {
    return socketPath !== undefined && uri.charCodeAt(0) === 47 ? 'http://localhost' : undefined;
}

function sendStreamPayload(req: ClientRequest): void {
    (req as FlowRequest)[flowOf].sendPayload(req);
}

/**
 * Calls `callback` once `req` has a connected socket (TLS handshake done): at once for a socket
 * reused from the pool. Never called when the request fails first.
 */
function whenConnected(req: ClientRequest, callback: (req: ClientRequest) => void): void {
    req.once('socket', (socket) => {
        if (!socket.connecting) {
            callback(req);
            return;
        }

        const connected = () => {
            req.removeListener('close', abandoned);
            callback(req);
        };
        const abandoned = () => {
            socket.removeListener('secureConnect', connected);
            socket.removeListener('connect', connected);
        };
        socket.once('encrypted' in socket ? 'secureConnect' : 'connect', connected);
        req.once('close', abandoned);
    });
}

function onRequestClose(this: FlowRequest): void {
    const flow = this[flowOf];
    // Closed before a response and without an error: the caller called req.abort() (Node reports no error for it).
    if (flow.isCurrent(this)) {
        flow.failHop(aborted(undefined, 'request'));
    }
}

function onResendDue(flow: RequestFlow): void {
    flow.resendNow();
}

function onRetryDue(flow: RequestFlow): void {
    flow.retryNow();
}

function onTimeout(flow: RequestFlow): void {
    flow.timeout();
}

/** The options of `http(s).request()`: only the keys that apply, so Node's defaults stay in force. */
function toNodeOptions(
    destination: Destination,
    method: string,
    headers: EffectiveOptions['headers'],
    options: EffectiveOptions,
    agents: Agents
): NodeRequestOptions {
    const isHttps = destination.isHttps;
    const nodeOptions: NodeRequestOptions & { [clientRequestMarker]: true; [key: string]: unknown } = {
        protocol: destination.protocol,
        hostname: destination.hostname,
        port: destination.port,
        path: destination.path,
        method,
        headers: headers as NodeRequestOptions['headers'],
        agent:
            options.agent !== undefined
                ? options.agent
                : isHttps
                  ? options.rejectUnauthorized === false
                      ? agents.httpsAllowUnauthorized
                      : agents.https
                  : agents.http,
        [clientRequestMarker]: true
    };

    if (destination.auth !== undefined) {
        nodeOptions.auth = destination.auth;
    }

    if (isHttps) {
        if (options.rejectUnauthorized !== undefined) {
            nodeOptions.rejectUnauthorized = options.rejectUnauthorized;
        }

        if (options.ciphers !== undefined) {
            nodeOptions.ciphers = options.ciphers;
        }

        if (options.secureProtocol !== undefined) {
            nodeOptions.secureProtocol = options.secureProtocol;
        }
    }

    if (options.socketPath !== undefined) {
        nodeOptions.socketPath = options.socketPath;
    }

    if (options.lookup !== undefined) {
        nodeOptions.lookup = options.lookup;
    }

    if (options.family !== undefined) {
        nodeOptions.family = options.family;
    }

    if (options.hints !== undefined) {
        nodeOptions.hints = options.hints;
    }

    return nodeOptions;
}
