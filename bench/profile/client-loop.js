// Profiles the client side of one client benchmark case: run it with --cpu-prof.
// Usage: node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile/client-loop.js <tracewire|events|instrumented|node:http|node:http+otel> <a|b|c|d> [seconds=5]
import http from 'node:http';
import { client } from 'tracewire';
import { startChild, stopChild } from '../lib/processes.js';

const [implementation = 'tracewire', caseId = 'b', seconds = '5'] = process.argv.slice(2);
const shapes = { a: ['/small', 1], b: ['/small', 50], c: ['/large', 4], d: ['/json', 20] };
const [path, concurrency] = shapes[caseId] ?? shapes.b;
const body = JSON.stringify({ pad: 'x'.repeat(64 * 1024 - 10) });
const origin = await startChild('../servers/origin.js');
const url = `http://127.0.0.1:${origin.port}${path}`;

let call;
if (implementation === 'node:http') {
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    // As in the bench section (sections/client.js): an options object, no URL string to parse.
    const method = path === '/json' ? 'POST' : 'GET';
    const payload = path === '/json' ? body : undefined;
    call = () =>
        new Promise((resolve, reject) => {
            const headers =
                payload === undefined
                    ? {}
                    : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
            const req = http.request({ host: '127.0.0.1', port: origin.port, path, method, agent, headers }, (res) => {
                const chunks = [];
                res.on('data', (chunk) => chunks.push(chunk));
                res.on('end', () => {
                    const data = Buffer.concat(chunks);
                    resolve(payload === undefined ? data : JSON.parse(data.toString()));
                });
                res.on('error', reject);
            });
            req.on('error', reject);
            req.end(payload);
        });
} else {
    const instance = implementation === 'tracewire' ? client : client.defaults({ events: true });
    if (implementation === 'instrumented') {
        // The set-up of the tracing section: the context manager a service registers, W3C propagation,
        // a BatchSpanProcessor to a dropping exporter and a MeterProvider.
        const { context, propagation } = await import('@opentelemetry/api');
        const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
        const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
        const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
        const { instrumentClient } = await import('tracewire/instrumentation');
        const { TracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace');
        const exporter = {
            export: (_items, done) => done({ code: 0 }),
            shutdown: async () => {},
            forceFlush: async () => {}
        };
        context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
        propagation.setGlobalPropagator(new W3CTraceContextPropagator());
        const tracerProvider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: exporter })] });
        const meterProvider = new MeterProvider({
            readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 5000 })]
        });
        instrumentClient(instance, { tracerProvider, meterProvider });
    }

    call =
        path === '/json'
            ? () => instance.post(url, { payload: body, headers: { 'content-type': 'application/json' }, json: true })
            : () => instance.get(url);
}

let count = 0;
const deadline = Date.now() + Number(seconds) * 1000;
await Promise.all(
    Array.from({ length: concurrency }, async () => {
        while (Date.now() < deadline) {
            await call();
            count++;
        }
    })
);
console.log(`${implementation} (${caseId}): ${(count / Number(seconds)).toFixed(0)} ops/s`);
await stopChild(origin);
