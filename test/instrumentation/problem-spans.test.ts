import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Hapi from '@hapi/hapi';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { METRIC_HTTP_CLIENT_REQUEST_DURATION } from '@opentelemetry/semantic-conventions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
    ATTR_PROBLEM_TYPE,
    type ClientInstrumentation,
    instrumentClient,
    tracing
} from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import type { HttpError } from '../../src/errors/index.js';
import { errors, problemDetails } from '../../src/index.js';
import { setupOtel } from './otel.js';

/**
 * docs/observability.md "Problem types on spans": a 4xx/5xx answered as `application/problem+json`
 * names its problem type on both sides of the trace, the server span the type it sent and the client
 * span the type it received, which only the helper's error knows once the body has been read.
 */

const otel = setupOtel();
const providers = { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider };
const traced = client.defaults({ events: true });
const cached = client.defaults({ events: true, cache: true });
let handles: ClientInstrumentation[];
let server: Hapi.Server;
let base: string;
let plain: Server;
let plainBase: string;

const takenType = 'https://example.com/probs/taken';

beforeAll(async () => {
    handles = [instrumentClient(traced, providers), instrumentClient(cached, providers)];
    server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    await server.register({ plugin: tracing, options: providers });
    await server.register({ plugin: problemDetails, options: { mode: 'negotiate' } });
    server.route([
        {
            method: 'GET',
            path: '/taken',
            handler: () => errors.conflict('taken', null, { type: takenType })
        },
        {
            method: 'GET',
            path: '/broken',
            handler: () => {
                throw errors.badImplementation('Database exploded');
            }
        }
    ]);
    await server.start();
    base = `http://127.0.0.1:${server.info.port}`;
    // An origin answering a cacheable problem document, for the cached client.
    plain = createServer((_req, res) => {
        const body = JSON.stringify({ type: 'https://example.com/probs/gone', title: 'Gone', status: 404 });
        res.writeHead(404, { 'content-type': 'application/problem+json', 'cache-control': 'max-age=60' });
        res.end(body);
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    plainBase = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
});

afterEach(() => otel.reset());

afterAll(async () => {
    for (const handle of handles) {
        handle.disable();
    }

    await server.stop();
    await new Promise<void>((resolve) => plain.close(() => resolve()));
    await otel.shutdown();
});

const problemAccept = { accept: 'application/problem+json' };

async function rejection(promise: Promise<unknown>): Promise<HttpError> {
    try {
        await promise;
    } catch (err) {
        return err as HttpError;
    }

    throw new Error('expected the request to fail');
}

async function settledSpans(count: number): Promise<ReadableSpan[]> {
    // The server span ends on hapi's `response` event, which can trail the client's last byte.
    await expect.poll(() => otel.spans().length).toBe(count);
    return otel.spans();
}

function ofKind(spans: ReadableSpan[], kind: SpanKind): ReadableSpan[] {
    return spans.filter((span) => span.kind === kind);
}

describe('the problem type on both sides of a trace', () => {
    it('a typed 409: the client span names the type it received, the server span the one it sent', async () => {
        const err = await rejection(traced.get(`${base}/taken`, { headers: problemAccept }));
        expect((err.data as { problem?: { type?: string } }).problem?.type).toBe(takenType);
        const spans = await settledSpans(2);
        const [clientSpan] = ofKind(spans, SpanKind.CLIENT);
        const [serverSpan] = ofKind(spans, SpanKind.SERVER);
        expect(clientSpan!.attributes[ATTR_PROBLEM_TYPE]).toBe(takenType);
        expect(serverSpan!.attributes[ATTR_PROBLEM_TYPE]).toBe(takenType);
    });

    it('an untyped 500: about:blank on both sides', async () => {
        await rejection(traced.get(`${base}/broken`, { headers: problemAccept }));
        const spans = await settledSpans(2);
        expect(spans.map((span) => span.attributes[ATTR_PROBLEM_TYPE])).toEqual(['about:blank', 'about:blank']);
    });

    it('the classic payload (no problem document asked for): no problem type on either side', async () => {
        const err = await rejection(traced.get(`${base}/taken`));
        expect((err.data as { problem?: unknown }).problem).toBeUndefined();
        const spans = await settledSpans(2);
        expect(spans.map((span) => span.attributes[ATTR_PROBLEM_TYPE])).toEqual([undefined, undefined]);
    });

    it('the client span that waits for the helper ends within the call, once, with one duration point', async () => {
        const durationPoints = async () =>
            (await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION)).reduce(
                (count, point) => count + point.count,
                0
            );
        const pointsBefore = await durationPoints();
        const before = performance.timeOrigin + performance.now();
        await rejection(traced.get(`${base}/taken`, { headers: problemAccept }));
        const after = performance.timeOrigin + performance.now();
        const [clientSpan] = ofKind(await settledSpans(2), SpanKind.CLIENT);
        const endMs = clientSpan!.endTime[0] * 1000 + clientSpan!.endTime[1] / 1e6;
        expect(endMs).toBeGreaterThanOrEqual(before);
        expect(endMs).toBeLessThanOrEqual(after);
        expect((await durationPoints()) - pointsBefore).toBe(1);
    });

    it('a response read without a helper (request() and read()) ends its span at the body end, with no problem type', async () => {
        const res = await traced.request('GET', `${base}/taken`, { headers: problemAccept });
        const payload = await traced.read(res);
        expect(JSON.parse(String(payload)).type).toBe(takenType);
        const [clientSpan] = ofKind(await settledSpans(2), SpanKind.CLIENT);
        expect(clientSpan!.attributes[ATTR_PROBLEM_TYPE]).toBeUndefined();
    });

    it('a response discarded without reading: the span still ends', async () => {
        const res = await traced.request('GET', `${base}/taken`, { headers: problemAccept });
        res.destroy();
        const [clientSpan] = ofKind(await settledSpans(2), SpanKind.CLIENT);
        expect(clientSpan!.attributes[ATTR_PROBLEM_TYPE]).toBeUndefined();
    });

    it('a cached problem document: the miss and the hit both name its type', async () => {
        await rejection(cached.get(`${plainBase}/gone`));
        await rejection(cached.get(`${plainBase}/gone`));
        const spans = await settledSpans(2);
        expect(spans.map((span) => span.attributes['tracewire.cache'])).toEqual(['miss', 'hit']);
        expect(spans.map((span) => span.attributes[ATTR_PROBLEM_TYPE])).toEqual([
            'https://example.com/probs/gone',
            'https://example.com/probs/gone'
        ]);
    });

    it('a helper call that exceeds maxBytes: the span ends once the helper gives up', async () => {
        const err = await rejection(traced.get(`${base}/taken`, { headers: problemAccept, maxBytes: 4 }));
        expect(err.output.statusCode).toBe(413);
        const [clientSpan] = ofKind(await settledSpans(2), SpanKind.CLIENT);
        expect(clientSpan!.attributes[ATTR_PROBLEM_TYPE]).toBeUndefined();
    });
});
