import { errorCodeName } from './http2/error-codes.js';
import type { StreamFailureDetails } from './http2/stream-failure.js';

/**
 * How the HTTP/2 session of a failed stream ended, when its end is what failed it (README "HTTP/2"):
 * `goaway`, the server sent GOAWAY (`errorCode` its code by name, `NO_ERROR` for a graceful shutdown),
 * or `ping-timeout`, the session stopped answering PINGs.
 */
export interface Http2SessionEndReport {
    readonly event: 'goaway' | 'ping-timeout';
    /** With `goaway`: the GOAWAY's error code by name (RFC 9113 7), e.g. `NO_ERROR`, `INTERNAL_ERROR`. */
    readonly errorCode: string | undefined;
}

/**
 * The session end behind `err`, the HttpError of a hop (its cause in `err.data`) or the cause itself:
 * undefined for any failure a session's end did not cause. Apart from the HTTP/2 transport (its
 * declaration names none of it), which a process that never speaks HTTP/2 does not load.
 */
export function http2SessionEndOf(err: unknown): Http2SessionEndReport | undefined {
    if (typeof err !== 'object' || err === null) {
        return undefined;
    }

    const data = (err as { data?: unknown }).data;
    const failure = (data instanceof Error ? data : err) as { http2?: StreamFailureDetails };
    const end = failure.http2?.session;
    if (end === undefined) {
        return undefined;
    }

    return { event: end.event, errorCode: end.event === 'goaway' ? errorCodeName(end.errorCode) : undefined };
}
