import http from 'node:http';
import Hapi from '@hapi/hapi';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { logs } from '@opentelemetry/api-logs';
import {
    InMemoryLogRecordExporter,
    LoggerProvider,
    type ReadableLogRecord,
    SimpleLogRecordProcessor
} from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_HTTP_SERVER_REQUEST_EXCEPTION, type TracingOptions, tracing } from '../../instrumentation/index.js';
import { badImplementation, notFound } from '../../src/errors/index.js';
import { staticFiles } from '../../src/static/index.js';
import { loggerKeepingNothing, setupOtel } from './otel.js';

/**
 * docs/observability.md "Events as logs", the server side: a 5xx's exception as the conventions'
 * `http.server.request.exception` log event (ERROR), in the context of the request's server span, from
 * the `tracing` plugin and from the static plugin's error span on an upstream instrumentation's span;
 * span events only with `spanEvents`; a client that went away is no error.
 */

const otel = setupOtel();
let exporter: InMemoryLogRecordExporter;
let loggerProvider: LoggerProvider;
const servers: Hapi.Server[] = [];

beforeEach(() => {
    otel.reset();
    exporter = new InMemoryLogRecordExporter();
    loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
});

afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    await loggerProvider.shutdown();
});

afterAll(() => otel.shutdown());

const records = (): ReadableLogRecord[] => exporter.getFinishedLogRecords();

function expectInContextOf(record: ReadableLogRecord, span: ReadableSpan): void {
    expect(record.spanContext?.traceId).toBe(span.spanContext().traceId);
    expect(record.spanContext?.spanId).toBe(span.spanContext().spanId);
}

function routes(server: Hapi.Server): void {
    server.route([
        { method: 'GET', path: '/ok', handler: () => 'ok' },
        {
            method: 'GET',
            path: '/broken/{id}',
            handler: () => {
                throw badImplementation('Database exploded');
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
            path: '/missing',
            handler: () => {
                throw notFound('No such user');
            }
        },
        {
            method: 'GET',
            path: '/slow',
            // A client that goes away is answered with this status by hapi: a 5xx here, as an app may choose.
            options: { response: { disconnectStatusCode: 503 } },
            handler: async () => {
                await new Promise((resolve) => setTimeout(resolve, 300));
                return 'late';
            }
        }
    ]);
}

async function tracedServer(options: Partial<TracingOptions> = {}): Promise<string> {
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    servers.push(server);
    await server.register({
        plugin: tracing,
        options: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider, loggerProvider, ...options }
    });
    routes(server);
    await server.start();
    return `http://127.0.0.1:${server.info.port}`;
}

async function fetchSpan(url: string, headers: Record<string, string> = {}) {
    const res = await fetch(url, { headers });
    const body = await res.text();
    await expect.poll(() => otel.spans().length).toBe(1);
    return { res, body, span: otel.spans()[0]! };
}

