import { fileURLToPath } from 'node:url';
import Hapi from '@hapi/hapi';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
    type ClientInstrumentation,
    instrumentClient,
    tracing,
    withRequestContext
} from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import { badImplementation, type HttpError, notFound, toSpanAttributes } from '../../src/errors/index.js';
import { staticFiles } from '../../src/static/index.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
const providers = { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider };
const traced = client.defaults({ events: true });
let handle: ClientInstrumentation;
let server: Hapi.Server;
let base: string;

beforeAll(async () => {
    handle = instrumentClient(traced, providers);
    server = Hapi.server({ host: '127.0.0.1', port: 0 });
    await server.register({ plugin: tracing, options: providers });
    await server.register(staticFiles);
    server.route([
        {
            method: 'GET',
            path: '/files/{path*}',
            handler: { directory: { path: fileURLToPath(new URL('.', import.meta.url)) } }
        },
        { method: 'GET', path: '/users/{id}', handler: (request) => ({ id: request.params.id }) },
        {
            method: 'GET',
            path: '/missing/{id}',
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
            path: '/profile/{id}',
            handler: (request) =>
                withRequestContext(request, async () => {
                    const { payload } = await traced.get(`${base}/users/${request.params.id}`, {
                        route: '/users/{id}',
                        json: true
                    });
                    return { profile: payload };
                })
        }
    ]);
    await server.start();
    base = `http://127.0.0.1:${server.info.port}`;
});

afterEach(() => otel.reset());

afterAll(async () => {
    handle.disable();
    await server.stop();
    await otel.shutdown();
});

async function settledSpans(count: number): Promise<ReadableSpan[]> {
    // Server spans end on hapi's `response` event, which can trail the client's last byte.
    await expect.poll(() => otel.spans().length).toBe(count);
    return otel.spans();
}

function pair(spans: ReadableSpan[]) {
    const clientSpan = spans.find((span) => span.kind === SpanKind.CLIENT)!;
    const serverSpan = spans.find((span) => span.kind === SpanKind.SERVER)!;
    return { clientSpan, serverSpan };
}

async function rejection(promise: Promise<unknown>): Promise<HttpError> {
    try {
        await promise;
    } catch (err) {
        return err as HttpError;
    }

    throw new Error('expected the request to fail');
}

describe('client → server over traceparent', () => {
    it('the server span is the child of the client span, in one trace', async () => {
        await traced.get(`${base}/users/7`, { route: '/users/{id}' });
        const { clientSpan, serverSpan } = pair(await settledSpans(2));
        expect(clientSpan.name).toBe('GET /users/{id}');
        expect(serverSpan.name).toBe('GET /users/{id}');
        expect(serverSpan.spanContext().traceId).toBe(clientSpan.spanContext().traceId);
        expect(serverSpan.parentSpanContext?.spanId).toBe(clientSpan.spanContext().spanId);
    });

    it('a call made in withRequestContext() is the child of the server span', async () => {
        const { payload } = await traced.get(`${base}/profile/3`, { json: true });
        expect(payload).toEqual({ profile: { id: '3' } });
        const spans = await settledSpans(4);
        const byName = (name: string, kind: SpanKind) =>
            spans.find((span) => span.name === name && span.kind === kind)!;
        const outer = byName('GET', SpanKind.CLIENT);
        const profile = byName('GET /profile/{id}', SpanKind.SERVER);
        const inner = byName('GET /users/{id}', SpanKind.CLIENT);
        const users = byName('GET /users/{id}', SpanKind.SERVER);
        expect(profile.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
        expect(inner.parentSpanContext?.spanId).toBe(profile.spanContext().spanId);
        expect(users.parentSpanContext?.spanId).toBe(inner.spanContext().spanId);
        expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    });
});

describe('matching error attributes on both sides', () => {
    it('a 404 HttpError: the same status code and error.type on the client and the server span', async () => {
        const err = await rejection(traced.get(`${base}/missing/9`));
        const { clientSpan, serverSpan } = pair(await settledSpans(2));
        const expected = toSpanAttributes(err)!;
        expect(expected).toEqual({ [ATTR_HTTP_RESPONSE_STATUS_CODE]: 404, [ATTR_ERROR_TYPE]: '404' });
        expect(clientSpan.attributes).toMatchObject(expected);
        expect(serverSpan.attributes).toMatchObject(expected);
        expect(clientSpan.status.code).toBe(SpanStatusCode.ERROR);
        expect(serverSpan.status.code).toBe(SpanStatusCode.UNSET);
    });

    it('a file the static plugin cannot find: 404 with the same attributes on both sides', async () => {
        const err = await rejection(traced.get(`${base}/files/nothing-here.txt`, { route: '/files/{path*}' }));
        const { clientSpan, serverSpan } = pair(await settledSpans(2));
        expect(serverSpan.name).toBe('GET /files/{path*}');
        expect(clientSpan.attributes).toMatchObject(toSpanAttributes(err)!);
        expect(serverSpan.attributes).toMatchObject(toSpanAttributes(err)!);
        expect(serverSpan.attributes[ATTR_ERROR_TYPE]).toBe('404');
    });

    it('a file the static plugin serves: 200 and no error on either side', async () => {
        const { res } = await traced.get(`${base}/files/otel.ts`, { route: '/files/{path*}' });
        expect(res.statusCode).toBe(200);
        const { clientSpan, serverSpan } = pair(await settledSpans(2));
        expect(clientSpan.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(200);
        expect(serverSpan.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(200);
        expect(clientSpan.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
        expect(serverSpan.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    });

    it('a 500 HttpError: the same attributes, ERROR on both, the real message only on the server', async () => {
        const err = await rejection(traced.get(`${base}/broken`, { json: true }));
        expect((err.data as { payload: { message: string } }).payload.message).toBe(
            'An internal server error occurred'
        );
        const { clientSpan, serverSpan } = pair(await settledSpans(2));
        const expected = toSpanAttributes(err)!;
        expect(clientSpan.attributes).toMatchObject(expected);
        expect(serverSpan.attributes).toMatchObject(expected);
        expect(clientSpan.status.code).toBe(SpanStatusCode.ERROR);
        expect(serverSpan.status.code).toBe(SpanStatusCode.ERROR);
        expect(serverSpan.status.message).toBe('Database exploded');
        expect(clientSpan.status.message ?? '').not.toContain('Database exploded');
    });
});
