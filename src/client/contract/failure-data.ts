import type { IncomingHttpHeaders } from 'node:http';
import { type HttpError, isHttpError } from '../../errors/index.js';
import type { TimeoutPhase } from './timings.js';
import type { HopResponse, ResponseErrorData } from './types.js';

/*
 * What the client puts in `err.data` of the failures it rejects with, one type per shape, and a guard
 * for each that narrows an `unknown` (what a `catch` gives) to the HttpError carrying it (docs/client.md
 * "Failures"). A guard checks what its type says, field by field: a value whose fields say something
 * else is not narrowed, whoever made it. `errors.isHttpError()` stays as it was: its `Data` is the
 * caller's word, these are checked.
 */

/** How the session of a failed HTTP/2 stream ended, when its end failed the stream (`data.http2.session`). */
export type Http2SessionEnd =
    | {
          /** The server sent GOAWAY: the streams above `lastStreamId` were never processed. */
          readonly event: 'goaway';
          /** The GOAWAY's error code (RFC 9113 7): 0, `NO_ERROR`, for a graceful shutdown. */
          readonly errorCode: number;
          /** The last stream the server says it processed. */
          readonly lastStreamId: number;
      }
    | {
          /** The session left a PING (or, new, its first SETTINGS) unanswered for `pingTimeout` ms. */
          readonly event: 'ping-timeout';
          /** The `http2.pingTimeout` that ran out, in ms. */
          readonly pingTimeout: number;
      };

/** What the error of a failed HTTP/2 stream tells of it (`data.http2`, README "HTTP/2"). */
export interface Http2StreamFailure {
    /** The stream's id on its session. */
    readonly streamId: number | undefined;
    /** The code of the `RST_STREAM` that reset it (RFC 9113 7: 7 is `REFUSED_STREAM`, 8 `CANCEL`), if one did. */
    readonly rstCode: number | undefined;
    /** How its session ended, when that is what failed it. */
    readonly session: Http2SessionEnd | undefined;
}

/**
 * The `data` of a failure made around an error (docs/client.md "Failures"): that error itself, also the
 * HttpError's `cause`. A network, DNS or TLS error (502 `Client request error`), a timeout (504 for the
 * request `timeout`, a phase of `timeouts` or the `deadline`; 408 for the read `timeout`), an abort (500,
 * `name` `AbortError`, `cause` the signal's reason), an HTTP/2 stream's failure, an unreachable proxy, a
 * body that cannot be decoded, a redirect to a location that is no URL, and an `Error` a listener or
 * callback threw (500).
 */
export interface RequestFailureData extends Error {
    /**
     * What failed, as Node names it: `ECONNREFUSED`, `ECONNRESET`, `ENOTFOUND`, a TLS code, `ETIMEDOUT`
     * (every timeout, and an HTTP/2 session that stopped answering), `ABORT_ERR` (an abort),
     * `ERR_HTTP2_GOAWAY`, `ERR_HTTP2_REFUSED_STREAM`, `ERR_HTTP2_STREAM_ERROR`, `ERR_HTTP2_STREAM_CLOSED`...;
     * the codes the `retry` option's `errorCodes` lists. Absent for an error without one.
     */
    code?: string | undefined;
    /** The bound that ran out, on a 504 of `timeouts` (`'lookup'`, `'connect'`...) or of the `deadline` (`'deadline'`). */
    phase?: TimeoutPhase | undefined;
    /** On the failure of an HTTP/2 stream: which stream, its reset code and its session's end. */
    http2?: Http2StreamFailure | undefined;
    /** With the `retry` option: the attempts made, this failure being the last one's. */
    attempts?: number | undefined;
    /** On a failed read of a helper (`get()`, `post()`...): the response it was reading. */
    res?: HopResponse | undefined;
}

/**
 * The `data` of a failure reading a body that carries no error of its own (docs/client.md "Failures"): a
 * body over `maxBytes` (413), not JSON with `json: 'strict'` (406), cut short (500, the stream's error as
 * the HttpError's `cause`), or not the JSON it claims (502, the parser's error as `cause`).
 */
export interface ReadFailureData {
    /** The response whose body was read: on every read failure of a helper (`get()`, `post()`...). */
    res?: HopResponse | undefined;
    /** A body that is not the JSON it claims: the raw bytes. */
    payload?: Buffer | undefined;
    /** With the `retry` option: the attempts made. */
    attempts?: number | undefined;
}

/** The `data` of the 502 of a proxy that refused the tunnel or the request (docs/client.md "Proxies"): its answer. */
export interface ProxyRefusalData {
    /** The proxy's URL, its credentials redacted (`http://***@proxy.internal:3128`). */
    proxy: string;
    /** The proxy's status: 407 when it wants credentials. */
    statusCode: number;
    statusText: string;
    headers: IncomingHttpHeaders;
    /** With the `retry` option: the attempts made (a refusal is not retried: 1). */
    attempts?: number | undefined;
}

