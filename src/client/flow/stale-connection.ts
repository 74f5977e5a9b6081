import type { HttpError } from '../../errors/index.js';
import { type CodedError, requestError } from '../contract/errors.js';
import type { ResendReason } from '../contract/types.js';

/**
 * The re-send of a request that failed on a kept-alive connection the server had just closed (the
 * README's "Stale connections"). Go's net/http transport is the model: the client chose to reuse
 * that connection, so the failure is the client's to absorb, once, when nothing of the response
 * came back and sending the request again cannot do anything the caller did not ask for.
 */

// The methods whose repetition the caller cannot tell from one request (RFC 9110 9.2.2).
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

// What a write to, or a read from, a connection the peer closed while it sat idle gives.
const closedConnectionCodes = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** What the flow knows of a hop that failed before its response (the wire facts come from the hop). */
export interface FailedHop {
    readonly err: HttpError;
    readonly method: string;
    /** The headers as sent (lower-case names), for the caller's `Idempotency-Key`. */
    readonly headers: Readonly<Record<string, unknown>>;
    /** True when the hop's connection came from the pool rather than being opened for it. */
    readonly reusedSocket: boolean;
    /** The bytes the connection read after the hop got it: anything is the response begun. */
    readonly responseBytes: number;
    /** True when the payload (none, a string, a Buffer, or a stream with its copy) can be sent again. */
    readonly replayable: boolean;
    /** Why this hop is itself a re-send, if it is one. */
    readonly resendReason: ResendReason | undefined;
}

/**
 * True when the hop failed because its reused connection was already closed by the server: reset or
 * broken pipe before a single byte of the response. The pool's other idle connections are suspect too.
 */
export function failedOnStaleConnection(hop: FailedHop): boolean {
    const { err } = hop;
    if (!hop.reusedSocket || hop.responseBytes !== 0 || err.typeof !== requestError) {
        return false;
    }

    const code = (err.data as CodedError | null)?.code;
    return code !== undefined && closedConnectionCodes.has(code);
}

/**
 * True when the method (or the caller, with an `Idempotency-Key` or `X-Idempotency-Key` header, as
 * Go decides it) makes a second copy of the request harmless.
 */
export function isIdempotent(hop: FailedHop): boolean {
    return (
        idempotentMethods.has(hop.method) ||
        hop.headers['idempotency-key'] !== undefined ||
        hop.headers['x-idempotency-key'] !== undefined
    );
}

/**
 * The reason to send again at once a hop the server says it never processed, whatever its method
 * (RFC 9113 8.7): an HTTP/2 stream refused (REFUSED_STREAM), or above the last stream a GOAWAY says
 * was processed; once, and only when its payload can be sent again. Undefined otherwise.
 */
export function unprocessedResendReason(hop: FailedHop): ResendReason | undefined {
    if (hop.resendReason !== undefined || !hop.replayable || hop.err.typeof !== requestError) {
        return undefined;
    }

    const code = (hop.err.data as CodedError | null)?.code;
    return code === 'ERR_HTTP2_REFUSED_STREAM'
        ? 'http2-refused-stream'
        : code === 'ERR_HTTP2_GOAWAY'
          ? 'http2-goaway'
          : undefined;
}

/**
 * The reason to send the hop again at once, or undefined when its failure stands: it failed on a
 * stale connection, the request is idempotent and its payload can be sent again, and the hop is not
 * already a re-send (one per hop).
 */
export function staleResendReason(hop: FailedHop): ResendReason | undefined {
    return hop.resendReason === undefined && hop.replayable && failedOnStaleConnection(hop) && isIdempotent(hop)
        ? 'stale-connection'
        : undefined;
}
