import type { ClientRequest, IncomingMessage, OutgoingMessage } from 'node:http';
import { declaredLength, requestMethodOf, responseHasNoBody } from '../src/common/message-body.js';

/**
 * The body bytes of one message: the bytes of the payload as transferred (compressed when the body
 * is), without the headers or the chunked framing, which is what the conventions'
 * `http.*.body.size` measure and what `content-length` says when it is present.
 */
export interface BodyCount {
    bytes: number;
    /** Set when `bytes` is the declared `content-length`: true only of a body received whole. */
    readonly declared?: boolean;
}

/**
 * The body of a request about to be sent: its `content-length` when it has one (the client sets it
 * for every string, Buffer and JSON payload), 0 without a payload, else counted as it is written.
 * Counting costs a little on every write, so it is kept for streamed payloads.
 */
export function requestBodyOf(req: ClientRequest, hasPayload: boolean): BodyCount {
    const declared = declaredLength(req.getHeader('content-length'));
    if (declared !== undefined) {
        return { bytes: declared };
    }

    return hasPayload ? countOutgoingBody(req) : { bytes: 0 };
}

/**
 * The body of a response being received: none for a HEAD, 204 or 304 (Node reads no body then,
 * whatever `content-length` says), its `content-length` when it has one (which holds once the
 * response is complete), else counted as it arrives. The method is the response's own to tell, over
 * HTTP/1.1 and HTTP/2 alike and for the cache's answers, which have no request.
 */
export function responseBodyOf(res: IncomingMessage): BodyCount {
    if (responseHasNoBody(requestMethodOf(res), res.statusCode)) {
        return { bytes: 0 };
    }

    const declared = declaredLength(res.headers['content-length']);
    return declared === undefined ? countIncomingBody(res) : { bytes: declared, declared: true };
}

/**
 * The body of a request a server receives: its `content-length` when it has one (which holds once
 * the request is complete), 0 when it has neither that nor `transfer-encoding` (no body, by HTTP's
 * rules), else counted as it arrives.
 */
export function receivedRequestBodyOf(req: IncomingMessage): BodyCount {
    const declared = declaredLength(req.headers['content-length']);
    if (declared !== undefined) {
        return { bytes: declared, declared: true };
    }

    return req.headers['transfer-encoding'] === undefined ? { bytes: 0 } : countIncomingBody(req);
}

// Node offers no byte count of a message body, and a `data` listener would start the flow of a
// body the caller may not consume yet. So the counters sit on the message's own methods: the HTTP
// parser hands every body chunk of an incoming message to `push()`, and every byte written to an
// outgoing one goes through `write()` or `end()`. The shared functions below find their counter
// here rather than being closures made for every message.
type PushFn = IncomingMessage['push'];
type WriteFn = (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;
type EndFn = (chunk?: unknown, encoding?: unknown, callback?: unknown) => OutgoingMessage;

interface IncomingCount extends BodyCount {
    readonly push: PushFn;
}

interface OutgoingCount extends BodyCount {
    readonly write: WriteFn;
    readonly end: EndFn;
}

// The counter rides on the message under a symbol: a WeakMap entry per message was the costliest
// line of the per-hop work in the profile of an instrumented client (WeakMap.set per hop).
const incomingCountKey = Symbol('tracewire.incomingBodyCount');
const outgoingCountKey = Symbol('tracewire.outgoingBodyCount');
type CountedIncoming = IncomingMessage & { [incomingCountKey]?: IncomingCount };
type CountedOutgoing = OutgoingMessage & { [outgoingCountKey]?: OutgoingCount };

/** Counts the body of a request or response being received, from now on (bytes already buffered included). */
export function countIncomingBody(message: IncomingMessage): BodyCount {
    const existing = (message as CountedIncoming)[incomingCountKey];
    if (existing !== undefined) {
        return existing;
    }

    const count: IncomingCount = { bytes: message.readableLength, push: message.push };
    (message as CountedIncoming)[incomingCountKey] = count;
    message.push = countingPush;
    return count;
}

/** Counts the body written to a request or response being sent, from now on. */
export function countOutgoingBody(message: OutgoingMessage): BodyCount {
    const existing = (message as CountedOutgoing)[outgoingCountKey];
    if (existing !== undefined) {
        return existing;
    }

    const target = message as unknown as { write: WriteFn; end: EndFn };
    const count: OutgoingCount = { bytes: 0, write: target.write, end: target.end };
    (message as CountedOutgoing)[outgoingCountKey] = count;
    target.write = countingWrite;
    target.end = countingEnd;
    return count;
}

function countingPush(this: IncomingMessage, chunk: unknown, encoding?: BufferEncoding): boolean {
    const count = (this as CountedIncoming)[incomingCountKey]!;
    if (chunk !== null && chunk !== undefined) {
        count.bytes += byteLength(chunk, encoding);
    }

    return count.push.call(this, chunk, encoding);
}

function countingWrite(this: OutgoingMessage, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const count = (this as CountedOutgoing)[outgoingCountKey]!;
    count.bytes += byteLength(chunk, encoding);
    return count.write.call(this, chunk, encoding, callback);
}

function countingEnd(this: OutgoingMessage, chunk?: unknown, encoding?: unknown, callback?: unknown): OutgoingMessage {
    const count = (this as CountedOutgoing)[outgoingCountKey]!;
    // end(callback) and end() write nothing.
    if (chunk !== null && chunk !== undefined && typeof chunk !== 'function') {
        count.bytes += byteLength(chunk, encoding);
    }

    return count.end.call(this, chunk, encoding, callback);
}

function byteLength(chunk: unknown, encoding: unknown): number {
    if (typeof chunk === 'string') {
        return Buffer.byteLength(
            chunk,
            typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8'
        );
    }

    const size = (chunk as Partial<ArrayBufferView> | null | undefined)?.byteLength;
    return typeof size === 'number' ? size : 0;
}