/** One redirect response of a call, in the trace that is the `data` of a failed redirect (`RedirectTrace`). */
export interface RedirectHop {
    /** The method of the request that was redirected. */
    method: string;
    /** The URL that answered with the redirect. */
    url: string;
}

/**
 * The `data` of a redirect chain that could not go on (502 `Maximum redirections reached`, `Received
 * redirection without location`): the redirects followed, in order; the last one is the one refused.
 */
export type RedirectTrace = readonly RedirectHop[] & {
    /** With the `retry` option: the attempts made. */
    readonly attempts?: number | undefined;
};

/**
 * True for the HttpError of a helper's 4xx or 5xx response (`get()`, `post()`...): its `data` is the
 * response (`isResponseError`, `headers`, `payload`, `res`, `attempts`, `problem`). `Payload` is the
 * caller's word, as in `get<T>()`: with `json`, the parsed body; else a Buffer.
 */
export function isResponseError<Payload = unknown>(err: unknown): err is HttpError<ResponseErrorData<Payload>> {
    if (!isHttpError(err) || !isObject(err.data)) {
        return false;
    }

    const data = err.data as Partial<Record<keyof ResponseErrorData, unknown>>;
    return (
        data.isResponseError === true &&
        isObject(data.headers) &&
        isObject(data.res) &&
        isOptional(data.attempts, 'number') &&
        (data.problem === undefined || isObject(data.problem))
    );
}

/**
 * True for the HttpError of a failure made around an error (`RequestFailureData`: network and TLS
 * errors, timeouts, aborts, HTTP/2 stream failures...): `err.data.code`, `phase`, `http2`, `attempts`,
 * `res` typed as they are.
 */
export function isRequestFailure(err: unknown): err is HttpError<RequestFailureData> {
    if (!isHttpError(err) || !(err.data instanceof Error)) {
        return false;
    }

    const data = err.data as Error & Partial<Record<keyof RequestFailureData, unknown>>;
    return (
        isOptional(data.code, 'string') &&
        (data.phase === undefined || isTimeoutPhase(data.phase)) &&
        (data.http2 === undefined || isObject(data.http2)) &&
        isOptional(data.attempts, 'number') &&
        (data.res === undefined || isObject(data.res))
    );
}

/**
 * True for the HttpError of a read failure that carries what it read (`ReadFailureData`): `data.res`, the
 * response (every read failure of a helper), or `data.payload`, a body that is not the JSON it claims.
 * A helper's read that failed with an error of its own (the read `timeout`, a body that cannot be
 * decoded) is also a `RequestFailureData`.
 */
export function isReadFailure(err: unknown): err is HttpError<ReadFailureData> {
    if (!isHttpError(err) || !isObject(err.data)) {
        return false;
    }

    const data = err.data as Partial<Record<keyof ReadFailureData | 'isResponseError', unknown>>;
    const hasResponse = isObject(data.res);
    const hasPayload = Buffer.isBuffer(data.payload);
    return (
        data.isResponseError !== true &&
        (hasResponse || hasPayload) &&
        (hasResponse || data.res === undefined) &&
        (hasPayload || data.payload === undefined) &&
        isOptional(data.attempts, 'number')
    );
}

/** True for the 502 of a proxy that refused the tunnel or the request (`ProxyRefusalData`). */
export function isProxyRefusal(err: unknown): err is HttpError<ProxyRefusalData> {
    if (!isHttpError(err) || !isObject(err.data)) {
        return false;
    }

    const data = err.data as Partial<Record<keyof ProxyRefusalData, unknown>>;
    return (
        typeof data.proxy === 'string' &&
        typeof data.statusCode === 'number' &&
        typeof data.statusText === 'string' &&
        isObject(data.headers) &&
        isOptional(data.attempts, 'number')
    );
}

/** True for the 502 of a redirect chain that could not go on, whose `data` is its trace (`RedirectTrace`). */
export function isRedirectFailure(err: unknown): err is HttpError<RedirectTrace> {
    if (!isHttpError(err) || !Array.isArray(err.data)) {
        return false;
    }

    const trace = err.data as unknown[] & { attempts?: unknown };
    return (
        isOptional(trace.attempts, 'number') &&
        trace.every((hop) => isObject(hop) && typeof hop.method === 'string' && typeof hop.url === 'string')
    );
}

// Every phase a timeout may name: a Record, so a phase added to the type must be added here.
const timeoutPhases: Record<TimeoutPhase, true> = {
    lookup: true,
    connect: true,
    secureConnect: true,
    send: true,
    response: true,
    deadline: true
};

function isTimeoutPhase(value: unknown): value is TimeoutPhase {
    return typeof value === 'string' && Object.hasOwn(timeoutPhases, value);
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null;
}

function isOptional(value: unknown, type: 'string' | 'number'): boolean {
    return value === undefined || typeof value === type;
}
