import { once } from 'node:events';
import { type ClientRequest, createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { context, SpanKind } from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ClientInstrumentation, instrumentClient, TracewireInstrumentation } from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import { setupOtel } from './otel.js';

/*
 * A hop a tracewire instrumentation traces creates its request with tracing suppressed only while
 * `http.request` or `https.request` is wrapped as OpenTelemetry's instrumentations wrap it
 * (instrumentation-http): without one, nobody reads the flag and entering the scope is work for
 * nobody. The check is made for each hop, so instrumentation-http registered before or after
 * tracewire's instrumentation, or disabled, is seen by the next hop. (With instrumentation-http
 * registered first for a whole file: http-instrumentation.test.ts.)
 */

const otel = setupOtel();
const providers = { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider };
const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');
const nodeRequest = http.request;
const received: IncomingHttpHeaders[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
    server = createServer((req, res) => {
        received.push(req.headers);
        res.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
    http.request = nodeRequest;
    otel.reset();
    received.length = 0;
});

afterAll(async () => {
    server.close();
    await otel.shutdown();
});

const clientSpans = () => otel.spans().filter((span) => span.kind === SpanKind.CLIENT);

// One instance for the file: its first enable() patches `http` through the module hook as `http` is
// required; a later enable() patches the module it already holds, at once.
const httpInstrumentation = new HttpInstrumentation({ enabled: false });
httpInstrumentation.setTracerProvider(otel.tracerProvider);
httpInstrumentation.setMeterProvider(otel.meterProvider);

function enableHttpInstrumentation(): void {
    httpInstrumentation.enable();
    createRequire(import.meta.url)('node:http');
}

/**
 * Replaces `http.request` (the client calls it on the module object) with a function that notes
 * whether tracing was suppressed where the request was created; with `marked`, carrying the marks
 * OpenTelemetry's shimmer leaves on a wrapper.
 */
function watchRequests(marked: boolean): boolean[] {
    const suppressed: boolean[] = [];
    const watching = (...args: Parameters<typeof nodeRequest>): ClientRequest => {
        suppressed.push(isTracingSuppressed(context.active()));
        return nodeRequest(...args);
    };
    if (marked) {
        Object.assign(watching, { __wrapped: true, __original: nodeRequest, __unwrap: () => {} });
    }

    http.request = watching as typeof nodeRequest;
    return suppressed;
}

describe('the scope a traced hop creates its request in', () => {
    let handle: ClientInstrumentation;
    const traced = client.defaults({ events: true });

    beforeAll(() => {
        handle = instrumentClient(traced, providers);
    });

    afterAll(() => handle.disable());

    it('is the caller’s own when nothing wrapped http.request: no suppression, one span, its traceparent sent', async () => {
        const suppressed = watchRequests(false);
        await traced.get(`${base}/`);
        expect(suppressed).toEqual([false]);
        await expect.poll(() => clientSpans().length).toBe(1);
        expect(received[0]?.traceparent).toContain(clientSpans()[0]!.spanContext().spanId);
    });

    it('has tracing suppressed while http.request is wrapped the way OpenTelemetry instrumentations wrap it', async () => {
        const suppressed = watchRequests(true);
        await traced.get(`${base}/`);
        expect(suppressed).toEqual([true]);
        await expect.poll(() => clientSpans().length).toBe(1);
        expect(received[0]?.traceparent).toContain(clientSpans()[0]!.spanContext().spanId);
    });

    it('a hop the instrumentation does not trace (ignoreRequest) is claimed all the same: suppressed when wrapped', async () => {
        const other = client.defaults({ events: true });
        const ignoring = instrumentClient(other, { ...providers, ignoreRequest: () => true });
        try {
            const suppressed = watchRequests(true);
            await other.get(`${base}/`);
            expect(suppressed).toEqual([true]);
            expect(received[0]?.traceparent).toBeUndefined();
        } finally {
            ignoring.disable();
        }
    });
});

describe('with @opentelemetry/instrumentation-http registered after tracewire’s instrumentation', () => {
    const traced = client.defaults({ events: true, redirects: 1 });

    it('instrumentClient first: one client span per hop (ours), parent of the server span; none suppressed once it is disabled', async () => {
        const handle = instrumentClient(traced, providers);
        try {
            enableHttpInstrumentation();
            await traced.get(`${base}/`);
            await expect.poll(() => otel.spans().length).toBe(2);
            const [span, ...others] = clientSpans();
            expect(others).toHaveLength(0);
            expect(span?.instrumentationScope.name).toBe('tracewire/instrumentation');
            const serverSpan = otel.spans().find((candidate) => candidate.kind === SpanKind.SERVER)!;
            expect(serverSpan.parentSpanContext?.spanId).toBe(span?.spanContext().spanId);

            httpInstrumentation.disable();
            expect(http.request).toBe(nodeRequest);
            otel.reset();
            const suppressed = watchRequests(false);
            await traced.get(`${base}/`);
            expect(suppressed).toEqual([false]);
            await expect.poll(() => clientSpans().length).toBe(1);
        } finally {
            httpInstrumentation.disable();
            handle.disable();
        }
    });

    it('TracewireInstrumentation first: one client span (ours), parent of the server span', async () => {
        const processWide = new TracewireInstrumentation(providers);
        try {
            enableHttpInstrumentation();
            await client.get(`${base}/`);
            await expect.poll(() => otel.spans().length).toBe(2);
            const [span, ...others] = clientSpans();
            expect(others).toHaveLength(0);
            expect(span?.instrumentationScope.name).toBe('tracewire/instrumentation');
            const serverSpan = otel.spans().find((candidate) => candidate.kind === SpanKind.SERVER)!;
            expect(serverSpan.parentSpanContext?.spanId).toBe(span?.spanContext().spanId);
        } finally {
            httpInstrumentation.disable();
            processWide.disable();
        }
    });

    it('instrumentation-http registered first, then TracewireInstrumentation: one client span (ours)', async () => {
        enableHttpInstrumentation();
        const processWide = new TracewireInstrumentation(providers);
        try {
            await client.get(`${base}/`);
            await expect.poll(() => otel.spans().length).toBe(2);
            const [span, ...others] = clientSpans();
            expect(others).toHaveLength(0);
            expect(span?.instrumentationScope.name).toBe('tracewire/instrumentation');
        } finally {
            processWide.disable();
            httpInstrumentation.disable();
        }
    });
});
