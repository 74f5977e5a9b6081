import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { SpanStatusCode } from '@opentelemetry/api';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    METRIC_HTTP_CLIENT_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import {
    ATTR_HTTP_REQUEST_BODY_SIZE,
    ATTR_HTTP_RESPONSE_BODY_SIZE
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ClientInstrumentation, instrumentClient, PHASE_EVENTS } from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
const traced = client.defaults({ events: true });
let instrumentation: ClientInstrumentation;
let server: Server;
let base: string;

// Responses the server holds after their headers and first bytes, until a test finishes them.
const held = new EventEmitter<{ held: [ServerResponse] }>();
// What the server read of each request body, in bytes.
const receivedBodies: number[] = [];

const plainBody = 'tracewire '.repeat(1000);
const compressedBody = gzipSync(Buffer.from('compressible text '.repeat(5000)));
const chunks = ['first chunk, ', 'a second one, ', 'and the last'];

function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    switch (url.pathname) {
        case '/trickle':
            // The body comes in three parts over 300 ms.
            res.writeHead(200, { 'content-type': 'text/plain' });
            res.write('a');
            setTimeout(() => res.write('b'), 150);
            setTimeout(() => res.end('c'), 300);
            return;
        case '/held':
            res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 1000 });
            res.write('x'.repeat(10));
            held.emit('held', res);
            return;
        case '/cut':
            res.writeHead(200, { 'content-length': 1000 });
            res.write('x'.repeat(10), () => res.socket?.destroy());
            return;
        case '/plain':
            res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(plainBody) });
            res.end(plainBody);
            return;
        case '/chunked':
            res.writeHead(200, { 'content-type': 'text/plain' });
            for (const chunk of chunks) {
                res.write(chunk);
            }

            res.end();
            return;
        case '/gzip':
            res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
            res.end(compressedBody);
            return;
        case '/silent':
            // Never answers: the client's timeout ends the hop.
            return;
        case '/redirect':
            res.writeHead(302, { location: '/plain' }).end('moved');
            return;
        case '/echo': {
            let size = 0;
            req.on('data', (chunk: Buffer) => {
                size += chunk.length;
            });
            req.on('end', () => {
                receivedBodies.push(size);
                res.end('ok');
            });
            return;
        }
        default:
            res.end('ok');
    }
}

beforeAll(async () => {
    server = createServer(handle);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    instrumentation = instrumentClient(traced, {
        tracerProvider: otel.tracerProvider,
        meterProvider: otel.meterProvider,
        phaseEvents: true,
        spanEvents: true
    });
});

afterEach(() => {
    otel.reset();
    receivedBodies.length = 0;
});

afterAll(async () => {
    instrumentation.disable();
    server.closeAllConnections();
    server.close();
    await otel.shutdown();
});

function onlySpan() {
    const spans = otel.spans();
    expect(spans).toHaveLength(1);
    return spans[0]!;
}

const millis = ([seconds, nanos]: [number, number]) => seconds * 1e3 + nanos / 1e6;

