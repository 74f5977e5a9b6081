import { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { headersOf, withoutFields } from './fields.js';
import type { CachedResponse } from './store.js';

/**
 * The responses the cache hands the request flow: one made from a stored response (a readable
 * `IncomingMessage` with `statusCode`, `headers`, `rawHeaders` and the stored body as it came), the
 * 504 of `only-if-cached`, and the Cache-Status added to a response from the network.
 */

const replacedOnAnswer = new Set(['age', 'cache-status']);

/**
 * A response answering from `entry`: its stored fields with `Age` set to `age` seconds and
 * `cacheStatus` appended; no body for HEAD or a 304.
 */
export function responseFrom(
    entry: CachedResponse,
    method: string,
    age: number,
    cacheStatus: string,
    statusCode = entry.statusCode
): IncomingMessage {
    const stored = entry.rawHeaders;
    const upstreamStatus = stored.filter((_, i) => i % 2 === 1 && stored[i - 1]!.toLowerCase() === 'cache-status');
    const rawHeaders = withoutFields(stored, replacedOnAnswer);
    rawHeaders.push('Age', String(Math.max(0, Math.floor(age))));
    rawHeaders.push('Cache-Status', [...upstreamStatus, cacheStatus].join(', '));
    const bodyless = method === 'HEAD' || statusCode === 304;
    return made(
        statusCode,
        statusCode === entry.statusCode ? entry.statusMessage : 'Not Modified',
        rawHeaders,
        bodyless ? undefined : entry.body
    );
}

/** The 504 a cache answers `only-if-cached` with when it has nothing usable (RFC 9111 5.2.1.7). */
export function gatewayTimeout(cacheStatus: string): IncomingMessage {
    return made(504, 'Gateway Timeout', ['Content-Length', '0', 'Cache-Status', cacheStatus], undefined);
}

/** Appends the cache's member to a network response's Cache-Status, in `headers` and `rawHeaders`. */
export function addCacheStatus(res: IncomingMessage, member: string): void {
    // Reading `headers` first makes Node build the object from the fields as received.
    const headers = res.headers;
    const upstream = headers['cache-status'];
    headers['cache-status'] = upstream === undefined ? member : `${upstream}, ${member}`;
    res.rawHeaders.push('Cache-Status', member);
}

function made(
    statusCode: number,
    statusMessage: string,
    rawHeaders: string[],
    body: Buffer | undefined
): IncomingMessage {
    // No socket: the answer never touched the network.
    const res = new IncomingMessage(null as unknown as Socket);
    res.statusCode = statusCode;
    res.statusMessage = statusMessage;
    res.httpVersion = '1.1';
    res.httpVersionMajor = 1;
    res.httpVersionMinor = 1;
    res.rawHeaders = rawHeaders;
    res.headers = headersOf(rawHeaders);
    if (body !== undefined && body.length > 0) {
        res.push(body);
    }

    res.push(null);
    res.complete = true;
    return res;
}

/**
 * Copies the body of `res` as the caller reads it, and hands the copy to `done` once the whole body
 * arrived; nothing when it ends early or passes `limit` bytes. The caller keeps the response
 * itself: the copy is taken where Node's parser pushes each chunk, so the flow of the stream and its
 * backpressure are untouched.
 */
export function copyBody(res: IncomingMessage, limit: number, done: (body: Buffer) => void): void {
    const push = res.push;
    const chunks: Buffer[] = [];
    let size = 0;
    res.push = function copyingPush(chunk: unknown, encoding?: BufferEncoding): boolean {
        if (chunk === null) {
            res.push = push;
            if (size <= limit && res.complete) {
                done(Buffer.concat(chunks, size));
            }
        } else if (size <= limit && Buffer.isBuffer(chunk)) {
            size += chunk.length;
            if (size <= limit) {
                chunks.push(chunk);
            } else {
                chunks.length = 0;
            }
        }

        return push.call(res, chunk, encoding);
    };
}
