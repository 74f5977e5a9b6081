import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { noteRequestMethod } from '../../common/message-body.js';
import { http } from '../../common/node-modules.js';
import { holdBody } from '../bodies/held-body.js';
import type { CachedResponse } from '../contract/cache-store.js';
import { fieldValue, headersOf, withoutFields } from './fields.js';
import { ListMemo } from './list-memo.js';

/**
 * The responses the cache hands the request flow: one made from a stored response (a readable
 * `IncomingMessage` with `statusCode`, `headers`, `rawHeaders` and the stored body as it came), the
 * 504 of `only-if-cached`, and the Cache-Status added to a response from the network.
 */

const replacedOnAnswer = new Set(['age', 'cache-status']);
const noBody = Buffer.alloc(0);

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
    const answer = answerFields(entry.rawHeaders);
    const seconds = Math.max(0, Math.floor(age));
    // What nearly every revalidation's answer, made as its 304 arrives, says: no number made a string for it.
    const ageValue = seconds === 0 ? '0' : String(seconds);
    const status = answer.upstreamStatus === undefined ? cacheStatus : `${answer.upstreamStatus}, ${cacheStatus}`;
    // One copy of the list at its size, its last two values filled in (a spread with the four lines
    // after it copied the list through the iteration protocol, then grew it).
    const rawHeaders = answer.rawHeaders.slice();
    rawHeaders[rawHeaders.length - 3] = ageValue;
    rawHeaders[rawHeaders.length - 1] = status;
    const headers: IncomingHttpHeaders = { ...answer.headers, age: ageValue, 'cache-status': status };
    const cookies = headers['set-cookie'];
    if (cookies !== undefined) {
        // The one array in the object: each answer its own, for the caller may change it.
        headers['set-cookie'] = [...cookies];
    }

    const bodyless = method === 'HEAD' || statusCode === 304;
    const message = statusCode === entry.statusCode ? entry.statusMessage : 'Not Modified';
    return made(method, statusCode, message, rawHeaders, headers, bodyless ? undefined : entry.body);
}

interface AnswerFields {
    /**
     * The stored fields without Age and Cache-Status, which each answer sets anew: those two last,
     * their values left empty for each answer's copy.
     */
    rawHeaders: readonly string[];
    headers: IncomingHttpHeaders;
    /** The Cache-Status the stored response came with, which ours is appended to. */
    upstreamStatus: string | undefined;
}

// What every answer from one stored field list shares, worked out once per list (stored fields never
// change: an update makes a new list).
const answerFieldsOf = new ListMemo<AnswerFields>();

function answerFields(stored: readonly string[]): AnswerFields {
    return answerFieldsOf.of(stored, readAnswerFields);
}

function readAnswerFields(stored: readonly string[]): AnswerFields {
    const kept = withoutFields(stored, replacedOnAnswer);
    return {
        rawHeaders: [...kept, 'Age', '', 'Cache-Status', ''],
        headers: headersOf(kept),
        upstreamStatus: fieldValue(stored, 'cache-status')
    };
}

/** The 504 a cache answers `only-if-cached` with when it has nothing usable (RFC 9111 5.2.1.7). */
export function gatewayTimeout(cacheStatus: string): IncomingMessage {
    const rawHeaders = ['Content-Length', '0', 'Cache-Status', cacheStatus];
    // Empty and uncoded whatever the method: the method needs no noting.
    return made(undefined, 504, 'Gateway Timeout', rawHeaders, headersOf(rawHeaders), undefined);
}

/** Appends the cache's member to a network response's Cache-Status, in `headers` and `rawHeaders`. */
export function addCacheStatus(res: IncomingMessage, member: string): void {
    // Reading `headers` first makes Node build the object from the fields as received.
    const headers = res.headers;
    const upstream = headers['cache-status'];
    headers['cache-status'] = upstream === undefined ? member : `${upstream}, ${member}`;
    res.rawHeaders.push('Cache-Status', member);
}

