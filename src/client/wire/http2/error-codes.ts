import type { ClientHttp2Stream } from 'node:http2';

/**
 * The HTTP/2 error codes (RFC 9113 7) the client names in its messages, and the two it acts on:
 * REFUSED_STREAM (the server did not process the stream: stream-failure.ts) and CANCEL (a stream no
 * longer needed, which `cancelStream` resets).
 */

// By number.
const errorCodeNames = [
    'NO_ERROR',
    'PROTOCOL_ERROR',
    'INTERNAL_ERROR',
    'FLOW_CONTROL_ERROR',
    'SETTINGS_TIMEOUT',
    'STREAM_CLOSED',
    'FRAME_SIZE_ERROR',
    'REFUSED_STREAM',
    'CANCEL',
    'COMPRESSION_ERROR',
    'CONNECT_ERROR',
    'ENHANCE_YOUR_CALM',
    'INADEQUATE_SECURITY',
    'HTTP_1_1_REQUIRED'
];

export const refusedStreamCode = 0x7;

const cancelCode = 0x8;

export function errorCodeName(code: number | undefined): string {
    return errorCodeNames[code ?? 0] ?? `error code ${code}`;
}

/**
 * Resets a stream that is still open with CANCEL (RFC 9113 8.7): the server stops sending, and the
 * session carries on with its other streams.
 */
export function cancelStream(stream: ClientHttp2Stream | undefined): void {
    if (stream !== undefined && !stream.closed && !stream.destroyed) {
        stream.close(cancelCode);
    }
}
