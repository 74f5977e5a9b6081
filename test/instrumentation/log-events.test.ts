import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SpanStatusCode } from '@opentelemetry/api';
import { logs } from '@opentelemetry/api-logs';
import {
    InMemoryLogRecordExporter,
    LoggerProvider,
    type ReadableLogRecord,
    SimpleLogRecordProcessor
} from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
    type ClientInstrumentation,
    EVENT_HTTP_CLIENT_REQUEST_EXCEPTION,
    type EventLoggerProvider,
    instrumentClient,
    PHASE_EVENTS,
    TracewireInstrumentation
} from '../../instrumentation/index.js';
import { globalLoggerProvider } from '../../instrumentation/log-events.js';
import { Client } from '../../src/client/index.js';
import { refusedUrl } from '../client/helpers.js';
import { loggerKeepingNothing, setupOtel } from './otel.js';

/**
 * docs/observability.md "Events as logs": a failed hop's exception as the conventions'
 * `http.client.request.exception` log event, and with `phaseEvents` its moments, through the Logs API,
 * each in its span's context; span events only with `spanEvents`; nothing without a LoggerProvider.
 */

const repo = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const otel = setupOtel();
let server: Server;
let origin: string;
let exporter: InMemoryLogRecordExporter;
let loggerProvider: LoggerProvider;
let api: Client;
let instrumentation: ClientInstrumentation | undefined;

