import type { CodedError } from '../client/contract/errors.js';
import type { Http2SessionEnd as SessionEnd } from '../client/contract/failure-data.js';
import { errorCodeName } from '../client/wire/http2/error-codes.js';
import { streamFailure } from '../client/wire/http2/stream-failure.js';
import { systemCaHint } from './tls-hint.js';
import type { TlsFailureCode } from './types.js';

/**
 * The errors Node.js gives for each fault a mock plays (docs/testing.md, "Faults"), word for word, so
 * that the transport's own mapping (`requestError`, `streamFailure`) turns them into the very errors a
 * caller sees from the network; test/testing/parity.test.ts holds them to a real server's.
 */

/** Nothing listens on the origin's port: the connection is refused. */
export function connectionRefused(hostname: string, port: number): CodedError {
    return Object.assign(new Error(`connect ECONNREFUSED ${hostname}:${port}`), {
        errno: -111,
        code: 'ECONNREFUSED',
        syscall: 'connect',
        address: hostname,
        port
    });
}

/** The server closed an HTTP/1.1 connection before its response. */
export function socketHangUp(): CodedError {
    return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}

/** An HTTP/1.1 response whose connection closed before its body ended. */
export function bodyAborted(): CodedError {
    return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

const tlsMessages: Record<TlsFailureCode, string> = {
    DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
    SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in certificate chain',
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the first certificate',
    CERT_HAS_EXPIRED: 'certificate has expired'
};

// The codes whose message Node.js may follow with its hint on trusting the system's CAs (tls-hint.ts).
const hintedCodes = new Set<string>([
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE'
]);

/** The server's certificate did not verify, with the message this Node.js gives. */
export function tlsFailure(code: TlsFailureCode = 'DEPTH_ZERO_SELF_SIGNED_CERT'): Promise<CodedError> {
    const message = tlsMessages[code];
    if (message === undefined) {
        throw new TypeError(`A TLS fault's code is one of ${Object.keys(tlsMessages).join(', ')}, not ${String(code)}`);
    }

    const hint = hintedCodes.has(code) ? systemCaHint() : Promise.resolve('');
    return hint.then((text) => Object.assign(new Error(message + text), { code }));
}

// RFC 9113 7.
const refusedStreamCode = 0x7;
const cancelCode = 0x8;

/** A stream the server reset with REFUSED_STREAM. */
export function refusedStream(streamId: number): CodedError {
    return streamFailure({ id: streamId, rstCode: refusedStreamCode }, undefined, streamError(refusedStreamCode));
}

/**
 * A stream whose session ended under it: by a GOAWAY (`end`), or with its connection (`end`
 * undefined). Above the GOAWAY's last stream id, Node resets the stream with REFUSED_STREAM; at or
 * below it, the session's close fails it with the GOAWAY's error code, or with none (CANCEL, Node's
 * own) for a NO_ERROR one or a dropped connection.
 */
export function sessionEnded(streamId: number, end: SessionEnd | undefined): CodedError {
    const state = { end, gone: true };
    if (end?.event === 'goaway' && streamId > end.lastStreamId) {
        return streamFailure({ id: streamId, rstCode: refusedStreamCode }, state, streamError(refusedStreamCode));
    }

    const code = end?.event === 'goaway' ? end.errorCode : 0;
    if (code !== 0) {
        const err = Object.assign(new Error(`Session closed with error code ${code}`), {
            code: 'ERR_HTTP2_SESSION_ERROR'
        });
        return streamFailure({ id: streamId, rstCode: code }, state, err);
    }

    return streamFailure({ id: streamId, rstCode: cancelCode }, state, undefined);
}

/** Node's error for a stream reset with `code`. */
function streamError(code: number): CodedError {
    return Object.assign(new Error(`Stream closed with error code NGHTTP2_${errorCodeName(code)}`), {
        code: 'ERR_HTTP2_STREAM_ERROR'
    });
}
