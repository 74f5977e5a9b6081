import type { ClientRequest, Agent as HttpAgent, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type { HttpError, ProblemDetails } from '../../errors/index.js';
import type { CacheStore } from './cache-store.js';
import type { PhaseTimeouts, Timings } from './timings.js';

/** Request header name to value, as given by the caller. Names are sent lower-cased; a null or undefined value is no header. */
export type OutgoingHeaders = Record<string, string | number | readonly string[] | null | undefined>;

/**
 * A request body: strings and Buffers are sent as they are, streams are piped once the connection
 * exists (and re-sent on a 307/308 from a copy of up to 1 MiB), other objects are sent as JSON.
 */
export type Payload = string | Buffer | Readable | object;

/**
 * Called before a redirect is followed. `redirectOptions` are the options of the next request and
 * may be changed (for instance to put back an `authorization` header dropped on a cross-origin
 * redirect). Call `next()` to follow the redirect, or `next(err)` to stop it: the request then
 * rejects with `err` (an `HttpError` as given, any other error wrapped in a 500 keeping it as `cause`).
 */
export type BeforeRedirect = (
    redirectMethod: string,
    statusCode: number,
    location: string,
    resHeaders: IncomingHttpHeaders,
    redirectOptions: EffectiveOptions,
    next: (err?: Error) => void
) => unknown;

/** Called once the request replacing a redirected one exists; `req` is that new request. */
export type Redirected = (statusCode: number, location: string, req: HopRequest) => void;

/**
 * Request options, accepted by `request()` and the per-method helpers. `null` or
 * `undefined` for an option means "not set": the client's default applies.
 */
export interface RequestOptions {
    /** Connection pool. Default `agents.http` / `agents.https`; `false` opens a connection per request. */
    agent?: HttpAgent | HttpsAgent | false | null | undefined;
    /** Fully qualified base URL the request URI is resolved against (then the URI must be a string). */
    baseUrl?: string | null | undefined;
    beforeRedirect?: BeforeRedirect | null | undefined;
    /** TLS cipher list. */
    ciphers?: string | null | undefined;
    headers?: OutgoingHeaders | null | undefined;
    payload?: Payload | null | undefined;
    /** Follow a 303 with a GET. Default false: a 303 is returned as the response. */
    redirect303?: boolean | null | undefined;
    redirected?: Redirected | null | undefined;
    /** Method used to follow 301 and 302. Default: the original method. */
    redirectMethod?: string | null | undefined;
    /** Maximum redirects to follow. Default false: none (a 3xx is returned as the response). */
    redirects?: number | false | null | undefined;
    /** TLS: reject invalid certificates. With `false` the `agents.httpsAllowUnauthorized` pool is used. Not with `agent`. */
    rejectUnauthorized?: boolean | null | undefined;
    secureProtocol?: string | null | undefined;
    /** UNIX socket to connect to instead of the URI's host and port. */
    socketPath?: string | null | undefined;
    /**
     * Milliseconds to wait for the response headers before a 504. It bounds the whole request:
     * redirects and `beforeRedirect` included, each hop gets what is left. Default 0: no limit.
     */
    timeout?: number | null | undefined;
    /**
     * A bound in milliseconds on each phase of every hop (README "Timings"): `lookup`, `connect`
     * (the TCP connection or the proxy tunnel), `secureConnect` (the TLS handshake), `send` (from the
     * connection until the request is sent) and `response` (from then until the response headers).
     * A phase that runs out fails its hop with a 504 (`data.code` `ETIMEDOUT`, `data.phase` the phase),
     * retried like any `ETIMEDOUT`. Merged phase by phase over the client's defaults. Default: none.
     */
    timeouts?: PhaseTimeouts | null | undefined;
    /**
     * Milliseconds the whole call may take (README "Timings"): every hop, redirect, retry and wait
     * before one, and for the helpers the read of the body. No retry starts whose wait would outlast
     * it. Running out rejects with a 504 (`data.code` `ETIMEDOUT`, `data.phase` `'deadline'`), never
     * retried. Counted from the call. Default 0: no limit.
     */
    deadline?: number | null | undefined;
    lookup?: LookupFunction | null | undefined;
    family?: 4 | 6 | null | undefined;
    hints?: number | null | undefined;
    /** Cancels the request (and, with the helpers, the read) when aborted. */
    signal?: AbortSignal | null | undefined;
    /**
     * An HTTP proxy: its URL (`http://user:pass@proxy.internal:3128`; the credentials go to the proxy
     * only), or `true` for the environment's `HTTPS_PROXY`/`HTTP_PROXY` and `NO_PROXY`, read at each
     * hop. Default: none. Not with `socketPath` or `agent`.
     */
    proxy?: string | URL | boolean | null | undefined;
    /**
     * Retries of failed attempts: `true` for the defaults, or the settings to change. Default: none.
     * Each retry is a new hop through the event pipeline (`uri.retryCount` tells which).
     */
    retry?: boolean | RetryOptions | null | undefined;
    /**
     * Low-cardinality route template such as `/users/{id}`. The client only passes it on to the
     * events (for tracing and metrics); it does not change the request.
     */
    route?: string | null | undefined;
    /**
     * Called as the request body goes out (README "Progress"). Each hop (redirect, retry) sends the
     * body again, and its progress starts again from 0.
     */
    onUploadProgress?: ProgressCallback | null | undefined;
    /**
     * The HTTP cache (README "Cache"): `true` for a private cache in memory, an object to choose the
     * store, shared-cache semantics or the methods cached, `false` (the default) for none. Given to
     * `defaults()`, the new client keeps its own store; per request, `false` bypasses the client's cache.
     */
    cache?: boolean | CacheOptions | null | undefined;
    /**
     * HTTP/2 (README "HTTP/2"): `false` (the default) speaks HTTP/1.1 only; `true` offers `h2` and
     * `http/1.1` by ALPN on https and speaks what the server picks (the answer is remembered per
     * origin); an object means `true` with the settings it gives (`h2c: true` also speaks HTTP/2 in
     * cleartext, with prior knowledge, to http URLs and `socketPath`).
     */
    http2?: boolean | Http2Options | null | undefined;
    /**
     * A stand-in for the network (docs/testing.md): a `MockNetwork` of `tracewire/testing`, or its
     * `Recorder`. The client hands it every hop instead of opening a connection, and it answers the
     * hop (everything above the connection runs as usual) or lets it go to the network. Default: the
     * one installed for the process (`MockNetwork.install()`), else none.
     */
    mock?: NetworkStandIn | null | undefined;
}

/**
 * What the `mock` option takes: made by `tracewire/testing` (docs/testing.md). The one member is the
 * client's way in (`StandInTransport` in src/client/wire/transport.ts), not for callers.
 */
export interface NetworkStandIn {
    openExchange(hop: never, http2: boolean, network: never): unknown;
}

/** The `http2` option as an object: HTTP/2 on, with these settings; an absent field keeps its default. */
export interface Http2Options {
    /** Cleartext HTTP/2 with prior knowledge for http URLs and `socketPath` (no negotiation). Default false. */
    h2c?: boolean | null | undefined;
    /**
     * Streams opened at most on one session; another session opens beyond it. Default: as many as the
     * server's `SETTINGS_MAX_CONCURRENT_STREAMS` allows.
     */
    maxConcurrentStreams?: number | null | undefined;
    /** Milliseconds between PINGs on a session with streams open; 0 sends none. Default 30 000. */
    pingInterval?: number | null | undefined;
    /**
     * Milliseconds a PING may wait for its answer, and a new session for the server's SETTINGS: a
     * session that does not answer in time is closed, and its streams (or those waiting for it) fail
     * with a 502 (`data.code` `ETIMEDOUT`), retried as any network error; 0 waits as long as it takes.
     * Default 10 000.
     */
    pingTimeout?: number | null | undefined;
    /**
     * Milliseconds a session with no stream open stays open (unref'd: it never keeps the process
     * alive); 0 keeps it until the server closes it. Default 60 000.
     */
    idleTimeout?: number | null | undefined;
    /** The receive window of each stream (`SETTINGS_INITIAL_WINDOW_SIZE`), in bytes. Default 1 MiB. */
    initialWindowSize?: number | null | undefined;
    /** The receive window of each session, shared by its streams, in bytes. Default 16 MiB. */
    connectionWindowSize?: number | null | undefined;
}

/** The `cache` option as an object (README "Cache"); an absent field keeps its default. */
export interface CacheOptions {
    /** Where responses are kept. Default: a `MemoryCacheStore` with its default bounds. */
    store?: CacheStore | null | undefined;
    /** Shared-cache semantics (`s-maxage`, `private`, `Authorization`: RFC 9111 3.5). Default false: a private cache. */
    shared?: boolean | null | undefined;
    /** The methods answered from and stored in the cache: safe methods only. Default `['GET', 'HEAD']`. */
    methods?: readonly string[] | null | undefined;
    /**
     * Request coalescing (docs/cache.md "Request coalescing"): concurrent calls for the same cacheable
     * request wait for one of them to fetch it, then are answered from what it stored; across the
     * instances sharing a store that offers `FillLocks` (`RedisCacheStore`) too. Default on; `false`
     * turns it off; an object changes its settings.
     */
    coalesce?: boolean | CoalesceOptions | null | undefined;
    /**
     * The longest the cache waits for its store on a call, in ms, before it goes on without it: a lookup
     * counts as a miss, a write as not made (docs/cache.md "Store failures"). Default 250; a store across
     * a network on a loaded host may want more.
     */
    storeTimeout?: number | null | undefined;
}

/** The settings of request coalescing (docs/cache.md "Request coalescing"); an absent field keeps its default. */
export interface CoalesceOptions {
    /**
     * The longest a call waits for another's fetch, in ms, and the life of a fill lock: a fetch that takes
     * longer lets its waiters go to the origin themselves. Default 5000.
     */
    lockTimeout?: number | null | undefined;
    /**
     * How long, in ms, calls for a request whose last answer could not be shared go to the origin without
     * waiting for one another (hit-for-pass). Default 30000; 0 for never.
     */
    passFor?: number | null | undefined;
}

/**
 * A transfer's progress: `transferred` body bytes so far (as on the wire: compressed when the body
 * is), `total` when known (`content-length`, or a string or Buffer payload's length), and
 * `percent` (0 to 100) when `total` is known.
 */
export interface TransferProgress {
    transferred: number;
    total: number | undefined;
    percent: number | undefined;
}

/** `onUploadProgress` and `onDownloadProgress`: a callback that throws fails its request with a 500. */
export type ProgressCallback = (progress: TransferProgress) => void;

/**
 * The `retry` option's settings; an absent field keeps its default. Times are in milliseconds.
 */
export interface RetryOptions {
    /** Retries after the first attempt. Default 2. */
    limit?: number | null | undefined;
    /** Methods retried. Default the idempotent ones: GET, HEAD, OPTIONS, PUT, DELETE, TRACE. */
    methods?: readonly string[] | null | undefined;
    /** Response statuses retried. Default 408, 429, 500, 502, 503, 504. */
    statusCodes?: readonly number[] | null | undefined;
    /**
     * Network error codes (`err.data.code`) retried. Default ECONNRESET, ECONNREFUSED, EPIPE,
     * ETIMEDOUT (also the request `timeout`'s code), EAI_AGAIN, and HTTP/2's stream resets and session
     * ends (ERR_HTTP2_STREAM_ERROR, ERR_HTTP2_SESSION_ERROR, ERR_HTTP2_STREAM_CLOSED, ERR_HTTP2_GOAWAY,
     * ERR_HTTP2_REFUSED_STREAM).
     */
    errorCodes?: readonly string[] | null | undefined;
    /**
     * The wait before a retry when no `Retry-After` applies: exponential with full jitter, a random
     * wait up to min(cap, base × 2^(retryCount − 1)), default base 100 and cap 10 000; or a function
     * of the retry number (1 for the first) returning the wait.
     */
    backoff?:
        | { base?: number | null | undefined; cap?: number | null | undefined }
        | ((retryCount: number) => number)
        | null
        | undefined;
    /** The longest `Retry-After` honoured; a longer one ends the retries with that response. Default 60 000. */
    maxRetryAfter?: number | null | undefined;
}

/** Read options, accepted by `read()` and the per-method helpers. */
export interface ReadOptions {
    /** `true`: decode a gzip, deflate, br or zstd (where the runtime has it) `content-encoding`, lists included; `'force'`: decode even without one. Default false. */
    gunzip?: boolean | 'force' | null | undefined;
    /** `true`: parse JSON content types (`+json` included); `'strict'`: 406 for other types; `'force'`: always parse. */
    json?: boolean | 'strict' | 'force' | null | undefined;
    /** Maximum payload size in bytes, counted after decompression. Default 0: no limit. */
    maxBytes?: number | null | undefined;
    /** Milliseconds allowed for reading the whole payload before failing with 408. Default 0: no limit. */
    timeout?: number | null | undefined;
    /** Cancels the read when aborted. */
    signal?: AbortSignal | null | undefined;
    /** Called as the body arrives, counting its bytes as received (before any decompression). */
    onDownloadProgress?: ProgressCallback | null | undefined;
}

/** Options of the per-method helpers (`get`, `post`, ...): request and read options together. */
export interface RequestAndReadOptions extends RequestOptions, ReadOptions {}

/** The three connection pools of a client (README, "Agents"). */
export interface Agents {
    http: HttpAgent;
    https: HttpsAgent;
    /** An https agent with `rejectUnauthorized: false`, used for requests with that option. */
    httpsAllowUnauthorized: HttpsAgent;
}

/** Options of `defaults()`: every request and read option, plus `agents` and `events`. */
export interface DefaultsOptions extends RequestAndReadOptions {
    agents?: Agents | null | undefined;
    /** `true` gives the new client an `events` emitter (a client derived from it shares that emitter). */
    events?: boolean | null | undefined;
}

/** The same options, none of them null (null or undefined means "not set", so the merge drops them). */
export type WithoutNull<T> = { [K in keyof T]: Exclude<T[K], null | undefined> };

/**
 * The options a request is made with: the client's defaults merged with the caller's options,
 * headers lower-cased and merged by name. This is the `options` argument of the `preRequest` event
 * and of `beforeRedirect`; changes made there are applied to the request.
 */
export interface EffectiveOptions extends WithoutNull<RequestAndReadOptions> {
    headers: Record<string, string | number | readonly string[]>;
}

/**
 * The `uri` argument of the `preRequest` and `response` events: a `URL` of the request with the
 * method and headers to send. One object per hop (a redirect makes a new one), so listeners can key
 * per-request state by it in a `WeakMap`. Changes made in `preRequest` (to the URL, `method` or
 * `headers`, e.g. adding `traceparent`) are applied to the request created right after.
 */
export interface RequestUri extends URL {
    /** The method as sent, e.g. `GET`. */
    method: string;
    /** The headers to send (lower-case names), mutable in `preRequest`. */
    headers: Record<string, string | number | readonly string[]>;
    /** 0 for the first request, n for the n-th redirect. */
    redirectCount: number;
    /** 0 for the first attempt, n for the n-th retry (with the `retry` option). */
    retryCount: number;
    /** The stale-connection re-sends made so far by this request (see the README's "Stale connections"). */
    staleResends: number;
    /** `'stale-connection'` when this hop re-sends one that failed on a kept-alive connection the server had closed. */
    resendReason: ResendReason | undefined;
    /**
     * Set on the `uri` of a failed hop as soon as its `response` event has returned, when the client
     * decided to send it again at once, outside redirects and retries: why (the next hop's
     * `resendReason`). Its failure then never reaches the caller (README "Stale connections", "HTTP/2").
     * Absent otherwise.
     */
    resent?: ResendReason;
    /**
     * Set on a hop the cache answered after it waited for another call's fetch of the same request
     * (request coalescing, docs/cache.md "Request coalescing"): the `uri` of the hop that fetched it, when
     * that call ran in this process and reported its hops. Absent otherwise (a fetch by another instance
     * sharing the store is not in this process). The instrumentation links the two hops' spans.
     */
    collapsedInto?: RequestUri;
}

/**
 * Why a hop is a re-send of the one before it, outside redirects and retries (`uri.resendReason`):
 * `'stale-connection'`, its kept-alive connection had been closed by the server (README "Stale
 * connections"); `'http2-refused-stream'` and `'http2-goaway'`, an HTTP/2 server refused the stream,
 * or closed its session before processing it, so it was never processed (README "HTTP/2").
 */
export type ResendReason = 'stale-connection' | 'http2-refused-stream' | 'http2-goaway';

/**
 * The `details` argument of the `response` event.
 */
export interface ResponseDetails {
    /**
     * The request of this hop; undefined when none could be created after `preRequest` (a
     * `preRequest` listener threw, aborted the signal, or set a header Node refuses), and for a hop
     * the cache answered from its store: `res` then came from no network.
     */
    req: HopRequest | undefined;
    /** The response (headers received), or undefined when the hop failed before one arrived. */
    res: TimedResponse | undefined;
    /** `Date.now()` when this hop began (just before `preRequest`). */
    start: number;
    /** The same object the hop's `preRequest` listeners received. */
    uri: RequestUri;
    /**
     * When each phase of this hop happened (README "Timings"), the same object as `res.timings`.
     * `end` and `download` are still undefined here: they are set once the body has been read.
     */
    timings: Timings;
}

/**
 * The events of a client made with `defaults({ events: true })`, emitted through `client.events`
 * (an eventemitter3 emitter). Every request, redirect hops included, travels this pipeline:
 *
 * 1. `preRequest(uri, options)`: synchronously, just before `http(s).request()` is called, once per hop.
 * 2. `request(req)`: the `ClientRequest` just after its creation, before `end()` is called.
 * 3. `response(err, details)`: exactly once per hop. `err` is undefined when a response arrived
 *    (any status, 3xx hops of a redirect included); otherwise it is the `HttpError` the caller will
 *    see (network error 502, timeout 504, abort 500) and `err.data` is the underlying `Error` with
 *    its `code` (`ECONNREFUSED`, `ECONNRESET`, ... ; `ETIMEDOUT` for the timeout; `ABORT_ERR` with
 *    name `AbortError` and `cause` = `signal.reason` for an abort).
 *
 * A redirect runs: `response` of hop n (the 3xx), `beforeRedirect`, `preRequest` and `request` of
 * hop n+1 (`redirectCount` n+1), then `redirected` (it receives that new request). When the redirect
 * limit is reached, the last 3xx hop still gets its `response` event, then the request rejects with 502.
 *
 * Listener errors never crash the process: a throwing `request` or `response` listener fails the
 * request with a 500 (the hop still gets its one `response` event). When no request could be
 * created after `preRequest` (a `preRequest` listener threw, aborted the signal, or set a header Node
 * refuses), the hop's `response` event still fires, with that error and `req` undefined.
 *
 * The headers object of the options handed to `http(s).request()` carries the enumerable
 * `Symbol.for('tracewire.client')` (`clientRequestMarker`) so `@opentelemetry/instrumentation-http`
 * can skip these requests (`isTracewireRequest` of `tracewire/instrumentation`).
 */
export interface ClientEvents {
    preRequest: (uri: RequestUri, options: EffectiveOptions) => void;
    request: (req: HopRequest) => void;
    response: (err: HttpError | undefined, details: ResponseDetails) => void;
}

/**
 * The request of one hop as the client shows it: `promise.req`, the `request` event, `details.req`
 * and the `redirected` callback's `req`. For an HTTP/2 stream it is an `Http2Request`, which
 * `isHttp2Request(req)` tells apart and narrows to (docs/client.md "HTTP/2").
 */
export type HopRequest = ClientRequest;

/** The response of one hop as the client hands it on: a readable body with its status and headers. */
export type HopResponse = IncomingMessage;

/** A response of the client: `res.timings` is its hop's record (README "Timings"). */
export type TimedResponse = HopResponse & { timings: Timings };

/**
 * A request's promise: it also carries the first `ClientRequest` (undefined when the options were rejected,
 * and on a client with a cache, which looks the store up before any request exists).
 */
export type RequestPromise = Promise<TimedResponse> & { req: HopRequest | undefined };

/** Result of the per-method helpers. */
export interface ResponseWithPayload<T = unknown> {
    /** The response, fully read. */
    res: TimedResponse;
    /** A Buffer, or the parsed JSON value when JSON parsing applies. */
    payload: T;
}

/** `data` of the `HttpError` the helpers throw for a 4xx or 5xx status; `isResponseError(err)` narrows to it (docs/client.md "Failures"). */
export interface ResponseErrorData<T = unknown> {
    isResponseError: true;
    headers: IncomingHttpHeaders;
    payload: T;
    res: HopResponse;
    /** With the `retry` option: the attempts made, this response being the last one's. */
    attempts?: number;
    /**
     * The problem document (RFC 9457) of an `application/problem+json` body, as `readProblem()`
     * reads it; absent for any other body, and for one that is not JSON or is over
     * `problemReadLimits.bodyBytes` (docs/problem-details.md, "The client: `data.problem`").
     */
    problem?: ProblemDetails;
}
