import Boom from '@hapi/boom';
import Hapi from '@hapi/hapi';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_HTTP_ROUTE,
    ATTR_URL_PATH,
    ATTR_URL_QUERY,
    ATTR_URL_SCHEME,
    METRIC_HTTP_SERVER_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
    type RequestTracing,
    requestContext,
    TRACING_PLUGIN,
    tracing,
    withRequestContext
} from '../../instrumentation/index.js';
import { badImplementation, notFound, toSpanAttributes } from '../../src/errors/index.js';
import { recordHttpError } from '../../src/static/error-span.js';
import { staticFiles } from '../../src/static/index.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
let server: Hapi.Server;
let base: string;
const seenContexts: { traceId: string; spanId: string }[] = [];

beforeAll(async () => {
    server = Hapi.server({ host: '127.0.0.1', port: 0 });
    await server.register({
        plugin: tracing,
        options: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }
    });
    // The static plugin registers annotateErrorSpan for every response of the server.
    await server.register(staticFiles);
    server.route([
        { method: 'GET', path: '/users/{id}', handler: (request) => ({ id: request.params.id }) },
        {
            method: 'GET',
            path: '/missing',
            handler: () => {
                throw notFound('No such user');
            }
        },
        {
            method: 'GET',
            path: '/broken',
            handler: () => {
                throw badImplementation('Database exploded');
            }
        },
        {
            method: 'GET',
            path: '/forbidden',
            handler: () => {
                throw Boom.forbidden('Not yours');
            }
        },
        {
            method: 'GET',
            path: '/crash',
            handler: () => {
                throw new Error('kaboom');
            }
        },
        {
            method: 'GET',
            path: '/context',
            handler: (request) =>
                withRequestContext(request, () => {
                    const active = trace.getActiveSpan()!.spanContext();
                    seenContexts.push({ traceId: active.traceId, spanId: active.spanId });
                    return {
                        same:
                            trace.getSpan(requestContext(request)) ===
                            (request.plugins as Record<string, RequestTracing | undefined>)[TRACING_PLUGIN]?.span
                    };
                })
        }
    ]);
    await server.start();
    base = `http://127.0.0.1:${server.info.port}`;
});

afterEach(() => otel.reset());

afterAll(async () => {
    await server.stop();
    await otel.shutdown();
});

