import { Readable } from 'node:stream';

/** What the request writes: a string or Buffer in one `end()`, or a stream piped into it. */
export type PreparedPayload = string | Buffer | Readable | undefined;

export function isStream(value: unknown): value is Readable {
    return typeof value === 'object' && value !== null && typeof (value as Readable).pipe === 'function';
}

/**
 * Turns the `payload` option into what is written, and sets the headers that describe it unless
 * the caller set them: `content-length` for strings and Buffers (so the receiver needs no chunked
 * decoding), `content-type: application/json` for objects sent as JSON.
 */
export function preparePayload(
    payload: unknown,
    headers: Record<string, string | number | readonly string[]>
): PreparedPayload {
    if (payload === undefined || payload === null) {
        return undefined;
    }

    if (isStream(payload)) {
        return payload;
    }

    let body: string | Buffer;
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
        body = payload;
    } else {
        body = JSON.stringify(payload);
        if (headers['content-type'] === undefined) {
            headers['content-type'] = 'application/json';
        }
    }

    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
        headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    }

    return body;
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
