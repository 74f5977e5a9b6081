import { channel } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { type Instrumentation, registerInstrumentations } from '@opentelemetry/instrumentation';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_REQUEST_RESEND_COUNT,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_SERVER_ADDRESS,
    ATTR_URL_FULL,
    METRIC_HTTP_CLIENT_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
    INSTRUMENTATION_VERSION,
    instrumentClient,
    PHASE_ATTRIBUTES,
    PHASE_EVENTS,
    TracewireInstrumentation
} from '../../instrumentation/index.js';
import { CLIENT_CHANNELS, client } from '../../src/client/index.js';
import { refusedUrl, startHttp, type TestServer } from '../client/helpers.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
// The context manager an application on Node 20 registers: AsyncLocalStorage.
context.disable();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const providers = { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider };

// Clients made before the instrumentation exists: a library's, say.
const plain = client.defaults({ headers: { 'x-library': 'one' } });
const eventsClient = client.defaults({ events: true });

let server: TestServer;
const received: IncomingHttpHeaders[] = [];
let releaseBody: (() => void) | undefined;
let flaky = 0;

beforeAll(async () => {
    server = await startHttp((req, res) => {
        received.push(req.headers);
        if (req.url === '/moved') {
            res.writeHead(302, { location: '/' }).end();
        } else if (req.url === '/flaky') {
            flaky++;
            res.writeHead(flaky === 1 ? 503 : 200).end('flaky');
        } else if (req.url === '/held') {
            // Headers now, the body when the test says so.
            res.writeHead(200, { 'content-type': 'text/plain' });
            res.write('first part ');
            releaseBody = () => res.end('last part');
        } else {
            res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
        }
    });
});

afterEach(() => {
    otel.reset();
    received.length = 0;
});

afterAll(async () => {
    await server.close();
    await otel.shutdown();
});

const phaseNames = new Set<string>([...Object.values(PHASE_ATTRIBUTES), ...Object.values(PHASE_EVENTS)]);

/**
 * What a span says, without its ids and times: the phases too are times (and a connection opened
 * by one run is reused by the next), so their attributes and events are left out.
 */
function describeSpan(span: ReadableSpan) {
    const timed = (name: string) => phaseNames.has(name);
    return {
        name: span.name,
        kind: span.kind,
        attributes: Object.fromEntries(Object.entries(span.attributes).filter(([name]) => !timed(name))),
        status: span.status,
        events: span.events.map((event) => event.name).filter((name) => !timed(name))
    };
}

function hasSubscribers(): boolean {
    return Object.values(CLIENT_CHANNELS).some((name) => channel(name).hasSubscribers);
}

/** Registers a process-wide instrumentation as an application does; returns the function that unregisters it. */
function register(instrumentation = new TracewireInstrumentation()) {
    return registerInstrumentations({ instrumentations: [instrumentation], ...providers });
}