describe('client spans cover the response body', () => {
    it('a body trickling in for 300 ms gives a span and a duration point of at least 300 ms', async () => {
        const other = client.defaults({ events: true });
        const reader = setupOtel();
        const handle = instrumentClient(other, {
            tracerProvider: reader.tracerProvider,
            meterProvider: reader.meterProvider
        });
        try {
            const { payload } = await other.get(`${base}/trickle`);
            expect(String(payload)).toBe('abc');
            const [span] = reader.spans();
            // Node's timers run off a loop clock in whole milliseconds: 300 ms of them can measure a little less.
            expect(millis(span!.duration)).toBeGreaterThanOrEqual(295);
            const [point] = await reader.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
            expect(point!.count).toBe(1);
            expect(point!.sum).toBeGreaterThanOrEqual(0.295);
        } finally {
            handle.disable();
            await reader.shutdown();
        }
    });

    it('the span is still open when the headers have arrived, and ends with the last byte', async () => {
        const heldResponse = once(held, 'held');
        const res = await traced.request('GET', `${base}/held`);
        const [serverResponse] = (await heldResponse) as [ServerResponse];
        expect(res.statusCode).toBe(200);
        expect(otel.spans()).toHaveLength(0);

        const body = traced.read(res);
        serverResponse.end('y'.repeat(990));
        expect(String(await body)).toHaveLength(1000);
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(1000);
    });

    it('a response nobody consumes keeps its span open until it closes', async () => {
        const res = await traced.request('GET', `${base}/plain`);
        // The whole body has arrived, but nobody reads it: the span waits.
        await expect.poll(() => res.complete).toBe(true);
        expect(otel.spans()).toHaveLength(0);
        res.destroy();
        await once(res, 'close');
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    });

    it('a response destroyed before its body arrived ends the span as an ERROR (_OTHER)', async () => {
        const heldResponse = once(held, 'held');
        const res = await traced.request('GET', `${base}/held`);
        const [serverResponse] = (await heldResponse) as [ServerResponse];
        res.destroy();
        await once(res, 'close');
        serverResponse.destroy();
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBe('_OTHER');
        expect(span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(200);
    });

    it('a body the server cuts short ends the span as an ERROR with the error code and an exception', async () => {
        await expect(traced.get(`${base}/cut`)).rejects.toThrow(/Payload stream closed prematurely/);
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBe('ECONNRESET');
        // One exception, after the moments of the hop: the headers came, the body never ended.
        const names = span.events.map((event) => event.name);
        expect(names.filter((name) => name === 'exception')).toHaveLength(1);
        expect(names.slice(-2)).toEqual([PHASE_EVENTS.response, 'exception']);
        // Its content-length said 1000: a size is given only for a body received whole.
        expect(span.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBeUndefined();
    });

    it('a read the caller aborts through its AbortSignal ends the span without an error', async () => {
        const controller = new AbortController();
        const heldResponse = once(held, 'held');
        const pending = traced.get(`${base}/held`, { signal: controller.signal });
        const [serverResponse] = (await heldResponse) as [ServerResponse];
        controller.abort();
        await expect(pending).rejects.toThrow();
        serverResponse.destroy();
        await expect.poll(() => otel.spans().length).toBe(1);
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    });

    it('a redirect hop ends when the client discards its response, without an error', async () => {
        const { res } = await traced.get(`${base}/redirect`, { redirects: 1 });
        expect(res.statusCode).toBe(200);
        const spans = otel.spans();
        expect(spans.map((span) => span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE])).toEqual([302, 200]);
        expect(spans.map((span) => span.status.code)).toEqual([SpanStatusCode.UNSET, SpanStatusCode.UNSET]);
    });
});

describe('client spans: body sizes as on the wire', () => {
    it('a plain response and a string payload: the bytes sent each way', async () => {
        const payload = 'é'.repeat(100);
        await traced.post(`${base}/echo`, { payload });
        expect(receivedBodies).toEqual([200]);
        const span = onlySpan();
        expect(span.attributes[ATTR_HTTP_REQUEST_BODY_SIZE]).toBe(200);
        expect(span.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(2);
    });

    it('a response with a content-length: its length', async () => {
        const { payload } = await traced.get(`${base}/plain`);
        expect((payload as Buffer).length).toBe(Buffer.byteLength(plainBody));
        const span = onlySpan();
        expect(span.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(Buffer.byteLength(plainBody));
        expect(span.attributes[ATTR_HTTP_REQUEST_BODY_SIZE]).toBe(0);
    });

    it('a chunked response: the bytes of its chunks, without the framing', async () => {
        await traced.get(`${base}/chunked`);
        expect(onlySpan().attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(chunks.join('').length);
    });

    it('a compressed response: the compressed size, not the decoded one', async () => {
        const { payload } = await traced.get(`${base}/gzip`, { gunzip: true });
        expect((payload as Buffer).length).toBe(90_000);
        expect(onlySpan().attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(compressedBody.length);
    });

    it('a streamed payload without content-length: the bytes streamed', async () => {
        const parts = [Buffer.alloc(1000, 1), Buffer.alloc(2345, 2), Buffer.alloc(1, 3)];
        await traced.post(`${base}/echo`, { payload: Readable.from(parts) });
        expect(receivedBodies).toEqual([3346]);
        expect(onlySpan().attributes[ATTR_HTTP_REQUEST_BODY_SIZE]).toBe(3346);
    });

    it('a HEAD response has a body of 0 bytes, whatever its content-length says', async () => {
        await traced.request('HEAD', `${base}/plain`).then((res) => traced.read(res));
        expect(onlySpan().attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(0);
    });

    it('a hop that failed before any response has no sizes', async () => {
        await expect(traced.get(`${base}/silent`, { timeout: 50 })).rejects.toMatchObject({
            output: { statusCode: 504 }
        });
        const span = onlySpan();
        expect(span.attributes[ATTR_HTTP_REQUEST_BODY_SIZE]).toBeUndefined();
        expect(span.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBeUndefined();
    });
});
