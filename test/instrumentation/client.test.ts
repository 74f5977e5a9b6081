import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
    context,
    createContextKey,
    DiagLogLevel,
    diag,
    ROOT_CONTEXT,
    SpanKind,
    SpanStatusCode,
    trace
} from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
    ATTR_HTTP_REQUEST_RESEND_COUNT,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_NETWORK_PROTOCOL_VERSION,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    ATTR_URL_FULL,
    METRIC_HTTP_CLIENT_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import { ATTR_URL_TEMPLATE as INCUBATING_URL_TEMPLATE } from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ATTR_URL_TEMPLATE } from '../../instrumentation/attributes.js';
import { type ClientInstrumentation, instrumentClient, PHASE_EVENTS } from '../../instrumentation/index.js';
import { SpanOverParent } from '../../instrumentation/injection.js';
import { client } from '../../src/client/index.js';
import { type HttpError, toSpanAttributes } from '../../src/errors/index.js';
import { refusedUrl } from '../client/helpers.js';
import { startProxy } from '../client/test-proxy.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
const providers = { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider };
const received: IncomingHttpHeaders[] = [];
let server: Server;
let base: string;
let port: number;

const traced = client.defaults({ events: true });
let instrumentation: ClientInstrumentation;

beforeAll(async () => {
    server = createServer((req, res) => {
        received.push(req.headers);
        const url = new URL(req.url ?? '/', 'http://localhost');
        const hops = /^\/redirect\/(\d+)$/.exec(url.pathname);
        if (hops) {
            const left = Number(hops[1]) - 1;
            res.writeHead(302, { location: left === 0 ? '/ok' : `/redirect/${left}` }).end();
        } else if (url.pathname === '/missing') {
            res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"nope"}');
        } else if (url.pathname === '/fail') {
            res.writeHead(500).end('broken');
        } else if (url.pathname === '/cookie') {
            res.writeHead(200, { 'set-cookie': ['session=s3cret', 'theme=dark'] }).end('ok');
        } else if (url.pathname === '/slow') {
            setTimeout(() => res.end('late'), 400);
        } else {
            res.writeHead(200, { 'content-type': 'text/plain', 'x-served-by': 'test' }).end('hello');
        }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    // With the phase events, which this file's error cases assert (the default has none: client-phases.test.ts).
    instrumentation = instrumentClient(traced, { ...providers, phaseEvents: true, spanEvents: true });
});

afterEach(() => {
    otel.reset();
    received.length = 0;
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

async function rejection(promise: Promise<unknown>): Promise<HttpError> {
    try {
        await promise;
    } catch (err) {
        return err as HttpError;
    }

    throw new Error('expected the request to fail');
}

describe('client spans: one CLIENT span per request hop', () => {
    it('a successful request: name, kind and the stable attributes', async () => {
        const { payload } = await traced.get(`${base}/ok?x=1`);
        expect(String(payload)).toBe('hello');
        const span = onlySpan();
        expect(span.name).toBe('GET');
        expect(span.kind).toBe(SpanKind.CLIENT);
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.instrumentationScope.name).toBe('tracewire/instrumentation');
        expect(span.attributes).toMatchObject({
            [ATTR_HTTP_REQUEST_METHOD]: 'GET',
            [ATTR_URL_FULL]: `${base}/ok?x=1`,
            [ATTR_SERVER_ADDRESS]: '127.0.0.1',
            [ATTR_SERVER_PORT]: port,
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
            [ATTR_NETWORK_PROTOCOL_VERSION]: '1.1'
        });
        expect(span.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
        expect(span.attributes[ATTR_HTTP_REQUEST_RESEND_COUNT]).toBeUndefined();
        expect(span.ended).toBe(true);
    });

    it('a route option names the span and sets url.template, never the raw path', async () => {
        await traced.get(`${base}/users/42`, { route: '/users/{id}' });
        const span = onlySpan();
        expect(span.name).toBe('GET /users/{id}');
        expect(span.attributes[ATTR_URL_TEMPLATE]).toBe('/users/{id}');
        expect(ATTR_URL_TEMPLATE).toBe(INCUBATING_URL_TEMPLATE);
    });

    it('an unknown method is _OTHER with the original kept, and the span is named HTTP', async () => {
        await traced.request('PURGE', `${base}/ok`).then((res) => res.resume());
        await expect.poll(() => otel.spans().length).toBe(1);
        const span = onlySpan();
        expect(span.name).toBe('HTTP');
        expect(span.attributes[ATTR_HTTP_REQUEST_METHOD]).toBe('_OTHER');
        expect(span.attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL]).toBe('PURGE');
    });

    it('redacts credentials and signatures from url.full', async () => {
        await traced.get(`http://alice:secret@127.0.0.1:${port}/ok?sig=abc&page=2`);
        expect(onlySpan().attributes[ATTR_URL_FULL]).toBe(
            `http://REDACTED:REDACTED@127.0.0.1:${port}/ok?sig=REDACTED&page=2`
        );
    });

    it('records the configured request and response headers', async () => {
        const other = client.defaults({ events: true });
        const handle = instrumentClient(other, {
            ...providers,
            headersToSpanAttributes: { request: ['X-Request-Id', 'content-type'], response: ['X-Served-By'] }
        });
        await other.post(`${base}/ok`, { headers: { 'x-request-id': 'r-1' }, payload: { a: 1 } });
        handle.disable();
        expect(onlySpan().attributes).toMatchObject({
            'http.request.header.x-request-id': ['r-1'],
            'http.request.header.content-type': ['application/json'],
            'http.response.header.x-served-by': ['test']
        });
    });

    it('records that a credential header was there, never its value, whoever wrote it', async () => {
        // proxy-authorization is not in the caller's headers: the client derives it from the proxy URL.
        const proxy = await startProxy('user:pa55');
        const other = client.defaults({ events: true, proxy: proxy.url });
        const handle = instrumentClient(other, {
            ...providers,
            headersToSpanAttributes: {
                request: ['Authorization', 'proxy-authorization', 'cookie', 'x-request-id'],
                response: ['Set-Cookie']
            }
        });
        try {
            await other.get(`${base}/cookie`, {
                headers: { authorization: 'Bearer t0ken', cookie: 'session=s3cret', 'x-request-id': 'r-2' }
            });
        } finally {
            handle.disable();
            await proxy.close();
        }

        // The credentials did travel: to the proxy, and to the origin.
        expect(proxy.forwarded[0]?.headers['proxy-authorization']).toBe(
            `Basic ${Buffer.from('user:pa55').toString('base64')}`
        );
        expect(received[0]).toMatchObject({ authorization: 'Bearer t0ken', cookie: 'session=s3cret' });
        const attributes = onlySpan().attributes;
        expect(attributes).toMatchObject({
            'http.request.header.authorization': ['REDACTED'],
            'http.request.header.proxy-authorization': ['REDACTED'],
            'http.request.header.cookie': ['REDACTED'],
            'http.request.header.x-request-id': ['r-2'],
            'http.response.header.set-cookie': ['REDACTED', 'REDACTED']
        });
        expect(JSON.stringify(attributes)).not.toMatch(/t0ken|s3cret|pa55|dXNlcjpwYTU1/);
    });
});

describe('client spans: errors', () => {
    it('404: ERROR status and the error attributes of the thrown HttpError', async () => {
        const err = await rejection(traced.get(`${base}/missing`));
        expect(err.output.statusCode).toBe(404);
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        expect(span.attributes).toMatchObject(toSpanAttributes(err)!);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBe('404');
    });

    it('500: ERROR status and error.type 500', async () => {
        const err = await rejection(traced.get(`${base}/fail`));
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        expect(span.attributes).toMatchObject(toSpanAttributes(err)!);
    });

    it('a refused connection: error.type is the system error code', async () => {
        const err = await rejection(traced.get(refusedUrl));
        expect((err.data as { code?: string }).code).toBe('ECONNREFUSED');
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBe('ECONNREFUSED');
        expect(span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBeUndefined();
        // The exception, after the moments the hop had (its socket, no connection).
        expect(span.events.map((event) => event.name)).toEqual([PHASE_EVENTS.socket, 'exception']);
    });

    it('a timeout: error.type timeout', async () => {
        const err = await rejection(traced.get(`${base}/slow`, { timeout: 50 }));
        expect(err.output.statusCode).toBe(504);
        const span = onlySpan();
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBe('timeout');
    });

    it('an abort the caller asked for ends the span without making it an error', async () => {
        const controller = new AbortController();
        const pending = rejection(traced.get(`${base}/slow`, { signal: controller.signal }));
        await expect.poll(() => received.length).toBe(1);
        controller.abort();
        const err = await pending;
        expect((err.data as Error).name).toBe('AbortError');
        const span = onlySpan();
        expect(span.ended).toBe(true);
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    });
});

describe('client spans: a hop whose request could not be created', () => {
    it('is still ended once, as an ERROR, when a later preRequest listener makes the request impossible', async () => {
        const breakRequest = (uri: { headers: Record<string, unknown> }) => {
            uri.headers['x-bad'] = 'a\r\nb';
        };
        traced.events!.on('preRequest', breakRequest);
        try {
            const err = await rejection(traced.get(`${base}/ok`));
            expect(err.message).toMatch(/Request could not be created/);
        } finally {
            traced.events!.off('preRequest', breakRequest);
        }

        const span = onlySpan();
        expect(span.ended).toBe(true);
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        expect(received).toHaveLength(0);
    });
});

describe('client spans: redirects', () => {
    it('each hop of a 2-hop redirect is its own span with its own status', async () => {
        const tracer = otel.tracerProvider.getTracer('test');
        await tracer.startActiveSpan('caller', async (parent) => {
            const { res } = await traced.get(`${base}/redirect/2`, { redirects: 3 });
            expect(res.statusCode).toBe(200);
            parent.end();
        });

        const spans = otel.spans().filter((span) => span.kind === SpanKind.CLIENT);
        const caller = otel.spans().find((span) => span.name === 'caller')!;
        expect(spans.map((span) => span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE])).toEqual([302, 302, 200]);
        expect(spans.map((span) => span.attributes[ATTR_HTTP_REQUEST_RESEND_COUNT])).toEqual([undefined, 1, 2]);
        expect(spans.map((span) => span.attributes[ATTR_URL_FULL])).toEqual([
            `${base}/redirect/2`,
            `${base}/redirect/1`,
            `${base}/ok`
        ]);
        for (const span of spans) {
            expect(span.status.code).toBe(SpanStatusCode.UNSET);
            expect(span.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
        }

        // Every hop carried its own span as the parent of whatever the server does.
        expect(received.map((headers) => String(headers.traceparent).split('-')[2])).toEqual(
            spans.map((span) => span.spanContext().spanId)
        );
    });
});

describe('client spans: context propagation', () => {
    it('a request made in an active span is its child, and the server gets the client span as parent', async () => {
        const tracer = otel.tracerProvider.getTracer('test');
        await tracer.startActiveSpan('caller', async (parent) => {
            await traced.get(`${base}/ok`);
            parent.end();
        });

        const span = otel.spans().find((candidate) => candidate.kind === SpanKind.CLIENT)!;
        const caller = otel.spans().find((candidate) => candidate.name === 'caller')!;
        expect(span.spanContext().traceId).toBe(caller.spanContext().traceId);
        expect(span.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
        expect(received[0]?.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    });

    it('a suppressTracing context creates no span and injects nothing', async () => {
        await context.with(suppressTracing(context.active()), () => traced.get(`${base}/ok`));
        expect(otel.spans()).toHaveLength(0);
        expect(received[0]?.traceparent).toBeUndefined();
    });

    it('creates no span and injects nothing without an SDK', async () => {
        const bare = client.defaults({ events: true });
        const handle = instrumentClient(bare);
        expect(trace.getTracerProvider().getTracer('x').startSpan('probe').isRecording()).toBe(false);
        const { res } = await bare.get(`${base}/ok`);
        handle.disable();
        expect(res.statusCode).toBe(200);
        expect(received[0]?.traceparent).toBeUndefined();
        expect(otel.spans()).toHaveLength(0);
    });

    it("the context injected is the caller's with the hop's span, read without a copy and derived as a real one", () => {
        const span = otel.tracerProvider.getTracer('test').startSpan('hop');
        const key = createContextKey('a value of the caller');
        const injected = new SpanOverParent(ROOT_CONTEXT.setValue(key, 'kept'), span);
        expect(trace.getSpan(injected)).toBe(span);
        expect(injected.getValue(key)).toBe('kept');
        const other = createContextKey('another');
        const derived = injected.setValue(other, 1);
        expect([trace.getSpan(derived), derived.getValue(key), derived.getValue(other)]).toEqual([span, 'kept', 1]);
        expect(trace.getSpan(injected.deleteValue(key))).toBe(span);
        expect(injected.deleteValue(key).getValue(key)).toBeUndefined();
        span.end();
    });

    it('clients derived with defaults() share the instrumentation', async () => {
        const derived = traced.defaults({ headers: { 'x-derived': '1' } });
        await derived.get(`${base}/ok`);
        expect(onlySpan().kind).toBe(SpanKind.CLIENT);
        expect(received[0]?.['x-derived']).toBe('1');
    });
});

describe('client spans: hooks and listener safety', () => {
    it('requestHook and responseHook see the span; the context is injected after the hook', async () => {
        const other = client.defaults({ events: true });
        const handle = instrumentClient(other, {
            ...providers,
            requestHook: (span, { uri }) => {
                span.setAttribute('test.hook', uri.pathname);
                uri.headers.traceparent = 'tampered';
            },
            responseHook: (span, { res }) => span.setAttribute('test.status', res?.statusCode ?? 0)
        });
        await other.get(`${base}/ok`);
        handle.disable();
        const span = onlySpan();
        expect(span.attributes).toMatchObject({ 'test.hook': '/ok', 'test.status': 200 });
        expect(received[0]?.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    });

    it('throwing hooks never break a request and are reported through diag', async () => {
        const logger = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: vi.fn(), verbose: vi.fn() };
        diag.setLogger(logger, DiagLogLevel.ERROR);
        const other = client.defaults({ events: true });
        const boom = () => {
            throw new Error('hook failure');
        };
        const handle = instrumentClient(other, {
            ...providers,
            ignoreRequest: boom,
            requestHook: boom,
            responseHook: boom
        });
        const { res } = await other.get(`${base}/ok`);
        handle.disable();
        diag.disable();
        expect(res.statusCode).toBe(200);
        expect(onlySpan().ended).toBe(true);
        expect(logger.error.mock.calls.map(([message]) => message)).toEqual([
            'tracewire instrumentation: ignoreRequest threw',
            'tracewire instrumentation: requestHook threw',
            'tracewire instrumentation: responseHook threw'
        ]);
    });

    it('a failing SDK never breaks a request either', async () => {
        const logger = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: vi.fn(), verbose: vi.fn() };
        diag.setLogger(logger, DiagLogLevel.ERROR);
        const broken = {
            getTracer: () => {
                const tracer = otel.tracerProvider.getTracer('broken');
                tracer.startSpan = () => {
                    throw new Error('SDK failure');
                };
                return tracer;
            }
        };
        const other = client.defaults({ events: true });
        const handle = instrumentClient(other, { tracerProvider: broken, meterProvider: otel.meterProvider });
        const { res } = await other.get(`${base}/ok`);
        handle.disable();
        diag.disable();
        expect(res.statusCode).toBe(200);
        expect(logger.error.mock.calls.map(([message]) => message)).toEqual([
            'tracewire instrumentation: preRequest listener threw'
        ]);
    });

    it('ignoreRequest skips the span, the metric and the injection', async () => {
        const other = client.defaults({ events: true });
        const handle = instrumentClient(other, { ...providers, ignoreRequest: (uri) => uri.pathname === '/ok' });
        await other.get(`${base}/ok`);
        handle.disable();
        expect(otel.spans()).toHaveLength(0);
        expect(received[0]?.traceparent).toBeUndefined();
    });
});

describe('instrumentClient: lifecycle', () => {
    it('throws a clear TypeError for a client without events', () => {
        expect(() => instrumentClient(client)).toThrow(TypeError);
        expect(() => instrumentClient(client)).toThrow(/defaults\(\{ events: true \}\)/);
    });

    it('refuses to instrument one emitter twice', () => {
        expect(() => instrumentClient(traced.defaults({}))).toThrow(/already instrumented/);
    });

    it('disable() removes every listener it added', async () => {
        const other = client.defaults({ events: true });
        const events = other.events!;
        const counts = () => (['preRequest', 'request', 'response'] as const).map((name) => events.listenerCount(name));
        const handle = instrumentClient(other, providers);
        expect(counts()).toEqual([1, 1, 1]);
        handle.disable();
        handle.disable();
        expect(counts()).toEqual([0, 0, 0]);
        await other.get(`${base}/ok`);
        expect(otel.spans()).toHaveLength(0);
    });
});

describe('http.client.request.duration', () => {
    it('counts each hop with the attributes of the conventions', async () => {
        const other = client.defaults({ events: true });
        const reader = setupOtel();
        const handle = instrumentClient(other, { meterProvider: reader.meterProvider });
        await other.get(`${base}/ok`);
        await other.get(`${base}/ok`, { route: '/ok' });
        await rejection(other.get(`${base}/missing`));
        await rejection(other.get(`${base}/slow`, { timeout: 50 }));
        handle.disable();

        const points = await reader.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
        const common = {
            [ATTR_HTTP_REQUEST_METHOD]: 'GET',
            [ATTR_SERVER_ADDRESS]: '127.0.0.1',
            [ATTR_SERVER_PORT]: port
        };
        expect(points.map((point) => ({ attributes: point.attributes, count: point.count }))).toEqual([
            {
                attributes: {
                    ...common,
                    [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
                    [ATTR_NETWORK_PROTOCOL_VERSION]: '1.1'
                },
                count: 1
            },
            {
                attributes: {
                    ...common,
                    [ATTR_URL_TEMPLATE]: '/ok',
                    [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
                    [ATTR_NETWORK_PROTOCOL_VERSION]: '1.1'
                },
                count: 1
            },
            {
                attributes: {
                    ...common,
                    [ATTR_HTTP_RESPONSE_STATUS_CODE]: 404,
                    [ATTR_NETWORK_PROTOCOL_VERSION]: '1.1',
                    [ATTR_ERROR_TYPE]: '404'
                },
                count: 1
            },
            { attributes: { ...common, [ATTR_ERROR_TYPE]: 'timeout' }, count: 1 }
        ]);
        expect(points[0]!.unit).toBe('s');
        expect(points[0]!.boundaries).toEqual([
            0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10
        ]);
        expect(points[3]!.sum).toBeGreaterThanOrEqual(0.04);
        await reader.meterProvider.shutdown();
    });
});

describe('instrumentClient: a hop in flight belongs to the instrumentation that started it', () => {
    it('gets no span from an instrumentation that replaced a disabled one meanwhile', async () => {
        const other = client.defaults({ events: true });
        const first = instrumentClient(other, providers);
        const pending = other.get(`${base}/slow`);
        await expect.poll(() => received.length).toBe(1);
        first.disable();
        const second = instrumentClient(other, providers);
        const { payload } = await pending;
        second.disable();
        expect(String(payload)).toBe('late');
        expect(otel.spans()).toHaveLength(0);
    });
});