describe('TracewireInstrumentation', () => {
    it('is an OpenTelemetry Instrumentation named and versioned after the package', () => {
        const instrumentation: Instrumentation = new TracewireInstrumentation({ enabled: false });
        const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
            version: string;
        };
        expect(instrumentation.instrumentationName).toBe('tracewire/instrumentation');
        expect(instrumentation.instrumentationVersion).toBe(INSTRUMENTATION_VERSION);
        expect(INSTRUMENTATION_VERSION).toBe(pkg.version);
        expect(instrumentation.getConfig()).toEqual({ enabled: false });
        expect(hasSubscribers()).toBe(false);
    });

    it('traces every client of the process: the root client, defaults() with or without events, made before or after', async () => {
        const unregister = register();
        try {
            const later = client.defaults({ baseUrl: server.url });
            const laterEvents = client.defaults({ events: true }).defaults({ baseUrl: server.url });
            await client.get(`${server.url}/`);
            await plain.get(`${server.url}/`);
            await eventsClient.get(`${server.url}/`);
            await later.get('/');
            await laterEvents.get('/');
            const res = await client.request('POST', `${server.url}/`, { payload: 'x' });
            await client.read(res);
        } finally {
            unregister();
        }

        const spans = otel.spans();
        expect(spans.map((span) => span.name)).toEqual(['GET', 'GET', 'GET', 'GET', 'GET', 'POST']);
        for (const span of spans) {
            expect(span.kind).toBe(SpanKind.CLIENT);
            expect(span.instrumentationScope.name).toBe('tracewire/instrumentation');
            expect(span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(200);
            expect(span.attributes[ATTR_SERVER_ADDRESS]).toBe('127.0.0.1');
            expect(span.attributes[ATTR_URL_FULL]).toBe(`${server.url}/`);
        }

        const points = await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
        const counted = points.reduce((sum, point) => sum + point.count, 0);
        expect(counted).toBeGreaterThanOrEqual(6);
        expect(points.some((point) => point.attributes[ATTR_HTTP_REQUEST_METHOD] === 'POST')).toBe(true);
    });

    it('gives a hop exactly what instrumentClient() gives an events client', async () => {
        const calls = async (target: typeof client) => {
            await target.get(`${server.url}/moved`, { redirects: 1, route: '/moved' });
            await target.post(`${server.url}/`, { payload: { a: 1 } });
            await target.get(`${server.url}/missing-route-is-fine`).catch(() => {});
        };
        const config = {
            ...providers,
            optionalMetrics: true,
            phaseEvents: true,
            spanEvents: true,
            headersToSpanAttributes: { response: ['content-type'] }
        };
        const own = instrumentClient(eventsClient, config);
        try {
            await calls(eventsClient);
        } finally {
            own.disable();
        }

        const byClient = otel.spans().map(describeSpan);
        otel.reset();
        const unregister = register(new TracewireInstrumentation(config));
        try {
            await calls(client);
        } finally {
            unregister();
        }

        expect(otel.spans().map(describeSpan)).toEqual(byClient);
        // The phases are there too, read from the channel message's details.timings.
        for (const span of otel.spans()) {
            expect(span.events.map((event) => event.name)).toContain(PHASE_EVENTS.response);
            expect(span.attributes[PHASE_ATTRIBUTES.firstByte]).toBeGreaterThanOrEqual(0);
        }
        expect(byClient).toHaveLength(4);
    });

    it('parents each hop on the caller span and propagates its context to the server', async () => {
        const unregister = register();
        const tracer = otel.tracerProvider.getTracer('test');
        try {
            await tracer.startActiveSpan('caller', async (caller) => {
                await client.get(`${server.url}/`);
                caller.end();
            });
        } finally {
            unregister();
        }

        const caller = otel.spans().find((span) => span.name === 'caller')!;
        const hop = otel.spans().find((span) => span.name === 'GET')!;
        expect(hop.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
        expect(received[0]!.traceparent).toBe(`00-${hop.spanContext().traceId}-${hop.spanContext().spanId}-01`);
    });

    it('makes a span per hop of redirects and retries, with http.request.resend_count', async () => {
        const unregister = register();
        flaky = 0;
        try {
            await client.get(`${server.url}/moved`, { redirects: 1 });
            await client.get(`${server.url}/flaky`, { retry: { backoff: () => 0 } });
        } finally {
            unregister();
        }

        const spans = otel.spans();
        expect(spans.map((span) => span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE])).toEqual([302, 200, 503, 200]);
        expect(spans.map((span) => span.attributes[ATTR_HTTP_REQUEST_RESEND_COUNT])).toEqual([
            undefined,
            1,
            undefined,
            1
        ]);
    });

    it('records failures with their error attributes', async () => {
        const unregister = register();
        try {
            await expect(client.get(refusedUrl)).rejects.toMatchObject({ output: { statusCode: 502 } });
        } finally {
            unregister();
        }

        const [span] = otel.spans();
        expect(span!.status.code).toBe(SpanStatusCode.ERROR);
        expect(span!.attributes[ATTR_ERROR_TYPE]).toBe('ECONNREFUSED');
    });

    it('ends a span with the body, not with the headers', async () => {
        const unregister = register();
        try {
            const res = await client.request('GET', `${server.url}/held`);
            expect(otel.spans()).toHaveLength(0);
            const reading = client.read(res);
            releaseBody!();
            expect(String(await reading)).toBe('first part last part');
        } finally {
            unregister();
        }

        expect(otel.spans()).toHaveLength(1);
    });

    it('puts the phases on a span as attributes, and their moments as span events only with phaseEvents and spanEvents', async () => {
        const timedEvents = () =>
            otel
                .spans()
                .flatMap((span) => span.events.map((event) => event.name).filter((name) => phaseNames.has(name)));
        let unregister = register(new TracewireInstrumentation(providers));
        try {
            await client.get(`${server.url}/`);
        } finally {
            unregister();
        }

        expect(otel.spans()).toHaveLength(1);
        expect(otel.spans()[0]!.attributes[PHASE_ATTRIBUTES.firstByte]).toBeGreaterThanOrEqual(0);
        expect(timedEvents()).toEqual([]);

        otel.reset();
        unregister = register(new TracewireInstrumentation({ ...providers, phaseEvents: true, spanEvents: true }));
        try {
            await client.get(`${server.url}/`);
        } finally {
            unregister();
        }

        expect(otel.spans()).toHaveLength(1);
        expect(otel.spans()[0]!.attributes[PHASE_ATTRIBUTES.firstByte]).toBeGreaterThanOrEqual(0);
        expect(timedEvents()).toContain(PHASE_EVENTS.response);
        expect(timedEvents().at(-1)).toBe(PHASE_EVENTS.end);
    });

    it('leaves a client also passed to instrumentClient() to that instrumentation: one span per hop', async () => {
        const ownExporter = new InMemorySpanExporter();
        const ownProvider = new TracerProvider({
            spanProcessors: [new SimpleSpanProcessor({ exporter: ownExporter })]
        });
        const own = instrumentClient(eventsClient, { tracerProvider: ownProvider });
        const unregister = register();
        try {
            await eventsClient.get(`${server.url}/moved`, { redirects: 1 });
            await plain.get(`${server.url}/`);
        } finally {
            unregister();
            own.disable();
        }

        expect(ownExporter.getFinishedSpans()).toHaveLength(2);
        expect(otel.spans()).toHaveLength(1);
        expect(received.every((headers) => typeof headers.traceparent === 'string')).toBe(true);
    });

    it("respects that instrumentation's ignoreRequest: a hop it ignores gets no process-wide span", async () => {
        const own = instrumentClient(eventsClient, { ...providers, ignoreRequest: () => true });
        const unregister = register();
        try {
            await eventsClient.get(`${server.url}/`);
        } finally {
            unregister();
            own.disable();
        }

        expect(otel.spans()).toHaveLength(0);
        expect(received[0]!.traceparent).toBeUndefined();
    });

    it('records nothing once disabled, and leaves the channels without subscribers', async () => {
        const instrumentation = new TracewireInstrumentation(providers);
        expect(hasSubscribers()).toBe(true);
        instrumentation.disable();
        instrumentation.disable();
        expect(hasSubscribers()).toBe(false);
        await client.get(`${server.url}/`);

        const unregister = register();
        unregister();
        expect(hasSubscribers()).toBe(false);
        await client.get(`${server.url}/`);
        expect(otel.spans()).toHaveLength(0);
        expect(received.every((headers) => headers.traceparent === undefined)).toBe(true);
    });

    it('with enabled: false, waits for registerInstrumentations() to enable it', async () => {
        const instrumentation = new TracewireInstrumentation({ enabled: false });
        expect(hasSubscribers()).toBe(false);
        await client.get(`${server.url}/`);
        const unregister = register(instrumentation);
        try {
            expect(hasSubscribers()).toBe(true);
            await client.get(`${server.url}/`);
        } finally {
            unregister();
        }

        expect(otel.spans()).toHaveLength(1);
    });

    it('applies a config set while enabled, and prefers the providers of its config to those it is given', async () => {
        const ownExporter = new InMemorySpanExporter();
        const ownProvider = new TracerProvider({
            spanProcessors: [new SimpleSpanProcessor({ exporter: ownExporter })]
        });
        const instrumentation = new TracewireInstrumentation();
        const unregister = register(instrumentation);
        try {
            instrumentation.setConfig({ headersToSpanAttributes: { response: ['content-type'] } });
            await client.get(`${server.url}/`);
            instrumentation.setConfig({ tracerProvider: ownProvider });
            instrumentation.setTracerProvider(otel.tracerProvider);
            await client.get(`${server.url}/`);
        } finally {
            unregister();
        }

        const [first] = otel.spans();
        expect(otel.spans()).toHaveLength(1);
        expect(first!.attributes['http.response.header.content-type']).toEqual(['text/plain']);
        expect(ownExporter.getFinishedSpans()).toHaveLength(1);
    });

    it('ignores messages it cannot read that something else publishes on the channels', async () => {
        const unregister = register();
        try {
            for (const name of Object.values(CLIENT_CHANNELS)) {
                channel(name).publish(undefined);
                channel(name).publish({});
            }

            await client.get(`${server.url}/`);
        } finally {
            unregister();
        }

        expect(otel.spans()).toHaveLength(1);
    });

    it('records the optional metrics when asked', async () => {
        const unregister = register(new TracewireInstrumentation({ optionalMetrics: true }));
        try {
            await client.post(`${server.url}/`, { payload: 'twelve bytes', route: '/twelve' });
            // The pools it observes are those it met on requests: the root client's here.
            const metrics = await otel.metrics();
            const sizes = metrics.get('http.client.request.body.size')?.points ?? [];
            const twelve = sizes.find((point) => point.attributes['url.template'] === '/twelve');
            expect(twelve?.value).toMatchObject({ count: 1, sum: 12 });
            expect(metrics.get('http.client.open_connections')?.points.length).toBeGreaterThan(0);
        } finally {
            unregister();
        }

        expect(trace.getActiveSpan()).toBeUndefined();
    });
});
