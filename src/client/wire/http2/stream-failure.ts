import type { ClientHttp2Stream } from 'node:http2';
import type { CodedError } from '../../contract/errors.js';
import type { Http2SessionEnd, Http2StreamFailure } from '../../contract/failure-data.js';
import { errorCodeName, refusedStreamCode } from './error-codes.js';

/**
 * What a stream that failed reports (README "HTTP/2"), its cause kept: whether the server said it
 * never processed the request — REFUSED_STREAM, or a stream above the last one a GOAWAY says was
 * processed (RFC 9113 6.8, 8.7) — which the flow may send again (flow/stale-connection.ts), and
 * otherwise what cut it. `http2` on the error tells the stream, its RST_STREAM code and how its
 * session ended, for the spans.
 */

/** What the error of a failed stream says of it (`data.http2`): the stream, its reset code, its session's end. */
export type StreamFailureDetails = Http2StreamFailure;

/** What a stream's session says of how it ended: how it was told to (GOAWAY, PING timeout), if it was, and whether it is gone. */
export interface SessionState {
    readonly end: Http2SessionEnd | undefined;
    readonly gone: boolean;
}

/**
 * The error of a stream that failed with Node's `err`, or closed before its exchange was over
 * without one (`err` undefined: reset by the server with NO_ERROR or CANCEL, or cut with its
 * session); `session` says how its session ended, if it did.
 */
export function streamFailure(
    stream: Pick<ClientHttp2Stream, 'id' | 'rstCode'>,
    session: SessionState | undefined,
    err: Error | undefined
): CodedError {
    const end = session?.end;
    const id = stream.id;
    const rstCode = stream.rstCode;
    let failure: CodedError;
    // (Node gives a stream its id as it is opened, on a session that is up: a stream here has one.)
    if (end?.event === 'goaway' && (id as number) > end.lastStreamId) {
        failure = coded(
            `The HTTP/2 server closed the session (GOAWAY ${errorCodeName(end.errorCode)}) before processing stream ${id} (it processed up to ${end.lastStreamId})`,
            'ERR_HTTP2_GOAWAY',
            err
        );
    } else if (rstCode === refusedStreamCode) {
        failure = coded(
            'The HTTP/2 server refused the stream (REFUSED_STREAM): it did not process it',
            'ERR_HTTP2_REFUSED_STREAM',
            err
        );
    } else if (err !== undefined) {
        failure = err;
    } else if (end !== undefined || session?.gone === true || rstCode === undefined) {
        failure = coded(
            `The HTTP/2 session closed before the response ended${end?.event === 'goaway' ? ` (GOAWAY ${errorCodeName(end.errorCode)})` : ''}`,
            'ERR_HTTP2_STREAM_CLOSED',
            undefined
        );
    } else {
        failure = coded(
            `The HTTP/2 server reset the stream before the response ended (RST_STREAM ${errorCodeName(rstCode)})`,
            'ERR_HTTP2_STREAM_CLOSED',
            undefined
        );
    }

    const details: StreamFailureDetails = { streamId: id, rstCode, session: end };
    (failure as CodedError & { http2?: StreamFailureDetails }).http2 = details;
    return failure;
}

function coded(message: string, code: string, cause: Error | undefined): CodedError {
    return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}
