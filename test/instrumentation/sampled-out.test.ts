import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
    type Context,
    context,
    type Span,
    type SpanOptions,
    TraceFlags,
    type TracerProvider,
    trace
} from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ClientInstrumentation, instrumentClient } from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import { refusedUrl } from '../client/helpers.js';
import { setupOtel } from './otel.js';

/*
 * A hop whose span the sampler drops (the SDK's default parent-based sampler, under a parent that
 * was not sampled) gets its non-recording span, its injected context and its duration point — metrics
 * are not sampled — and nothing else: no attribute, event or status is worked out for a span that
 * records nothing.
 */

const otel = setupOtel();
// What the instrumentation asks of its spans, after startSpan.
const spanCalls: string[] = [];
const recorded = new Set(['setAttribute', 'setAttributes', 'addEvent', 'recordException', 'setStatus', 'updateName']);

/** The SDK's provider, its spans watched: each call to one of `recorded` is noted. */
const watchedProvider: TracerProvider = {
    getTracer(name, version, options) {
        const tracer = otel.tracerProvider.getTracer(name, version, options);
        return {
            startSpan(spanName: string, spanOptions?: SpanOptions, ctx?: Context): Span {
                return watched(tracer.startSpan(spanName, spanOptions, ctx));
            },
            startActiveSpan: tracer.startActiveSpan.bind(tracer)
        } as ReturnType<TracerProvider['getTracer']>;
    }
};

function watched(span: Span): Span {
    return new Proxy(span, {
        get(target, property) {
            const value = Reflect.get(target, property, target);
            if (typeof value !== 'function') {
                return value;
            }

            return (...args: unknown[]) => {
                if (recorded.has(String(property))) {
                    spanCalls.push(String(property));
                }

                return value.apply(target, args);
            };
        }
    });
}

const traced = client.defaults({ events: true });
const received: IncomingHttpHeaders[] = [];
let handle: ClientInstrumentation;
let server: Server;
let base: string;

beforeAll(async () => {
    handle = instrumentClient(traced, {
        tracerProvider: watchedProvider,
        meterProvider: otel.meterProvider,
        headersToSpanAttributes: { request: ['content-type'], response: ['content-type'] },
        // Everything a sampled span can be given, span events included.
        spanEvents: true
    });
    server = createServer((req, res) => {
        received.push(req.headers);
        if (req.url === '/missing') {
            res.writeHead(404, { 'content-type': 'text/plain' }).end('no');
        } else if (req.url === '/stall') {
            // No answer: the client's bound ends it.
        } else {
            res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
    otel.reset();
    spanCalls.length = 0;
    received.length = 0;
});

afterAll(async () => {
    handle.disable();
    server.close();
    await otel.shutdown();
});

const traceId = '0af7651916cd43dd8448eb211c80319c';

/** Runs `call` as the work of an incoming request whose `traceparent` was sampled or not. */
function underRemoteParent<T>(sampled: boolean, call: () => Promise<T>): Promise<T> {
    const parent = trace.setSpanContext(context.active(), {
        traceId,
        spanId: 'b7ad6b7169203331',
        traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
        isRemote: true
    });
    return context.with(parent, call);
}

/** Every call of the case below: a 200, a 404, a refused connection and a response timeout. */
async function calls(): Promise<void> {
    await traced.post(`${base}/`, { payload: 'hello', headers: { 'content-type': 'text/plain' } });
    await traced.get(`${base}/missing`).catch(() => {});
    await traced.get(refusedUrl).catch(() => {});
    await traced.get(`${base}/stall`, { timeouts: { response: 50 } }).catch(() => {});
}

/** The count of each series of `http.client.request.duration`, by method, address, version, status and error.type. */
async function durationCounts(): Promise<Map<string, number>> {
    const points = await otel.histogram('http.client.request.duration');
    const name = (value: unknown) => (value === undefined ? '-' : String(value));
    return new Map(
        points.map((point) => [
            [
                'http.request.method',
                'server.address',
                'network.protocol.version',
                'http.response.status_code',
                'error.type'
            ]
                .map((key) => name(point.attributes[key]))
                .join(' '),
            point.count
        ])
    );
}

describe('a hop of a trace that was not sampled', () => {
    it('gets no span, and its span is given nothing: no attribute, event or status', async () => {
        await underRemoteParent(false, calls);
        expect(otel.spans()).toEqual([]);
        expect(spanCalls).toEqual([]);
    });

    it('sends its context on, not sampled, in the caller’s trace', async () => {
        await underRemoteParent(false, () => traced.get(`${base}/`));
        expect(received[0]?.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    });

    it('records its duration point with every attribute, the outcome of the hop included', async () => {
        // The reader is cumulative: what these calls add to each series.
        const before = await durationCounts();
        await underRemoteParent(false, calls);
        const after = await durationCounts();
        const added = [...after]
            .filter(([key, count]) => count > (before.get(key) ?? 0))
            .map(([key, count]) => [key, count - (before.get(key) ?? 0)]);
        expect(added.sort()).toEqual(
            [
                ['GET 127.0.0.1 1.1 404 404', 1],
                ['GET 127.0.0.1 - - ECONNREFUSED', 1],
                ['GET 127.0.0.1 - - timeout', 1],
                ['POST 127.0.0.1 1.1 200 -', 1]
            ].sort()
        );
    });

    it('the same calls in a sampled trace: spans, with all they say (the watch above sees them)', async () => {
        await underRemoteParent(true, calls);
        await expect.poll(() => otel.spans().length).toBe(4);
        expect(otel.spans().every((span) => span.spanContext().traceId === traceId)).toBe(true);
        expect(spanCalls).toEqual(
            expect.arrayContaining(['setAttribute', 'setAttributes', 'setStatus', 'recordException'])
        );
        expect(received[0]?.traceparent).toMatch(/-01$/);
    });
});