/**
 * Replaces the member `told` that `addCacheStatus` added to a network response with `final`, in
 * `headers` and `rawHeaders`: what the cache says once a write it waited for has settled.
 */
export function completeCacheStatus(res: IncomingMessage, told: string, final: string): void {
    const rawHeaders = res.rawHeaders;
    for (let i = rawHeaders.length - 2; i >= 0; i -= 2) {
        if (rawHeaders[i + 1] === told && rawHeaders[i]!.toLowerCase() === 'cache-status') {
            rawHeaders[i + 1] = final;
            break;
        }
    }

    const headers = res.headers;
    const field = headers['cache-status'];
    if (typeof field === 'string' && field.endsWith(told)) {
        headers['cache-status'] = field.slice(0, field.length - told.length) + final;
    }
}

function made(
    method: string | undefined,
    statusCode: number,
    statusMessage: string,
    rawHeaders: string[],
    headers: IncomingHttpHeaders,
    body: Buffer | undefined
): IncomingMessage {
    // No socket: the answer never touched the network. No `req` either: its method is noted on it (a HEAD's has no body).
    const res = new http.IncomingMessage(null as unknown as Socket);
    if (method !== undefined) {
        noteRequestMethod(res, method);
    }

    res.statusCode = statusCode;
    res.statusMessage = statusMessage;
    res.httpVersion = '1.1';
    res.httpVersionMajor = 1;
    res.httpVersionMinor = 1;
    res.rawHeaders = rawHeaders;
    res.headers = headers;
    // Pushed into the stream when it is read; a helper's reader takes it whole (bodies/held-body.ts).
    holdBody(res, body ?? noBody);
    res.complete = true;
    return res;
}

/**
 * Copies the body of `res` as the caller reads it, for the cache to store (entries.ts). As the body
 * ends, `ended` is given the copy, or undefined when it passed `limit` bytes, and the end reaches the
 * caller only once the promise `ended` returns has settled (the store's write, bounded by the cache's
 * `storeTimeout`): whoever sees the end sees the Cache-Status that write gave the response. `cut`,
 * when given, is told instead when the response is closed before its end or ends incomplete (or was
 * destroyed already: nothing would tell it then, and a fill would wait for an end never to come). The
 * caller keeps the response itself: the copy is taken where Node's parser pushes each chunk, so the
 * flow of the stream and its backpressure are untouched.
 */
export function copyBody(
    res: IncomingMessage,
    limit: number,
    ended: (body: Buffer | undefined) => Promise<unknown>,
    cut?: () => void
): void {
    if (res.destroyed) {
        // Destroyed before the copy began (its `close` is past, its end never to be pushed): cut, now.
        cut?.();
        return;
    }

    const push = res.push;
    const chunks: Buffer[] = [];
    let size = 0;
    let state: 'reading' | 'holding' | 'over' = 'reading';
    res.push = function copyingPush(chunk: unknown, encoding?: BufferEncoding): boolean {
        if (state === 'holding') {
            // Node pushes the end again when the socket closes after the response: the one held stands for it.
            return false;
        }

        if (chunk !== null) {
            if (size <= limit && Buffer.isBuffer(chunk)) {
                size += chunk.length;
                if (size <= limit) {
                    chunks.push(chunk);
                } else {
                    chunks.length = 0;
                }
            }

            return push.call(res, chunk, encoding);
        }

        if (!res.complete) {
            state = 'over';
            res.push = push;
            cut?.();
            return push.call(res, null);
        }

        state = 'holding';
        const body = size <= limit ? Buffer.concat(chunks, size) : undefined;
        chunks.length = 0;
        const release = () => {
            state = 'over';
            res.push = push;
            if (!res.destroyed) {
                push.call(res, null);
            }
        };
        let written: Promise<unknown>;
        try {
            written = ended(body);
        } catch {
            written = Promise.resolve();
        }

        written.then(release, release);
        return false;
    };
    if (cut !== undefined) {
        // A response destroyed before its end never pushes it.
        res.once('close', () => {
            if (state === 'reading') {
                state = 'over';
                res.push = push;
                cut();
            }
        });
    }
}
