// One client of the tracing-cost benchmark, in its own process: a context manager and a patched
// `http` module are process-wide, so each variant needs a process of its own.
//   node bench/children/traced-client.js <variant> <origin port>
// Variants: tracewire, tracewire+otel, node:http, node:http+otel (the target's four); tracewire+sdk and
// node:http+sdk (SDK set up, nothing instrumented); tracewire+sdk-floor (the span and metric point
// instrumentClient emits, made by hand around a plain client); tracewire+events (no-op pipeline listeners).
// Run by hand (no IPC channel) it starts its own origin, runs 20,000 GETs and prints the CPU per
// request, for profiling: node --cpu-prof bench/children/traced-client.js tracewire+otel
// The parent asks `{ type: 'run', count, concurrency }` and gets back the CPU time this process spent
// (process.cpuUsage, user + system) and the wall time of `count` GETs of /small.
//
// The `+otel` and `+sdk` variants set up the SDK as a service would: AsyncLocalStorageContextManager, the W3C
// propagator, a BatchSpanProcessor to an exporter that drops the spans, and a MeterProvider with a
// periodic reader. `tracewire+otel` instruments an `events: true` client with `instrumentClient`;
// `node:http+otel` registers `@opentelemetry/instrumentation-http` and uses the patched `http` module.
import { createRequire } from 'node:module';
import { answerParent, startChild, stopChild } from '../lib/processes.js';

const standalone = typeof process.send !== 'function';
const [variant, givenPort] = process.argv.slice(2);
const variants = [
    'tracewire',
    'tracewire+otel',
    'tracewire+sdk',
    'tracewire+sdk-floor',
    'tracewire+events',
    'node:http',
    'node:http+otel',
    'node:http+sdk'
];
// Checked before an origin is started, which an unknown variant would leave running.
if (!variants.includes(variant)) {
    throw new Error(`unknown variant ${variant}: ${variants.join(', ')}`);
}

const origin = standalone ? await startChild('../servers/origin.js') : null;
const port = givenPort ?? origin?.port;
const url = `http://127.0.0.1:${port}/small`;
const require = createRequire(import.meta.url);

