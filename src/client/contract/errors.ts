import { HttpError } from '../../errors/index.js';
import type { TimeoutPhase } from './timings.js';

/**
 * The client's failure mapping. Every failure is an `HttpError`; when it is made around a
 * lower-level error, that error is kept as `data` (hapi-world code reads it there) and as `cause`,
 * set as ES2022 sets it (own, not enumerable: out of the error's keys and JSON), which loggers,
 * `util.inspect` and OpenTelemetry's exception recording follow (docs/problem-details.md, "`cause`").
 */

/** An Error carrying a Node-style `code`. */
export type CodedError = Error & { code?: string };

/**
 * A new HttpError with `data`; `cause` names the error it is made around. Without one, an Error
 * given as `data` is the cause (the HttpError constructor's rule), and anything else (a redirect
 * trace, a proxy's refusal) is only `data`: no error was wrapped.
 */
function wrap(message: string, statusCode: number, data: unknown, ctor: Function, cause?: unknown): HttpError {
    return new HttpError(message, { statusCode, data, ctor, cause });
}

/** 502: the connection or the request failed (refused, reset, DNS, TLS...). `data.code` tells which. */
export function requestError(err: CodedError): HttpError {
    return wrap(`Client request error: ${err.message}`, 502, err, requestError);
}

/** 504: no response headers within the request `timeout`; `data.code` is `ETIMEDOUT`. */
export function requestTimeout(timeout: number): HttpError {
    const cause: CodedError = new Error(`No response within ${timeout} ms`);
    cause.code = 'ETIMEDOUT';
    return wrap('Client request timeout', 504, cause, requestTimeout);
}

/** The `data` of a phase timeout or of the deadline: `code` is `ETIMEDOUT`, `phase` says which bound ran out. */
export type PhaseTimeoutCause = CodedError & { code: 'ETIMEDOUT'; phase: TimeoutPhase };

/**
 * 504: a phase of the hop outlasted its bound in the `timeouts` option (README "Timings"); retried
 * like any `ETIMEDOUT`.
 */
export function phaseTimeout(phase: Exclude<TimeoutPhase, 'deadline'>, limit: number): HttpError {
    const cause = new Error(`The ${phase} phase took longer than ${limit} ms`) as PhaseTimeoutCause;
    cause.code = 'ETIMEDOUT';
    cause.phase = phase;
    return wrap(`Client request timeout: ${phase} phase over ${limit} ms`, 504, cause, phaseTimeout);
}

/** 504: the call outlasted its `deadline` (README "Timings"); never retried. */
export function deadlineExceeded(deadline: number): HttpError {
    const cause = new Error(`The call took longer than its deadline of ${deadline} ms`) as PhaseTimeoutCause;
    cause.code = 'ETIMEDOUT';
    cause.phase = 'deadline';
    return wrap(`Client request deadline of ${deadline} ms exceeded`, 504, cause, deadlineExceeded);
}

/**
 * 500: the caller cancelled (its AbortSignal fired, or it called `req.abort()`); `data` is an
 * `AbortError` (`code` `ABORT_ERR`, `cause` the signal's reason when there is one).
 */
export function aborted(signal: AbortSignal | undefined, what: 'request' | 'read'): HttpError {
    const cause: CodedError = new Error(
        `The ${what} was aborted`,
        signal === undefined ? undefined : { cause: signal.reason }
    );
    cause.name = 'AbortError';
    cause.code = 'ABORT_ERR';
    return wrap(`Client ${what} aborted`, 500, cause, aborted);
}

/**
 * A 502 for an upstream that broke the protocol (bad redirect, corrupt compression, a proxy's
 * refusal). `data` says how: the redirect trace, the refusal, or the error it failed with, which is
 * then the `cause` as well.
 */
export function badUpstream(message: string, data?: unknown): HttpError {
    return wrap(message, 502, data, badUpstream);
}

/**
 * 500: the client cannot carry on (a stopped redirect, an unreplayable payload, a throwing listener
 * or callback). What was thrown is `data` and `cause`, an Error or not.
 */
export function clientFailure(message: string, cause?: unknown): HttpError {
    return wrap(message, 500, cause, clientFailure, cause);
}

/** A bad option: a `TypeError` naming the option, decorated as a 500 `HttpError` so callers handle one kind of failure. */
export function invalidOption(message: string): HttpError {
    return new HttpError(new TypeError(message), { statusCode: 500 });
}

/** 408: the read `timeout` elapsed before the payload was complete. */
export function readTimeout(timeout: number): HttpError {
    const cause: CodedError = new Error(`Payload not read within ${timeout} ms`);
    cause.code = 'ETIMEDOUT';
    return wrap('Client read timeout', 408, cause, readTimeout);
}

/** 413: the payload (after decompression) exceeds `maxBytes`. */
export function payloadTooLarge(maxBytes: number): HttpError {
    return wrap(`Maximum payload size reached (maxBytes ${maxBytes})`, 413, undefined, payloadTooLarge);
}

/** 406: `json: 'strict'` and the response is not JSON (the content-type is in the message). */
export function notJson(contentType: string | undefined): HttpError {
    const found = contentType ? `'${contentType}'` : 'none';
    return wrap(`Received a non-JSON content-type (${found}) with json: 'strict'`, 406, undefined, notJson);
}

/**
 * 500: the payload being read ended early or failed. The stream's error, when there is one, is the
 * `cause`; `data` stays free for the response (`data.res`) the helpers add.
 */
export function payloadStreamFailure(message: string, cause?: Error): HttpError {
    return wrap(message, 500, undefined, payloadStreamFailure, cause);
}

/** 4xx/5xx response of a helper (`ResponseErrorData`). */
export function responseError(statusCode: number, reason: string, data: unknown): HttpError {
    // Statuses above 599 cannot be an HttpError: they count as a broken upstream.
    const status = statusCode <= 599 ? statusCode : 502;
    return new HttpError(`Response Error: ${statusCode} ${reason}`.trimEnd(), {
        statusCode: status,
        data,
        ctor: responseError
    });
}

/** 502: the payload claims or is forced to be JSON but does not parse; `data.payload` is the raw Buffer. */
export function invalidJson(err: SyntaxError, payload: Buffer): HttpError {
    return wrap(`Invalid JSON response payload: ${err.message}`, 502, { payload }, invalidJson, err);
}
