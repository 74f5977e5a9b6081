import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { declaredLength, noteRequestMethod, responseHasNoBody } from '../../../common/message-body.js';
import { http } from '../../../common/node-modules.js';
import { cancelStream } from './error-codes.js';
import { responseFields } from './headers.js';

// The stream a response reads, in a slot of ours: IncomingMessage has no place for it.
const streamOf = Symbol('tracewire.http2Stream');
type StreamResponse = IncomingMessage & {
    [streamOf]: ClientHttp2Stream;
    _readableState: { readingMore: boolean };
};

const responseOf = Symbol('tracewire.http2Response');
// How the stream's DATA ended, once it did: true for END_STREAM (the body is whole), false for a reset.
const endedWhole = Symbol('tracewire.http2EndedWhole');
// The body's bytes so far, and how many its head frames it to (content-length; 0 when it has none by
// definition; undefined when it says nothing).
const receivedLength = Symbol('tracewire.http2ReceivedLength');
const framedLength = Symbol('tracewire.http2FramedLength');
type ResponseStream = ClientHttp2Stream & {
    // Until the stream closes (releaseResponse).
    [responseOf]: StreamResponse | undefined;
    [endedWhole]?: boolean;
    [nodePush]: ClientHttp2Stream['push'];
    [receivedLength]: number;
    [framedLength]: number | undefined;
};
const nodePush = Symbol('tracewire.nodePush');

/**
 * The response of an HTTP/2 stream as the client hands it on (README "HTTP/2"): an `IncomingMessage`
 * with no socket, whose `statusCode`, `headers`, `rawHeaders` and `httpVersion` (`'2.0'`) come from
 * the stream's HEADERS and whose body is the stream's DATA, with the stream's own flow control (the
 * stream pauses while the body is not read). `statusMessage` is the status's standard text: HTTP/2
 * carries none. It has no `req`: the method it answers is noted on it (`requestMethodOf`). Everything
 * that reads a response (the helpers, `read()`, the cache, decoding) reads it as it reads an HTTP/1.1
 * one. A body the server cut short fails: it never ends as if it were whole.
 */
export function responseOfStream(
    stream: ClientHttp2Stream,
    method: string,
    statusCode: number,
    headers: IncomingHttpHeaders,
    rawHeaders: string[]
): IncomingMessage {
    const res = new http.IncomingMessage(null as unknown as Socket) as StreamResponse;
    res[streamOf] = stream;
    res.statusCode = statusCode;
    res.statusMessage = http.STATUS_CODES[statusCode] ?? '';
    res.httpVersion = '2.0';
    res.httpVersionMajor = 2;
    res.httpVersionMinor = 0;
    res.headers = headers;
    res.rawHeaders = rawHeaders;
    // It has no `req` to tell its method by: a HEAD's has no body, whatever its content-encoding says.
    noteRequestMethod(res, method);
    res._read = readStream;
    res._destroy = destroyStream;
    const read = stream as ResponseStream;
    read[responseOf] = res;
    read[receivedLength] = 0;
    read[framedLength] = responseHasNoBody(method, statusCode) ? 0 : declaredLength(headers['content-length']);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('trailers', onTrailers);
    return res;
}

/**
 * Follows how a stream's DATA ends, from its first frame: Node ends a stream's readable side alike
 * for END_STREAM and for a RST_STREAM NO_ERROR that cuts the body short, but in the latter the stream
 * is already closed when the end is pushed. (Called as the stream opens: a response whose HEADERS end
 * the stream pushes its end before the 'response' event.)
 */
export function watchStreamEnd(stream: ClientHttp2Stream): void {
    const watched = stream as ResponseStream;
    watched[nodePush] = stream.push;
    watched.push = pushNotingEnd;
}

function pushNotingEnd(this: ResponseStream, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null && this[endedWhole] === undefined) {
        this[endedWhole] = !this.closed;
    }

    return this[nodePush](chunk, encoding);
}

/** The body stopped before its end (the stream was reset, the session went away): the response fails with `err`. */
export function cutResponse(stream: ClientHttp2Stream, err: Error): void {
    const res = (stream as ResponseStream)[responseOf];
    if (res !== undefined && !res.complete && !res.destroyed) {
        res.destroy(err);
    }
}

/**
 * The stream closed: it lets go of its response. Node's http2 core keeps a closed stream reachable for
 * a while (often past a young-generation collection, so until a full one), and a stream still pointing
 * at its response would keep the response, its reader and its body alive with it.
 */
export function releaseResponse(stream: ClientHttp2Stream): void {
    (stream as ResponseStream)[responseOf] = undefined;
}

function onData(this: ResponseStream, chunk: Buffer): void {
    this[receivedLength] += chunk.length;
    const res = this[responseOf];
    if (res !== undefined && !res.push(chunk)) {
        // The reader is behind: the stream stops taking DATA, so its window closes and the server waits.
        this.pause();
    }
}

function onEnd(this: ResponseStream): void {
    if ((this.rstCode ?? 0) !== 0 || (this[endedWhole] === false && !framedWhole(this))) {
        // Reset, or cut with its session: what came is not the whole body. The stream's close follows
        // at once, and the exchange fails the response with what cut it (cutResponse).
        return;
    }

    const res = this[responseOf];
    if (res !== undefined) {
        res.complete = true;
        res.push(null);
    }
}

/**
 * A stream reset with NO_ERROR after every byte its head declared: the body is whole by its framing
 * (RFC 9113 8.1.1: a content-length must equal the DATA received). Seen from Node's own server under
 * load, which closes a stream whose response is written on the next turn of its loop: an END_STREAM
 * frame still queued then is dropped for the RST_STREAM. A body whose head gives no length stays cut:
 * nothing tells a whole one from a short one.
 */
function framedWhole(stream: ResponseStream): boolean {
    return stream[receivedLength] === stream[framedLength];
}

function onTrailers(this: ResponseStream, received: IncomingHttpHeaders, _flags: number, raw: string[]): void {
    const res = this[responseOf];
    if (res === undefined) {
        return;
    }

    const { headers, rawHeaders } = responseFields(received, raw);
    res.trailers = headers as NodeJS.Dict<string>;
    res.rawTrailers = rawHeaders;
}

function readStream(this: StreamResponse): void {
    // As IncomingMessage's own `_read` marks it, so Node's readable machinery treats both alike.
    this._readableState.readingMore = false;
    this[streamOf].resume();
}

/**
 * The response let go before its end (the caller destroyed it, or it was cut): the stream is reset
 * with CANCEL, which tells the server to stop sending, and the session carries on.
 */
function destroyStream(this: StreamResponse, err: Error | null, callback: (err?: Error | null) => void): void {
    const stream = this[streamOf];
    if (!this.complete) {
        this.aborted = true;
        this.emit('aborted');
        // Only a body left unread: a stream read to its end closes by itself, and a reset for each of
        // them would look like the rapid-reset attack to the server (Node's closes such a session).
        cancelStream(stream);
    }

    callback(err);
}