describe('the tracing plugin: a failed request', () => {
    it('a 5xx emits one http.server.request.exception record, ERROR, in its span, with the message the payload hides', async () => {
        const base = await tracedServer();
        const { res, body, span } = await fetchSpan(`${base}/broken/7`);
        expect(res.status).toBe(500);
        expect(JSON.parse(body).message).toBe('An internal server error occurred');
        expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Database exploded' });
        // The exception is no longer an event on the span.
        expect(span.events).toEqual([]);

        const [record, ...more] = records();
        expect(more).toEqual([]);
        expect(record!.eventName).toBe(EVENT_HTTP_SERVER_REQUEST_EXCEPTION);
        expect(record!.severityNumber).toBe(17);
        expect(record!.severityText).toBe('ERROR');
        expect(record!.instrumentationScope.name).toBe('tracewire/instrumentation');
        expect(record!.attributes).toMatchObject({
            'exception.type': 'Error',
            'exception.message': 'Database exploded',
            'error.type': '500',
            'http.request.method': 'GET',
            'http.route': '/broken/{id}'
        });
        expect(record!.attributes['exception.stacktrace']).toMatch(/Database exploded/);
        expectInContextOf(record!, span);
    });

    it('an Error a handler throws is told with its own message; a 4xx and a success emit none', async () => {
        const base = await tracedServer();
        await fetchSpan(`${base}/crash`);
        expect(records().map((record) => record.attributes['exception.message'])).toEqual(['kaboom']);
        exporter.reset();
        otel.reset();
        await fetchSpan(`${base}/missing`);
        otel.reset();
        await fetchSpan(`${base}/ok`);
        expect(records()).toEqual([]);
    });

    it('a sampled-out request still tells its exception, in the context of its span', async () => {
        const base = await tracedServer();
        const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
        const res = await fetch(`${base}/crash`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-00` } });
        await res.text();
        await expect.poll(() => records().length).toBe(1);
        const [record] = records();
        expect(record!.eventName).toBe(EVENT_HTTP_SERVER_REQUEST_EXCEPTION);
        expect(record!.spanContext?.traceId).toBe(traceId);
        expect(otel.spans()).toEqual([]);
    });

    it('with spanEvents, the exception is also an event on the span', async () => {
        const base = await tracedServer({ spanEvents: true });
        const { span } = await fetchSpan(`${base}/broken/1`);
        expect(span.events.map((event) => event.name)).toEqual(['exception']);
        expect(span.events[0]!.attributes?.['exception.message']).toBe('Database exploded');
        expect(records()).toHaveLength(1);
    });

    it('a client that goes away is no error, even when hapi answers it with a 5xx: no ERROR, no record', async () => {
        const base = await tracedServer({ spanEvents: true });
        await new Promise<void>((resolve) => {
            const req = http.get(`${base}/slow`);
            req.on('error', () => resolve());
            setTimeout(() => req.destroy(), 50);
        });
        await expect.poll(() => otel.spans().length, { timeout: 2000 }).toBe(1);
        const [span] = otel.spans();
        // What hapi reports for it, as it reports any status, and nothing more.
        expect(span!.attributes['http.response.status_code']).toBe(503);
        expect(span!.status.code).toBe(SpanStatusCode.UNSET);
        expect(span!.events).toEqual([]);
        expect(records()).toEqual([]);
    });

    it('without a LoggerProvider nothing is built: a logger that keeps nothing is never handed a record', async () => {
        const { provider: keepsNothing, asked, emitted } = loggerKeepingNothing();
        const base = await tracedServer({ loggerProvider: keepsNothing });
        await fetchSpan(`${base}/crash`);
        expect(asked).toEqual([EVENT_HTTP_SERVER_REQUEST_EXCEPTION]);
        expect(emitted).toEqual([]);
    });
});

describe("the static plugin's error span, on an upstream instrumentation's server span", () => {
    async function upstreamServer(spanEvents?: boolean): Promise<Hapi.Server> {
        const server = Hapi.server({
            debug: false,
            ...(spanEvents === undefined ? {} : { plugins: { static: { spanEvents } } })
        });
        servers.push(server);
        await server.register(staticFiles);
        routes(server);
        await server.initialize();
        return server;
    }

    async function injectInSpan(server: Hapi.Server, url: string) {
        const span = otel.tracerProvider.getTracer('upstream').startSpan('upstream', { kind: SpanKind.SERVER });
        const res = await context.with(trace.setSpan(context.active(), span), () => server.inject(url));
        span.end();
        return { res, span: otel.spans().find((candidate) => candidate.name === 'upstream')! };
    }

    beforeEach(() => logs.setGlobalLoggerProvider(loggerProvider));
    afterEach(() => logs.disable());

    it('a 5xx is an http.server.request.exception record of the global LoggerProvider, in the active span', async () => {
        const server = await upstreamServer();
        const { res, span } = await injectInSpan(server, '/broken/3');
        expect(res.statusCode).toBe(500);
        expect(span.attributes).toEqual({ 'http.response.status_code': 500, 'error.type': '500' });
        expect(span.events).toEqual([]);

        const [record, ...more] = records();
        expect(more).toEqual([]);
        expect(record!.eventName).toBe(EVENT_HTTP_SERVER_REQUEST_EXCEPTION);
        expect(record!.severityNumber).toBe(17);
        expect(record!.instrumentationScope.name).toBe('tracewire/static');
        expect(record!.attributes).toMatchObject({ 'exception.message': 'Database exploded', 'error.type': '500' });
        expectInContextOf(record!, span);

        exporter.reset();
        await injectInSpan(server, '/missing');
        expect(records()).toEqual([]);
    });

    it('with plugins.static.spanEvents, the exception is also an event on that span', async () => {
        const server = await upstreamServer(true);
        const { span } = await injectInSpan(server, '/crash');
        expect(span.events.map((event) => event.name)).toEqual(['exception']);
        expect(span.events[0]!.attributes?.['exception.message']).toBe('kaboom');
        expect(records()).toHaveLength(1);
    });

    it('a request the tracing plugin traces too is told once, by the tracing plugin, in its own span', async () => {
        const server = await upstreamServer();
        await server.register({
            plugin: tracing,
            options: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider, loggerProvider }
        });
        await injectInSpan(server, '/broken/9');
        const own = otel.spans().find((candidate) => candidate.name === 'GET /broken/{id}')!;
        const [record, ...more] = records();
        expect(more).toEqual([]);
        expect(record!.instrumentationScope.name).toBe('tracewire/instrumentation');
        expectInContextOf(record!, own);
    });

    it('rejects a spanEvents setting that is not a boolean', async () => {
        const server = Hapi.server({ plugins: { static: { spanEvents: 'yes' as unknown as boolean } } });
        await expect(server.register(staticFiles)).rejects.toThrow(/plugins\.static\.spanEvents must be true or false/);
    });
});
