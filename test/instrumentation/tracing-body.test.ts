import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import Hapi from '@hapi/hapi';
import { ValueType } from '@opentelemetry/api';
import {
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_HTTP_ROUTE,
    ATTR_NETWORK_PROTOCOL_VERSION,
    ATTR_URL_SCHEME,
    METRIC_HTTP_SERVER_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import {
    ATTR_HTTP_REQUEST_BODY_SIZE,
    ATTR_HTTP_RESPONSE_BODY_SIZE,
    METRIC_HTTP_SERVER_ACTIVE_REQUESTS,
    METRIC_HTTP_SERVER_REQUEST_BODY_SIZE,
    METRIC_HTTP_SERVER_RESPONSE_BODY_SIZE
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tracing } from '../../instrumentation/index.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
let server: Hapi.Server;
let port: number;
const text = 'a body hapi will compress when asked. '.repeat(200);
let release: (() => void) | undefined;
let entered: (() => void) | undefined;

async function startServer(): Promise<Hapi.Server> {
    const app = Hapi.server({ host: '127.0.0.1', port: 0 });
    await app.register({
        plugin: tracing,
        options: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }
    });
    app.route([
        { method: 'GET', path: '/text', handler: () => text },
        {
            method: 'POST',
            path: '/upload',
            handler: (request) => `got ${(request.payload as Buffer).length}`,
            options: { payload: { parse: false } }
        }
    ]);
    await app.start();
    return app;
}

beforeAll(async () => {
    server = await startServer();
    port = server.info.port as number;
});

afterEach(() => otel.reset());

afterAll(async () => {
    await server.stop();
    await otel.shutdown();
});

interface RawResponse {
    statusCode: number;
    headers: IncomingHttpHeaders;
    /** The body as it came over the wire, not decoded. */
    body: Buffer;
}