beforeAll(async () => {
    server = createServer((req, res) => {
        if (req.url === '/missing') {
            res.writeHead(404).end('no');
        } else if (req.url === '/stall') {
            // No answer: the caller cancels.
        } else {
            res.end('ok');
        }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await otel.shutdown();
});

beforeEach(() => {
    otel.reset();
    exporter = new InMemoryLogRecordExporter();
    loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
    api = new Client().defaults({ events: true });
});

afterEach(async () => {
    instrumentation?.disable();
    instrumentation = undefined;
    await loggerProvider.shutdown();
});

function instrument(config: Parameters<typeof instrumentClient>[1] = {}): void {
    instrumentation = instrumentClient(api, { tracerProvider: otel.tracerProvider, loggerProvider, ...config });
}

const records = (): ReadableLogRecord[] => exporter.getFinishedLogRecords();
const exceptions = () => records().filter((record) => record.eventName === EVENT_HTTP_CLIENT_REQUEST_EXCEPTION);

function expectInContextOf(record: ReadableLogRecord, span: ReadableSpan): void {
    expect(record.spanContext?.traceId).toBe(span.spanContext().traceId);
    expect(record.spanContext?.spanId).toBe(span.spanContext().spanId);
}

describe('the exception of a failed hop', () => {
    it('a failed call emits one http.client.request.exception record, WARN, in the context of its span', async () => {
        instrument();
        await expect(api.get(refusedUrl)).rejects.toThrow();
        await expect.poll(() => otel.spans().length).toBe(1);
        const [span] = otel.spans();
        expect(span!.status.code).toBe(SpanStatusCode.ERROR);
        // The span keeps its status and error.type; the exception is no longer an event on it.
        expect(span!.events).toEqual([]);

        const [record, ...more] = records();
        expect(more).toEqual([]);
        expect(record!.eventName).toBe(EVENT_HTTP_CLIENT_REQUEST_EXCEPTION);
        expect(record!.severityNumber).toBe(13);
        expect(record!.severityText).toBe('WARN');
        expect(record!.attributes).toMatchObject({
            'exception.type': 'ECONNREFUSED',
            'error.type': 'ECONNREFUSED',
            'http.request.method': 'GET',
            'server.address': '127.0.0.1',
            'server.port': 1
        });
        expect(record!.attributes['exception.message']).toMatch(/ECONNREFUSED/);
        expect(record!.attributes['exception.stacktrace']).toEqual(expect.any(String));
        expectInContextOf(record!, span!);
    });

    it('one record per failed hop: a retried failure and the one the caller saw, each with its span', async () => {
        instrument();
        api = api.defaults({ retry: { limit: 1, backoff: () => 0 } });
        await expect(api.get(refusedUrl)).rejects.toThrow();
        await expect.poll(() => otel.spans().length).toBe(2);
        const spans = otel.spans();
        expect(exceptions()).toHaveLength(2);
        for (const [i, record] of exceptions().entries()) {
            expectInContextOf(record, spans[i]!);
        }
    });

    it('a response, a 404 a helper turns into an error included, emits none', async () => {
        instrument();
        await api.get(`${origin}/`);
        await expect(api.get(`${origin}/missing`)).rejects.toThrow();
        await expect.poll(() => otel.spans().length).toBe(2);
        expect(records()).toEqual([]);
    });

    it('a cancellation (the signal, req.abort()) is no error: no record, no ERROR status', async () => {
        instrument();
        const controller = new AbortController();
        const bySignal = api.get(`${origin}/stall`, { signal: controller.signal });
        setTimeout(() => controller.abort(), 20);
        await expect(bySignal).rejects.toThrow();
        const byAbort = api.request('GET', `${origin}/stall`);
        setTimeout(() => byAbort.req?.abort(), 20);
        await expect(byAbort).rejects.toThrow();

        await expect.poll(() => otel.spans().length).toBe(2);
        for (const span of otel.spans()) {
            expect(span.status.code).toBe(SpanStatusCode.UNSET);
            expect(span.attributes['error.type']).toBeUndefined();
        }

        expect(records()).toEqual([]);
    });

    it('with spanEvents, the exception is also an event on the span', async () => {
        instrument({ spanEvents: true });
        await expect(api.get(refusedUrl)).rejects.toThrow();
        await expect.poll(() => otel.spans().length).toBe(1);
        expect(otel.spans()[0]!.events.map((event) => event.name)).toEqual(['exception']);
        expect(exceptions()).toHaveLength(1);
    });
});

describe('phase events', () => {
    it('with phaseEvents, each moment of a traced hop is a DEBUG record at that moment, in its span; no span event', async () => {
        instrument({ phaseEvents: true });
        const { res } = await api.get(`${origin}/`);
        await expect.poll(() => otel.spans().length).toBe(1);
        const [span] = otel.spans();
        expect(span!.events).toEqual([]);

        const moments = records();
        expect(moments.map((record) => record.eventName)).toEqual([
            PHASE_EVENTS.socket,
            PHASE_EVENTS.connect,
            PHASE_EVENTS.upload,
            PHASE_EVENTS.response,
            PHASE_EVENTS.end
        ]);
        for (const record of moments) {
            expect(record.severityNumber).toBe(5);
            expectInContextOf(record, span!);
        }

        const at = (record: ReadableLogRecord) => record.hrTime[0] * 1e3 + record.hrTime[1] / 1e6;
        expect(at(moments[3]!)).toBeCloseTo(res.timings.response!, 0);
    });

    it('without phaseEvents, no record for a hop that succeeded', async () => {
        instrument();
        await api.get(`${origin}/`);
        await expect.poll(() => otel.spans().length).toBe(1);
        expect(records()).toEqual([]);
    });
});

describe('where the records go', () => {
    it('the global LoggerProvider when none is given; TracewireInstrumentation takes one from setLoggerProvider()', async () => {
        logs.setGlobalLoggerProvider(loggerProvider);
        try {
            instrumentation = instrumentClient(api, { tracerProvider: otel.tracerProvider });
            await expect(api.get(refusedUrl)).rejects.toThrow();
            expect(exceptions()).toHaveLength(1);
        } finally {
            instrumentation?.disable();
            instrumentation = undefined;
            logs.disable();
        }

        const processWide = new TracewireInstrumentation({ tracerProvider: otel.tracerProvider });
        processWide.setLoggerProvider(loggerProvider);
        try {
            await expect(new Client().get(refusedUrl)).rejects.toThrow();
            expect(exceptions()).toHaveLength(2);
        } finally {
            processWide.disable();
        }
    });

    it('without a LoggerProvider nothing is built: a logger that keeps nothing is never handed a record', async () => {
        const { provider: keepsNothing, asked, emitted } = loggerKeepingNothing();
        instrumentation = instrumentClient(api, {
            tracerProvider: otel.tracerProvider,
            loggerProvider: keepsNothing,
            phaseEvents: true
        });
        await expect(api.get(refusedUrl)).rejects.toThrow();
        await api.get(`${origin}/`);
        expect(asked).toContain(EVENT_HTTP_CLIENT_REQUEST_EXCEPTION);
        expect(emitted).toEqual([]);

        // With no provider registered, the global one of the Logs API (@opentelemetry/api-logs here) is that logger.
        const global = globalLoggerProvider()!.getLogger('tracewire/instrumentation');
        expect(global.enabled?.({ eventName: EVENT_HTTP_CLIENT_REQUEST_EXCEPTION })).toBe(false);
    });

    it('no logger where no Logs API can be loaded', () => {
        const missing = (name: string) => {
            throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
        };
        expect(globalLoggerProvider(missing)).toBeUndefined();
        // @opentelemetry/api before 1.10 has no `logs`: without @opentelemetry/api-logs, no logger either.
        expect(globalLoggerProvider((name) => (name === '@opentelemetry/api' ? {} : missing(name)))).toBeUndefined();
    });

    // The SDK 3 line's NodeSDK registers its LoggerProvider on `logs` of @opentelemetry/api 1.10, and
    // has no @opentelemetry/api-logs (test/consumer/current-sdk.consumer.test.ts runs it for real).
    it("the global LoggerProvider is @opentelemetry/api's own where the API has one (1.10 and later)", () => {
        const inApi: EventLoggerProvider = { getLogger: () => ({ emit: () => {} }) };
        const inApiLogs: EventLoggerProvider = { getLogger: () => ({ emit: () => {} }) };
        const modules: Record<string, unknown> = {
            '@opentelemetry/api': { logs: { getLoggerProvider: () => inApi } },
            '@opentelemetry/api-logs': { logs: { getLoggerProvider: () => inApiLogs } }
        };
        expect(globalLoggerProvider((name) => modules[name])).toBe(inApi);
        modules['@opentelemetry/api'] = {};
        expect(globalLoggerProvider((name) => modules[name])).toBe(inApiLogs);
    });

    // The built package (`npm test` builds first), in a process where the optional peer cannot be resolved.
    it('the built tracewire/instrumentation loads and traces where @opentelemetry/api-logs is not installed', async () => {
        const dir = mkdtempSync(join(tmpdir(), 'tracewire-no-logs-'));
        try {
            const preload = join(dir, 'hide-api-logs.cjs');
            writeFileSync(
                preload,
                `const Module = require('node:module');
                const resolve = Module._resolveFilename;
                Module._resolveFilename = function (request, ...rest) {
                    if (request === '@opentelemetry/api-logs') {
                        throw Object.assign(new Error("Cannot find module '@opentelemetry/api-logs'"), { code: 'MODULE_NOT_FOUND' });
                    }
                    return resolve.call(this, request, ...rest);
                };`
            );
            const script = `
                import { createRequire } from 'node:module';
                const { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } = await import('@opentelemetry/sdk-trace');
                const { Client } = await import(${JSON.stringify(`${repo}dist/src/client/index.js`)});
                const { instrumentClient } = await import(${JSON.stringify(`${repo}dist/instrumentation/index.js`)});
                let hidden = false;
                try { createRequire(import.meta.url)('@opentelemetry/api-logs'); } catch { hidden = true; }
                const exporter = new InMemorySpanExporter();
                const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
                const api = new Client().defaults({ events: true });
                instrumentClient(api, { tracerProvider, phaseEvents: true });
                const failed = await api.get(${JSON.stringify(refusedUrl)}).then(() => false, () => true);
                await tracerProvider.forceFlush();
                const spans = exporter.getFinishedSpans().map((span) => span.status.code);
                console.log(JSON.stringify({ hidden, failed, spans }));`;
            const { stdout } = await run(
                process.execPath,
                ['--require', preload, '--input-type=module', '-e', script],
                {
                    cwd: repo
                }
            );
            expect(JSON.parse(stdout)).toEqual({ hidden: true, failed: true, spans: [SpanStatusCode.ERROR] });
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });
});
