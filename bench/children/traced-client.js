// One client of the tracing-cost benchmark, in its own process: a context manager and a patched
// `http` module are process-wide, so each variant needs a process of its own.
//   node bench/children/traced-client.js <tracewire|tracewire+otel|node:http|node:http+otel> <origin port>
// Run by hand (no IPC channel) it starts its own origin, runs 20,000 GETs and prints the CPU per
// request, for profiling: node --cpu-prof bench/children/traced-client.js tracewire+otel
// The parent asks `{ type: 'run', count, concurrency }` and gets back the CPU time this process spent
// (process.cpuUsage, user + system) and the wall time of `count` GETs of /small.
//
// The `+otel` variants set up the SDK as a service would: AsyncLocalStorageContextManager, the W3C
// propagator, a BatchSpanProcessor to an exporter that drops the spans, and a MeterProvider with a
// periodic reader. `tracewire+otel` instruments an `events: true` client with `instrumentClient`;
// `node:http+otel` registers `@opentelemetry/instrumentation-http` and uses the patched `http` module.
import { createRequire } from 'node:module';
import { answerParent, startChild, stopChild } from '../lib/processes.js';

const standalone = typeof process.send !== 'function';
const [variant, givenPort] = process.argv.slice(2);
const origin = standalone ? await startChild('../servers/origin.js') : null;
const port = givenPort ?? origin?.port;
const url = `http://127.0.0.1:${port}/small`;
const require = createRequire(import.meta.url);

async function createSdk() {
    const { context, metrics, propagation, trace } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const { ExportResultCode, W3CTraceContextPropagator } = await import('@opentelemetry/core');
    const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
    const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
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
    const tracerProvider = new BasicTracerProvider({
        spanProcessors: [
            new BatchSpanProcessor(
                dropping((spans) => {
                    exported.spans += spans.length;
                })
            )
        ]
    });
    const meterProvider = new MeterProvider({
        readers: [new PeriodicExportingMetricReader({ exporter: dropping(() => {}), exportIntervalMillis: 5000 })]
    });
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    return { tracerProvider, meterProvider, exported };
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

    const { client } = await import('tracewire');
    if (variant === 'tracewire') {
        return { get: async () => (await client.get(url)).payload };
    }

    if (variant === 'tracewire+otel') {
        const sdk = await createSdk();
        const { instrumentClient } = await import('tracewire/instrumentation');
        const instance = client.defaults({ events: true });
        instrumentClient(instance, { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
        return { get: async () => (await instance.get(url)).payload, sdk };
    }

    throw new Error(`unknown variant ${variant}: tracewire, tracewire+otel, node:http or node:http+otel`);
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
