import type { Attributes, Span } from '@opentelemetry/api';
import { http2SessionEndOf, type ResendReason } from '../src/client/index.js';

/*
 * What a hop's span says of the transport beyond the conventions' attributes (README "HTTP/2"): why a
 * hop re-sends the one before it, and, on a stream that failed because its HTTP/2 session ended, how
 * that session was told to end.
 */

/** `network.protocol.version` as the conventions spell it: `1.1`, `2` (Node's `httpVersion` says `2.0`). */
export function protocolVersionOf(httpVersion: string): string {
    return httpVersion === '2.0' ? '2' : httpVersion;
}

/**
 * Why a hop re-sends the one before it outside redirects and retries (`uri.resendReason`):
 * `stale-connection`, `http2-goaway` or `http2-refused-stream`. It is counted in
 * `http.request.resend_count` with the others.
 */
export const ATTR_RESEND_REASON = 'tracewire.resend.reason';

/**
 * On a failed hop the client sent again at once (`uri.resent`): why — `stale-connection`,
 * `http2-goaway` or `http2-refused-stream`, the next hop's `tracewire.resend.reason`. Its failure
 * never reached the caller (docs/observability.md, "Re-sent hops").
 */
export const ATTR_RESENT = 'tracewire.resent';

/**
 * True for a re-send of a request the server said it never processed (an HTTP/2 stream refused, or
 * above a GOAWAY's last stream id): nothing failed that the caller saw, nor on the server, so its hop
 * is no error (docs/observability.md, "Re-sent hops").
 */
export function isUnprocessedResend(reason: ResendReason | undefined): boolean {
    return reason === 'http2-goaway' || reason === 'http2-refused-stream';
}

/** On a stream cut by its session's end: `goaway` (the server sent GOAWAY) or `ping-timeout` (it stopped answering PINGs). */
export const ATTR_HTTP2_SESSION_END = 'tracewire.http2.session_end';

/** With `goaway`: the GOAWAY's error code by name (`NO_ERROR` for a graceful shutdown). */
export const ATTR_HTTP2_GOAWAY_ERROR_CODE = 'tracewire.http2.goaway.error_code';

/** Adds the resend reason of a hop, if it has one, to its span's start attributes. */
export function addResendReason(attributes: Attributes, reason: ResendReason | undefined): void {
    if (reason !== undefined) {
        attributes[ATTR_RESEND_REASON] = reason;
    }
}

/** Records on the span of a failed hop how its HTTP/2 session ended, when that is what failed it. */
export function recordSessionEnd(span: Span, err: Error): void {
    const end = http2SessionEndOf(err);
    if (end === undefined) {
        return;
    }

    span.setAttribute(ATTR_HTTP2_SESSION_END, end.event);
    if (end.errorCode !== undefined) {
        span.setAttribute(ATTR_HTTP2_GOAWAY_ERROR_CODE, end.errorCode);
    }
}