async function createSdk() {
    const { context, metrics, propagation, SpanKind, trace } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const { ExportResultCode, W3CTraceContextPropagator } = await import('@opentelemetry/core');
    const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
    const { TracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace');
    const exported = { spans: 0 };
    const dropping = (count) => ({
        export(items, done) {
            count(items);
            done({ code: ExportResultCode.SUCCESS });
        },
        shutdown: async () => {},
        forceFlush: async () => {}
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const tracerProvider = new TracerProvider({
        spanProcessors: [
            new BatchSpanProcessor({
                exporter: dropping((spans) => {
                    exported.spans += spans.length;
                })
            })
        ]
    });
    const meterProvider = new MeterProvider({
        readers: [new PeriodicExportingMetricReader({ exporter: dropping(() => {}), exportIntervalMillis: 5000 })]
    });
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    // A service's first context.with() (its server instrumentation, the span processor's first
    // export) turns the context manager's async hooks on for good: on from the start here, so every
    // variant with the SDK pays them from its first request.
    context.with(context.active(), () => {});
    return { tracerProvider, meterProvider, exported, api: { context, propagation, trace, SpanKind } };
}

/** GET → body Buffer with node:http and a keep-alive agent, as the client benchmark's raw baseline. */
function rawGet(http) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    return () =>
        new Promise((resolve, reject) => {
            const req = http.request(url, { agent }, (res) => {
                const chunks = [];
                res.on('data', (chunk) => chunks.push(chunk));
                res.on('end', () => resolve(Buffer.concat(chunks)));
                res.on('error', reject);
            });
            req.on('error', reject);
            req.end();
        });
}

/**
 * GET through `send(headers)` wrapped in the SDK work one traced hop needs: a CLIENT span with the
 * attributes instrumentClient sets (four at the start, four once the response is in), the W3C
 * context injected into the sent headers, and one point of `http.client.request.duration` with the
 * five attributes of a 200. No event pipeline, no listener, no body counting.
 */
function sdkFloorGet(sdk, send) {
    const tracer = sdk.tracerProvider.getTracer('sdk-floor');
    const duration = sdk.meterProvider.getMeter('sdk-floor').createHistogram('http.client.request.duration', {
        unit: 's',
        advice: {
            explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
        }
    });
    const { host, hostname, port } = new URL(url);
    return async () => {
        const parent = sdk.api.context.active();
        const startTime = performance.now();
        const attributes = {};
        attributes['http.request.method'] = 'GET';
        attributes['server.address'] = hostname;
        attributes['server.port'] = Number(port);
        attributes['url.full'] = `http://${host}/small`;
        const span = tracer.startSpan('GET', { kind: sdk.api.SpanKind.CLIENT, attributes }, parent);
        const headers = {};
        sdk.api.propagation.inject(sdk.api.trace.setSpan(parent, span), headers);
        const { res, payload } = await send(headers);
        span.setAttribute('http.response.status_code', res.statusCode);
        span.setAttribute('network.protocol.version', res.httpVersion);
        span.setAttribute('http.request.body.size', 0);
        span.setAttribute('http.response.body.size', payload.length);
        span.end();
        const metricAttributes = {};
        metricAttributes['http.request.method'] = 'GET';
        metricAttributes['server.address'] = hostname;
        metricAttributes['server.port'] = Number(port);
        metricAttributes['http.response.status_code'] = res.statusCode;
        metricAttributes['network.protocol.version'] = res.httpVersion;
        duration.record((performance.now() - startTime) / 1000, metricAttributes);
        return payload;
    };
}

async function setUp() {
    if (variant === 'node:http') {
        return { get: rawGet(require('node:http')) };
    }

    if (variant === 'node:http+otel') {
        const sdk = await createSdk();
        const { registerInstrumentations } = await import('@opentelemetry/instrumentation');
        const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
        registerInstrumentations({
            instrumentations: [new HttpInstrumentation()],
            tracerProvider: sdk.tracerProvider,
            meterProvider: sdk.meterProvider
        });
        // Required after the instrumentation is registered, so that this is the patched module.
        return { get: rawGet(require('node:http')), sdk };
    }

    if (variant === 'node:http+sdk') {
        // The SDK set up, nothing instrumented: what the context manager alone costs raw node:http.
        const sdk = await createSdk();
        return { get: rawGet(require('node:http')), sdk };
    }

    const { client } = await import('tracewire');
    if (variant === 'tracewire') {
        return { get: async () => (await client.get(url)).payload };
    }

    if (variant === 'tracewire+sdk') {
        // The SDK set up, nothing instrumented: what the context manager alone costs the client.
        const sdk = await createSdk();
        return { get: async () => (await client.get(url)).payload, sdk };
    }

    if (variant === 'tracewire+sdk-floor') {
        // The plain client with the SDK calls that make the very span and metric point instrumentClient
        // emits, and nothing else: the floor of any instrumentation of this client on this SDK set-up.
        const sdk = await createSdk();
        return { get: sdkFloorGet(sdk, (headers) => client.get(url, { headers })), sdk };
    }

    if (variant === 'tracewire+events') {
        // An events client with do-nothing pipeline listeners and no SDK: what the event pipeline costs.
        const instance = client.defaults({ events: true });
        instance.events.on('preRequest', () => {});
        instance.events.on('response', () => {});
        return { get: async () => (await instance.get(url)).payload };
    }

    if (variant === 'tracewire+otel') {
        const sdk = await createSdk();
        const { instrumentClient } = await import('tracewire/instrumentation');
        const instance = client.defaults({ events: true });
        instrumentClient(instance, { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
        return { get: async () => (await instance.get(url)).payload, sdk };
    }

    throw new Error(`unknown variant ${variant}`);
}

async function run(get, count, concurrency) {
    let issued = 0;
    const worker = async () => {
        while (issued < count) {
            issued++;
            const body = await get();
            if (body.length !== 100) {
                throw new Error(`expected 100 bytes, got ${body.length}`);
            }
        }
    };
    const cpuBefore = process.cpuUsage();
    const started = process.hrtime.bigint();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpuBefore);
    return { cpuMicros: cpu.user + cpu.system, seconds };
}

const { get, sdk } = await setUp();
if (standalone) {
    await run(get, 2000, concurrency());
    const { cpuMicros, seconds } = await run(get, 20_000, concurrency());
    console.log(`${variant}: ${(20_000 / seconds).toFixed(0)} req/s, ${(cpuMicros / 20_000).toFixed(1)} µs CPU/req`);
    await sdk?.tracerProvider.shutdown();
    await sdk?.meterProvider.shutdown();
    await stopChild(origin);
    process.exit(0);
}

function concurrency() {
    return 50;
}

answerParent({
    run: ({ count, concurrency }) => run(get, count, concurrency),
    // How many spans reached the exporter: proof that the instrumentation traced the requests.
    spans: async () => {
        await sdk?.tracerProvider.forceFlush();
        return { spans: sdk?.exported.spans ?? 0 };
    }
});
process.send({ ready: true });
process.on('SIGTERM', () => process.exit(0));
