import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { context, SpanKind } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
    type ClientInstrumentation,
    ignoreTracewireRequests,
    instrumentClient,
    isTracewireRequest,
    TRACEWIRE_REQUEST,
    TracewireInstrumentation
} from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
const httpInstrumentation = new HttpInstrumentation({ enabled: false });
httpInstrumentation.setTracerProvider(otel.tracerProvider);
httpInstrumentation.setMeterProvider(otel.meterProvider);
const traced = client.defaults({ events: true, redirects: 3 });
let handle: ClientInstrumentation;
let server: Server;
let base: string;

beforeAll(async () => {
    httpInstrumentation.enable();
    // The module hook patches `http` when it is required. The client calls `request` on the module
    // object as it sends (src/client/wire/http1/node-http.ts), so it sees the patch with nothing synced.
    createRequire(import.meta.url)('node:http');
    handle = instrumentClient(traced, { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider });
    server = createServer((req, res) => {
        if (req.url === '/redirect') {
            res.writeHead(302, { location: '/' }).end();
        } else {
            res.end('ok');
        }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => otel.reset());

afterAll(async () => {
    handle.disable();
    httpInstrumentation.disable();
    server.close();
    await otel.shutdown();
});

const clientSpans = () => otel.spans().filter((span) => span.kind === SpanKind.CLIENT);

describe('with @opentelemetry/instrumentation-http active', () => {
    it('with nothing configured, a hop gets one client span (ours), parent of the server span', async () => {
        httpInstrumentation.setConfig({});
        const res = await traced.get(`${base}/`);
        expect(String(res.payload)).toBe('ok');
        await expect.poll(() => otel.spans().length).toBe(2);
        const [span, ...others] = clientSpans();
        expect(others).toHaveLength(0);
        expect(span?.instrumentationScope.name).toBe('tracewire/instrumentation');
        const serverSpan = otel.spans().find((candidate) => candidate.kind === SpanKind.SERVER)!;
        expect(serverSpan.spanContext().traceId).toBe(span?.spanContext().traceId);
        expect(serverSpan.parentSpanContext?.spanId).toBe(span?.spanContext().spanId);
    });

    it('each hop of a redirect gets its span, in the caller’s trace, each the parent of its server span', async () => {
        httpInstrumentation.setConfig({});
        const tracer = otel.tracerProvider.getTracer('test');
        await tracer.startActiveSpan('caller', async (caller) => {
            await traced.get(`${base}/redirect`);
            caller.end();
        });
        await expect.poll(() => otel.spans().length).toBe(5);
        const caller = otel.spans().find((span) => span.name === 'caller')!;
        const hops = clientSpans();
        expect(hops.map((span) => span.instrumentationScope.name)).toEqual([
            'tracewire/instrumentation',
            'tracewire/instrumentation'
        ]);
        const serverSpans = otel.spans().filter((span) => span.kind === SpanKind.SERVER);
        for (const hop of hops) {
            expect(hop.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
            expect(
                serverSpans.filter((span) => span.parentSpanContext?.spanId === hop.spanContext().spanId)
            ).toHaveLength(1);
        }
    });

    it('TracewireInstrumentation (every client, through the channels): one client span, parent of the server span', async () => {
        httpInstrumentation.setConfig({});
        const processWide = new TracewireInstrumentation({ tracerProvider: otel.tracerProvider });
        try {
            await client.get(`${base}/`);
        } finally {
            processWide.disable();
        }

        await expect.poll(() => otel.spans().length).toBe(2);
        const [span, ...others] = clientSpans();
        expect(others).toHaveLength(0);
        expect(span?.instrumentationScope.name).toBe('tracewire/instrumentation');
        const serverSpan = otel.spans().find((candidate) => candidate.kind === SpanKind.SERVER)!;
        expect(serverSpan.parentSpanContext?.spanId).toBe(span?.spanContext().spanId);
    });

    it('tracing suppressed by the caller stays suppressed: no span at all', async () => {
        httpInstrumentation.setConfig({});
        await context.with(suppressTracing(context.active()), () => traced.get(`${base}/`));
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(clientSpans()).toHaveLength(0);
    });

    it('ignoreOutgoingRequestHook: isTracewireRequest leaves one client span, parent of the server span', async () => {
        httpInstrumentation.setConfig({ ignoreOutgoingRequestHook: isTracewireRequest });
        await traced.get(`${base}/`);
        await expect.poll(() => otel.spans().length).toBe(2);
        const [span, ...others] = clientSpans();
        expect(others).toHaveLength(0);
        expect(span?.instrumentationScope.name).toBe('tracewire/instrumentation');
        const serverSpan = otel.spans().find((candidate) => candidate.kind === SpanKind.SERVER)!;
        expect(serverSpan.parentSpanContext?.spanId).toBe(span?.spanContext().spanId);
    });

    it('other requests are still traced by instrumentation-http', async () => {
        httpInstrumentation.setConfig({ ignoreOutgoingRequestHook: ignoreTracewireRequests(() => false) });
        const res = await fetchWithNodeHttp(`${base}/`);
        expect(res).toBe('ok');
        await expect.poll(() => clientSpans().length).toBe(1);
        expect(clientSpans()[0]!.instrumentationScope.name).toBe('@opentelemetry/instrumentation-http');
    });
});

describe('isTracewireRequest', () => {
    it('recognises the mark the client puts on the headers of its http.request() options', () => {
        expect(TRACEWIRE_REQUEST).toBe(Symbol.for('tracewire.client'));
        expect(isTracewireRequest({ host: 'x', headers: { [TRACEWIRE_REQUEST]: true } })).toBe(true);
        expect(isTracewireRequest({ host: 'x', headers: {} })).toBe(false);
        expect(isTracewireRequest({ host: 'x' })).toBe(false);
        expect(isTracewireRequest(null)).toBe(false);
        expect(isTracewireRequest('http://x')).toBe(false);
    });

    it('ignoreTracewireRequests() asks the next hook about the other requests', () => {
        const hook = ignoreTracewireRequests((options: { host?: string }) => options.host === 'health');
        expect(hook({ headers: { [TRACEWIRE_REQUEST]: true } } as { host?: string })).toBe(true);
        expect(hook({ host: 'health' })).toBe(true);
        expect(hook({ host: 'api' })).toBe(false);
    });
});

async function fetchWithNodeHttp(url: string): Promise<string> {
    const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');
    return await new Promise((resolve, reject) => {
        http.get(url, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
                body += chunk;
            });
            res.on('end', () => resolve(body));
        }).on('error', reject);
    });
}