async function fetchSpan(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}${path}`, { headers });
    const body = await res.text();
    // The span ends on hapi's `response` event, right after the last byte is written.
    await expect.poll(() => otel.spans().length).toBe(1);
    return { res, body, span: otel.spans()[0]! };
}

describe('tracing plugin: one SERVER span per request', () => {
    it('names the span METHOD route and records the request attributes', async () => {
        const { res, span } = await fetchSpan('/users/42?verbose=1');
        expect(res.status).toBe(200);
        expect(span.name).toBe('GET /users/{id}');
        expect(span.kind).toBe(SpanKind.SERVER);
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.instrumentationScope.name).toBe('tracewire/instrumentation');
        expect(span.attributes).toMatchObject({
            [ATTR_HTTP_REQUEST_METHOD]: 'GET',
            [ATTR_HTTP_ROUTE]: '/users/{id}',
            [ATTR_URL_PATH]: '/users/42',
            [ATTR_URL_QUERY]: 'verbose=1',
            [ATTR_URL_SCHEME]: 'http',
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
            'server.address': '127.0.0.1',
            'server.port': server.info.port,
            'client.address': '127.0.0.1',
            'network.protocol.version': '1.1'
        });
        expect(span.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    });

    it('joins the trace of an incoming traceparent header', async () => {
        const traceId = '0af7651916cd43dd8448eb211c80319c';
        const parentId = 'b7ad6b7169203331';
        const { span } = await fetchSpan('/users/1', { traceparent: `00-${traceId}-${parentId}-01` });
        expect(span.spanContext().traceId).toBe(traceId);
        expect(span.parentSpanContext?.spanId).toBe(parentId);
        expect(span.parentSpanContext?.isRemote).toBe(true);
    });

    it('names an unmatched request by its method only, with no http.route', async () => {
        const { res, span } = await fetchSpan('/nowhere/at/all');
        expect(res.status).toBe(404);
        expect(span.name).toBe('GET');
        expect(span.attributes[ATTR_HTTP_ROUTE]).toBeUndefined();
        expect(span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(404);
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
    });

    it('exposes the server span context to handlers for outgoing calls', async () => {
        seenContexts.length = 0;
        const { body, span } = await fetchSpan('/context');
        expect(JSON.parse(body)).toEqual({ same: true });
        expect(seenContexts).toEqual([{ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId }]);
    });

    it('creates no span when the incoming context suppresses tracing', async () => {
        const request = await context.with(suppressTracing(context.active()), () =>
            server.inject({ method: 'GET', url: '/users/7' })
        );
        expect(request.statusCode).toBe(200);
        expect(otel.spans()).toHaveLength(0);
    });
});

describe('tracing plugin: failures of its own', () => {
    it('a failing SDK never breaks a request', async () => {
        const broken = {
            getTracer: () => {
                const tracer = otel.tracerProvider.getTracer('broken');
                tracer.startSpan = () => {
                    throw new Error('SDK failure');
                };
                return tracer;
            }
        };
        const app = Hapi.server();
        await app.register({ plugin: tracing, options: { tracerProvider: broken } });
        app.route({ method: 'GET', path: '/', handler: () => 'fine' });
        const res = await app.inject('/');
        expect(res.statusCode).toBe(200);
        expect(res.payload).toBe('fine');
    });
});

describe('tracing plugin: HttpError responses', () => {
    it('a 4xx HttpError sets the toSpanAttributes() attributes but not the ERROR status', async () => {
        const { res, span } = await fetchSpan('/missing');
        expect(res.status).toBe(404);
        expect(span.name).toBe('GET /missing');
        expect(span.attributes).toMatchObject(toSpanAttributes(notFound())!);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBe('404');
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.events).toHaveLength(0);
    });

    it("hapi's own errors get the same attributes", async () => {
        const { res, span } = await fetchSpan('/forbidden');
        expect(res.status).toBe(403);
        expect(span.attributes).toMatchObject({ [ATTR_HTTP_RESPONSE_STATUS_CODE]: 403, [ATTR_ERROR_TYPE]: '403' });
    });

    // Its exception is a log record (server-log-events.test.ts), an event on the span only with spanEvents.
    it('a 5xx is an ERROR whose status carries the message the payload hides', async () => {
        const { res, body, span } = await fetchSpan('/broken');
        expect(res.status).toBe(500);
        expect(JSON.parse(body).message).toBe('An internal server error occurred');
        expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Database exploded' });
        expect(span.attributes).toMatchObject({ [ATTR_HTTP_RESPONSE_STATUS_CODE]: 500, [ATTR_ERROR_TYPE]: '500' });
        expect(span.events).toEqual([]);
    });

    it('an Error thrown by a handler becomes a 500 with its message recorded', async () => {
        const { res, span } = await fetchSpan('/crash');
        expect(res.status).toBe(500);
        expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'kaboom' });
        expect(span.attributes[ATTR_ERROR_TYPE]).toBe('500');
        expect(span.events).toEqual([]);
    });
});

describe('tracing plugin: http.server.request.duration', () => {
    it('records one point per request with the attributes of the conventions', async () => {
        const countOf = async (route: string) =>
            (await otel.histogram(METRIC_HTTP_SERVER_REQUEST_DURATION)).find(
                (point) => point.attributes[ATTR_HTTP_ROUTE] === route
            )?.count ?? 0;
        const before = { ok: await countOf('/users/{id}'), failed: await countOf('/broken') };
        await fetchSpan('/users/5');
        otel.reset();
        await fetchSpan('/broken');
        const points = await otel.histogram(METRIC_HTTP_SERVER_REQUEST_DURATION);
        const ok = points.find((point) => point.attributes[ATTR_HTTP_ROUTE] === '/users/{id}')!;
        const failed = points.find((point) => point.attributes[ATTR_HTTP_ROUTE] === '/broken')!;
        expect(ok.count - before.ok).toBe(1);
        expect(failed.count - before.failed).toBe(1);
        expect(ok.unit).toBe('s');
        expect(ok.boundaries).toEqual([0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]);
        expect(ok.attributes).toEqual({
            [ATTR_HTTP_REQUEST_METHOD]: 'GET',
            [ATTR_URL_SCHEME]: 'http',
            [ATTR_HTTP_ROUTE]: '/users/{id}',
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
            'network.protocol.version': '1.1'
        });
        expect(failed.attributes[ATTR_ERROR_TYPE]).toBe('500');
        expect(failed.sum).toBeGreaterThan(0);
        expect(failed.sum).toBeLessThan(5);
    });
});

describe('annotateErrorSpan: the attributes on the active span of an upstream instrumentation', () => {
    async function injectInSpan(app: Hapi.Server, url: string) {
        const tracer = otel.tracerProvider.getTracer('upstream');
        const span = tracer.startSpan('upstream server span', { kind: SpanKind.SERVER });
        const res = await context.with(trace.setSpan(context.active(), span), () => app.inject(url));
        span.end();
        return { res, span: otel.spans().find((candidate) => candidate.name === 'upstream server span')! };
    }

    let upstream: Hapi.Server;
    beforeAll(async () => {
        upstream = Hapi.server();
        await upstream.register(staticFiles);
        upstream.route([
            { method: 'GET', path: '/ok', handler: () => 'ok' },
            { method: 'GET', path: '/file', handler: { file: 'no-such-file.txt' } },
            {
                method: 'GET',
                path: '/missing',
                handler: () => {
                    throw notFound('gone');
                }
            },
            {
                method: 'GET',
                path: '/broken',
                handler: () => {
                    throw badImplementation('Disk on fire');
                }
            }
        ]);
        await upstream.initialize();
    });

    it('sets the toSpanAttributes() attributes of a 4xx HttpError', async () => {
        const { res, span } = await injectInSpan(upstream, '/missing');
        expect(res.statusCode).toBe(404);
        expect(span.attributes).toEqual({ [ATTR_HTTP_RESPONSE_STATUS_CODE]: 404, [ATTR_ERROR_TYPE]: '404' });
        expect(span.events).toHaveLength(0);
    });

    it('sets them for the 404 of a missing static file', async () => {
        const { res, span } = await injectInSpan(upstream, '/file');
        expect(res.statusCode).toBe(404);
        // file.path comes from traced file serving (static-span.test.ts).
        expect(span.attributes).toEqual({
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 404,
            [ATTR_ERROR_TYPE]: '404',
            'file.path': 'no-such-file.txt'
        });
    });

    it('sets them for a 5xx, whose exception is a log record (server-log-events.test.ts), not a span event', async () => {
        const { res, span } = await injectInSpan(upstream, '/broken');
        expect(JSON.parse(res.payload).message).toBe('An internal server error occurred');
        expect(span.attributes).toEqual({ [ATTR_HTTP_RESPONSE_STATUS_CODE]: 500, [ATTR_ERROR_TYPE]: '500' });
        expect(span.events).toEqual([]);
    });

    it('leaves a successful response alone', async () => {
        const { span } = await injectInSpan(upstream, '/ok');
        expect(span.attributes).toEqual({});
    });

    it('records an error once per span, whoever asks first', () => {
        const span = otel.tracerProvider.getTracer('test').startSpan('twice');
        expect(recordHttpError(span, badImplementation('once'))).toBe(true);
        expect(recordHttpError(span, notFound('then'))).toBe(false);
        expect(recordHttpError(span, new Error('not an HttpError'))).toBe(false);
        span.end();
        expect(otel.spans().find((candidate) => candidate.name === 'twice')!.attributes).toEqual({
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 500,
            [ATTR_ERROR_TYPE]: '500'
        });
    });
});
