import type { HttpError } from '../../errors/index.js';
import { type CodedError, phaseTimeout, requestError, requestTimeout } from '../contract/errors.js';
import type { HopResponse, RetryOptions } from '../contract/types.js';

/**
 * The `retry` request option: which failed attempts are tried again, and after how long. The
 * request flow asks this module after each attempt; every retry is a new hop of the pipeline.
 */

/** A `retry` option made ready to use: sets for the lookups, the backoff as a function. */
export interface RetryPolicy {
    readonly limit: number;
    readonly methods: ReadonlySet<string>;
    readonly statusCodes: ReadonlySet<number>;
    readonly errorCodes: ReadonlySet<string>;
    /** The wait before retry number `retryCount` (1 for the first retry), in ms, when no Retry-After applies. */
    readonly backoff: (retryCount: number) => number;
    readonly maxRetryAfter: number;
}

export const defaultRetryLimit = 2;
const defaultMethods = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'];
const defaultStatusCodes = [408, 429, 500, 502, 503, 504];
// ETIMEDOUT is also the code of the request `timeout` (a 504 whose data.code is ETIMEDOUT). The
// ERR_HTTP2_ codes are an HTTP/2 stream's resets and its session's ends, what ECONNRESET is to an
// HTTP/1.1 request (wire/http2/stream-failure.ts); a GOAWAY's or REFUSED_STREAM's once re-sent
// stream (stale-resend.ts) may then be retried like any.
const defaultErrorCodes = [
    'ECONNRESET',
    'ECONNREFUSED',
    'EPIPE',
    'ETIMEDOUT',
    'EAI_AGAIN',
    'ERR_HTTP2_STREAM_ERROR',
    'ERR_HTTP2_SESSION_ERROR',
    'ERR_HTTP2_STREAM_CLOSED',
    'ERR_HTTP2_GOAWAY',
    'ERR_HTTP2_REFUSED_STREAM'
];
const defaultBase = 100;
const defaultCap = 10_000;
const defaultMaxRetryAfter = 60_000;

// A discarded body up to this size is read to its end so its keep-alive socket can serve the retry.
const drainLimit = 64 * 1024;

const defaultPolicy: RetryPolicy = {
    limit: defaultRetryLimit,
    methods: new Set(defaultMethods),
    statusCodes: new Set(defaultStatusCodes),
    errorCodes: new Set(defaultErrorCodes),
    backoff: (retryCount) => fullJitter(retryCount, defaultBase, defaultCap),
    maxRetryAfter: defaultMaxRetryAfter
};

/** The policy of a checked `retry` option, or undefined when retries are off (unset, null, false). */
export function retryPolicy(option: boolean | RetryOptions | null | undefined): RetryPolicy | undefined {
    if (option === undefined || option === null || option === false) {
        return undefined;
    }

    if (option === true) {
        return defaultPolicy;
    }

    const { limit, methods, statusCodes, errorCodes, backoff, maxRetryAfter } = option;
    return {
        limit: limit ?? defaultPolicy.limit,
        methods: methods ? new Set(methods.map((method) => method.toUpperCase())) : defaultPolicy.methods,
        statusCodes: statusCodes ? new Set(statusCodes) : defaultPolicy.statusCodes,
        errorCodes: errorCodes ? new Set(errorCodes) : defaultPolicy.errorCodes,
        backoff:
            typeof backoff === 'function'
                ? backoff
                : backoff
                  ? (retryCount) => fullJitter(retryCount, backoff.base ?? defaultBase, backoff.cap ?? defaultCap)
                  : defaultPolicy.backoff,
        maxRetryAfter: maxRetryAfter ?? defaultPolicy.maxRetryAfter
    };
}

/**
 * Exponential backoff with full jitter: a uniformly random wait between 0 and
 * min(cap, base × 2^(retryCount − 1)), so clients that failed together do not retry together.
 */
export function fullJitter(retryCount: number, base: number, cap: number, random: () => number = Math.random): number {
    return Math.floor(random() * Math.min(cap, base * 2 ** (retryCount - 1)));
}

/** True when this failure may be retried: a network error or the request timeout with a listed code. */
export function isRetryableError(policy: RetryPolicy, err: HttpError): boolean {
    // Only what went wrong on the way: never an abort, a refused option, a listener's or a proxy's
    // refusal, nor the call's deadline (a phase's timeout is the hop's, the deadline the call's).
    if (err.typeof !== requestError && err.typeof !== requestTimeout && err.typeof !== phaseTimeout) {
        return false;
    }

    const code = (err.data as CodedError | null)?.code;
    return typeof code === 'string' && policy.errorCodes.has(code);
}

/**
 * The wait before retrying a response with a retryable status, in ms; undefined when it must not
 * be retried because its `Retry-After` asks for longer than `maxRetryAfter`.
 */
export function responseRetryDelay(policy: RetryPolicy, res: HopResponse, retryCount: number): number | undefined {
    const retryAfter = parseRetryAfter(res.headers['retry-after'], Date.now());
    if (retryAfter === undefined) {
        return policy.backoff(retryCount);
    }

    return retryAfter > policy.maxRetryAfter ? undefined : retryAfter;
}

/** `Retry-After` in ms from `now`: delta-seconds or an HTTP-date (a past date is 0); undefined when absent or malformed. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
    if (value === undefined) {
        return undefined;
    }

    const trimmed = value.trim();
    if (/^\d+$/.test(trimmed)) {
        return Number(trimmed) * 1000;
    }

    // An HTTP-date starts with the day name; Date.parse alone would take '-1' for a year.
    const date = /^[A-Za-z]/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
    return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Lets go of the response of a discarded attempt: a small body is read to its end (its socket then
 * returns to the pool), any other is destroyed. Nothing is left holding a socket.
 */
export function discardResponse(res: HopResponse): void {
    const length = Number(res.headers['content-length']);
    if (Number.isInteger(length) && length <= drainLimit) {
        // A connection that breaks while draining must not become an unhandled 'error'.
        res.on('error', ignore);
        res.resume();
    } else {
        res.destroy();
    }
}

function ignore(): void {}

/** The attempts made for a response of a request with the `retry` option (its error then tells them). */
export const attemptsOf = new WeakMap<HopResponse, number>();

/** Records on the final failure how many attempts were made (`data.attempts`). */
export function withAttempts(err: HttpError, attempts: number): HttpError {
    const data = err.data as unknown;
    if (typeof data === 'object' && data !== null) {
        (data as { attempts?: number }).attempts = attempts;
    } else {
        err.data = { attempts };
    }

    return err;
}