/** A request over a real socket, the body kept as received. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
                resolve({ statusCode: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) })
            );
        });
        req.on('error', reject);
        req.end(body);
    });
}

async function serverSpan() {
    await expect.poll(() => otel.spans().length).toBe(1);
    return otel.spans()[0]!;
}

describe('tracing plugin: body sizes as on the wire', () => {
    it('a plain response: the bytes of its body; a request without a body: 0', async () => {
        const res = await raw('GET', '/text');
        expect(res.headers['content-encoding']).toBeUndefined();
        const span = await serverSpan();
        expect(span.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(res.body.length);
        expect(res.body.length).toBe(Buffer.byteLength(text));
        expect(span.attributes[ATTR_HTTP_REQUEST_BODY_SIZE]).toBe(0);
    });

    it('a response hapi compresses: the compressed size', async () => {
        const res = await raw('GET', '/text', { 'accept-encoding': 'gzip' });
        expect(res.headers['content-encoding']).toBe('gzip');
        expect(res.body.length).toBeLessThan(Buffer.byteLength(text));
        expect((await serverSpan()).attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(res.body.length);
    });

    it('a request body: the bytes received', async () => {
        const payload = Buffer.alloc(70_000, 7);
        const res = await raw('POST', '/upload', { 'content-type': 'application/octet-stream' }, payload);
        expect(res.body.toString()).toBe('got 70000');
        const span = await serverSpan();
        expect(span.attributes[ATTR_HTTP_REQUEST_BODY_SIZE]).toBe(70_000);
        expect(span.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(9);
    });

    it('a chunked request body: the bytes of its chunks, without the framing', async () => {
        const res = await new Promise<string>((resolve, reject) => {
            const req = httpRequest(
                { host: '127.0.0.1', port, method: 'POST', path: '/upload', agent: false },
                (response) => {
                    const chunks: Buffer[] = [];
                    response.on('data', (chunk: Buffer) => chunks.push(chunk));
                    response.on('end', () => resolve(Buffer.concat(chunks).toString()));
                }
            );
            req.on('error', reject);
            req.write(Buffer.alloc(3000, 1));
            req.write('and more');
            req.end();
        });
        expect(res).toBe('got 3008');
        expect((await serverSpan()).attributes[ATTR_HTTP_REQUEST_BODY_SIZE]).toBe(3008);
    });

    it('a HEAD response: 0 bytes', async () => {
        const res = await raw('HEAD', '/text');
        expect(res.statusCode).toBe(200);
        expect((await serverSpan()).attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(0);
    });

    it('server.inject counts the injected payload too', async () => {
        const res = await server.inject({ method: 'POST', url: '/upload', payload: 'twelve bytes' });
        expect(res.payload).toBe('got 12');
        const span = await serverSpan();
        expect(span.attributes[ATTR_HTTP_REQUEST_BODY_SIZE]).toBe(12);
        expect(span.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(6);
    });
});

describe('tracing plugin: optional metrics', () => {
    it('without optionalMetrics, only http.server.request.duration is recorded', async () => {
        await raw('GET', '/text');
        await serverSpan();
        expect([...(await otel.metrics()).keys()]).toEqual([METRIC_HTTP_SERVER_REQUEST_DURATION]);
    });

    it('with optionalMetrics: the body sizes and the active requests, as the conventions define them', async () => {
        const reader = setupOtel();
        const app = Hapi.server();
        await app.register({
            plugin: tracing,
            options: { meterProvider: reader.meterProvider, optionalMetrics: true }
        });
        app.route([
            {
                method: 'POST',
                path: '/upload',
                handler: (request) => `got ${(request.payload as Buffer).length}`,
                options: { payload: { parse: false } }
            },
            {
                method: 'GET',
                path: '/wait',
                handler: () =>
                    new Promise((resolve) => {
                        release = () => resolve('done');
                        entered?.();
                    })
            }
        ]);

        await app.inject({ method: 'POST', url: '/upload', payload: 'x'.repeat(300) });
        const metrics = await reader.metrics();
        const attributes = {
            [ATTR_HTTP_REQUEST_METHOD]: 'POST',
            [ATTR_URL_SCHEME]: 'http',
            [ATTR_HTTP_ROUTE]: '/upload',
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
            [ATTR_NETWORK_PROTOCOL_VERSION]: '1.1'
        };
        expect(metrics.get(METRIC_HTTP_SERVER_REQUEST_DURATION)!.points[0]!.attributes).toEqual(attributes);
        for (const [name, bytes, description] of [
            [METRIC_HTTP_SERVER_REQUEST_BODY_SIZE, 300, 'Size of HTTP server request bodies.'],
            [METRIC_HTTP_SERVER_RESPONSE_BODY_SIZE, 7, 'Size of HTTP server response bodies.']
        ] as const) {
            const metric = metrics.get(name)!;
            expect(metric).toMatchObject({ unit: 'By', type: 'HISTOGRAM', valueType: ValueType.INT, description });
            expect(metric.points).toEqual([{ attributes, value: { count: 1, sum: bytes } }]);
        }

        // A request in its handler is active; with the method and scheme the conventions require.
        const active = (await reader.metrics()).get(METRIC_HTTP_SERVER_ACTIVE_REQUESTS)!;
        expect(active).toMatchObject({
            unit: '{request}',
            type: 'UP_DOWN_COUNTER',
            valueType: ValueType.INT,
            isMonotonic: false,
            description: 'Number of active HTTP server requests.'
        });
        const inHandler = new Promise<void>((resolve) => {
            entered = resolve;
        });
        const waiting = app.inject('/wait');
        await inHandler;
        const activeAttributes = { [ATTR_HTTP_REQUEST_METHOD]: 'GET', [ATTR_URL_SCHEME]: 'http' };
        const points = () => reader.metrics().then((all) => all.get(METRIC_HTTP_SERVER_ACTIVE_REQUESTS)!.points);
        expect(await points()).toEqual([
            { attributes: { [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_URL_SCHEME]: 'http' }, value: 0 },
            { attributes: activeAttributes, value: 1 }
        ]);
        release!();
        expect((await waiting).payload).toBe('done');
        expect((await points())[1]).toEqual({ attributes: activeAttributes, value: 0 });
        await reader.shutdown();
    });
});
