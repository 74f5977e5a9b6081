import { Readable } from 'node:stream';
import type { HttpError } from '../../errors/index.js';
import { invalidOption } from '../contract/errors.js';

/** What the request writes: a Buffer in one `end()`, or a stream piped into it. */
export type PreparedPayload = Buffer | Readable | undefined;

export function isStream(value: unknown): value is Readable {
    return typeof value === 'object' && value !== null && typeof (value as Readable).pipe === 'function';
}

/**
 * Turns the `payload` option into what is written, and sets the headers that describe it unless
 * the caller set them: `content-length` for strings and Buffers (so the receiver needs no chunked
 * decoding), `content-type: application/json` for objects sent as JSON. A string (given, or made
 * from an object) is encoded once, here: its length is then exact without a second pass over it,
 * and Node writes the bytes as they are instead of measuring the string again and encoding it into
 * the socket (for a 64 KiB body, three passes over it each costing as much as the encoding).
 */
export function preparePayload(
    payload: unknown,
    headers: Record<string, string | number | readonly string[]>
): PreparedPayload | HttpError {
    if (payload === undefined || payload === null) {
        return undefined;
    }

    if (isStream(payload)) {
        return payload;
    }

    let body: Buffer;
    if (Buffer.isBuffer(payload)) {
        body = payload;
    } else if (typeof payload === 'string') {
        body = Buffer.from(payload);
    } else {
        const json = toJson(payload);
        if (typeof json !== 'string') {
            return json;
        }

        body = Buffer.from(json);
        if (headers['content-type'] === undefined) {
            headers['content-type'] = 'application/json';
        }
    }

    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
        headers['content-length'] = body.length;
    }

    return body;
}

/** The JSON text of an object payload, or the error naming why it has none (a cycle, a BigInt, a `toJSON()` giving nothing). */
function toJson(payload: object): string | HttpError {
    let json: string | undefined;
    try {
        json = JSON.stringify(payload);
    } catch (err) {
        return invalidOption(`Option payload cannot be sent as JSON: ${(err as Error).message}`);
    }

    return typeof json === 'string'
        ? json
        : invalidOption('Option payload cannot be sent as JSON: it serialises to nothing');
}

/** A readable stream that yields `payload` once (`client.toReadableStream()`). */
export function toReadableStream(payload: Buffer | string, encoding: BufferEncoding = 'utf8'): Readable {
    if (!Buffer.isEncoding(encoding)) {
        throw new TypeError(`toReadableStream() encoding must be a Buffer encoding, got ${JSON.stringify(encoding)}`);
    }

    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) {
        throw new TypeError('toReadableStream() payload must be a Buffer or a string');
    }

    const chunk = typeof payload === 'string' ? Buffer.from(payload, encoding) : payload;
    return new Readable({
        read() {
            // One chunk then the end, whatever size the consumer asks for.
            if (chunk.length > 0) {
                this.push(chunk);
            }

            this.push(null);
        }
    });
}
