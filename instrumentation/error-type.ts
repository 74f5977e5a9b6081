import { ERROR_TYPE_VALUE_OTHER } from './semconv.js';

interface CodedError {
    name?: unknown;
    code?: unknown;
}

/** `error.type` of a hop that got a response: its status as a string for 4xx and 5xx. */
export function statusErrorType(statusCode: number | undefined): string | undefined {
    return statusCode !== undefined && statusCode >= 400 ? String(statusCode) : undefined;
}

/**
 * `error.type` of a failed hop: `timeout`, the system error code (`ECONNREFUSED`...), else the
 * status of a 4xx/5xx response, else `_OTHER`; undefined for a cancellation the caller asked for
 * through its AbortSignal, which is not an error.
 */
export function failureErrorType(err: Error, statusCode: number | undefined): string | undefined {
    const cause = causeOf(err) ?? (err as CodedError);
    if (cause.name === 'AbortError' || cause.code === 'ABORT_ERR') {
        return undefined;
    }

    if (cause.code === 'ETIMEDOUT') {
        return 'timeout';
    }

    if (typeof cause.code === 'string' && cause.code !== '') {
        return cause.code;
    }

    return statusErrorType(statusCode) ?? ERROR_TYPE_VALUE_OTHER;
}

/** The underlying Error the client keeps in `err.data` of a failure, when there is one. */
export function causeOf(err: Error): (Error & CodedError) | undefined {
    const data = (err as { data?: unknown }).data;
    return data instanceof Error ? data : undefined;
}
