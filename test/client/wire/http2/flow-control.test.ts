import type * as http2 from 'node:http2';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../../../src/client/index.js';
import { expectReleased, timersBefore } from './released.js';
import { type Http2TestServer, startHttp2 } from './servers.js';
import { rejection } from './settling.js';

/**
 * Flow control both ways (README "HTTP/2"; RFC 9113 5.2): an upload to a server that does not read
 * waits at the server's window, reading no more of its payload stream than the window and a few
 * buffers hold, and completes once the server reads; a `timeout` during the stall cancels the stream
 * (RST_STREAM CANCEL) and keeps its session. (A download bounded by our window: messages.test.ts.)
 */

const mebibyte = 1024 * 1024;

/** A payload of `size` bytes made as it is read, counting what was read of it. */
function lazyPayload(size: number): Readable & { produced: number } {
    let produced = 0;
    const chunk = Buffer.alloc(64 * 1024, 'u');
    const stream = new Readable({
        read() {
            if (produced >= size) {
                this.push(null);
                return;
            }

            produced += chunk.length;
            this.push(chunk);
        }
    }) as Readable & { produced: number };
    Object.defineProperty(stream, 'produced', { get: () => produced });
    return stream;
}

let server: Http2TestServer;
// The streams whose body the server reads only when the test says so.
let stalled: { stream: http2.ServerHttp2Stream; read(): void }[];
let timers = 0;
beforeEach(async () => {
    timers = timersBefore();
    stalled = [];
    server = await startHttp2(undefined, { h2c: true });
    server.server.on('stream', (stream, headers) => {
        const read = () => {
            let received = 0;
            stream.on('data', (chunk: Buffer) => {
                received += chunk.length;
            });
            stream.on('end', () => {
                // (A stream the client reset ends too: nothing to answer.)
                if (!stream.destroyed && !stream.closed) {
                    stream.respond({ ':status': 200 });
                    stream.end(String(received));
                }
            });
        };
        if (headers[':path'] === '/stall') {
            stalled.push({ stream, read });
        } else if (headers[':path'] === '/early') {
            // Answers before reading the upload, then lets the rest go (RST_STREAM NO_ERROR after its END_STREAM).
            stream.respond({ ':status': 413 });
            stream.end('too large, not read');
        } else {
            read();
        }
    });
});

afterEach(() => server.close());

describe('HTTP/2 flow control: a slow reader of a large upload', () => {
    it('the upload waits at the window, reading a bounded part of its payload, and completes when the server reads', async () => {
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const payload = lazyPayload(16 * mebibyte);
        let uploaded = 0;
        const pending = api.post(`${server.url}/stall`, {
            payload,
            onUploadProgress: ({ transferred }) => {
                uploaded = transferred;
            }
        });
        await expect.poll(() => stalled.length).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 300));
        // The server's window is 64 KiB: what was read of the payload is that and the buffers between.
        const whileStalled = payload.produced;
        expect(whileStalled).toBeLessThan(mebibyte);
        expect(uploaded).toBeLessThanOrEqual(whileStalled);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(payload.produced).toBe(whileStalled);

        stalled[0]?.read();
        const { res, payload: answer } = await pending;
        expect(res.statusCode).toBe(200);
        expect(Number(String(answer))).toBe(payload.produced);
        expect(payload.produced).toBeGreaterThanOrEqual(16 * mebibyte);
        expect(uploaded).toBe(payload.produced);
        await expectReleased(api, [server], timers);
    }, 30_000);

    it('a timeout during the stall cancels the stream, lets go of the payload, and keeps the session', async () => {
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 200 } });
        const payload = lazyPayload(16 * mebibyte);
        const err = await rejection(api.post(`${server.url}/stall`, { payload, timeout: 200 }));
        expect(err.output.statusCode).toBe(504);
        const stream = stalled[0]?.stream;
        await expect.poll(() => stream?.rstCode).toBe(8);
        for (const name of ['data', 'end', 'readable']) {
            expect(payload.listenerCount(name), name).toBe(0);
        }

        expect(payload.produced).toBeLessThan(mebibyte);
        const { res, payload: answer } = await api.post(`${server.url}/after`, { payload: 'small' });
        expect(res.statusCode).toBe(200);
        expect(String(answer)).toBe('5');
        expect(server.sessions).toHaveLength(1);
        payload.destroy();
        await expectReleased(api, [server], timers);
    });

    it('a server that answers before reading the upload: its response is the outcome, and the upload stops', async () => {
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const payload = lazyPayload(16 * mebibyte);
        const res = await api.request('POST', `${server.url}/early`, { payload });
        expect(res.statusCode).toBe(413);
        expect(String(await api.read(res))).toBe('too large, not read');
        expect(payload.produced).toBeLessThan(mebibyte);
        await expect.poll(() => payload.listenerCount('data')).toBe(0);
        payload.destroy();
        await expectReleased(api, [server], timers);
    });

    it('an onUploadProgress callback that throws fails the request with a 500 naming it, and keeps the session', async () => {
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const err = await rejection(
            api.post(`${server.url}/progress`, {
                payload: Buffer.alloc(200_000),
                onUploadProgress: () => {
                    throw new Error('progress bug');
                }
            })
        );
        expect(err.output.statusCode).toBe(500);
        expect(err.message).toBe('The onUploadProgress callback threw: progress bug');
        const { res } = await api.post(`${server.url}/after`, { payload: 'ok' });
        expect(res.statusCode).toBe(200);
        expect(server.sessions).toHaveLength(1);
        await expectReleased(api, [server], timers);
    });
});
