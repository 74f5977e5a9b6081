// `npm start`: a hapi server with the static-file plugin and the tracing plugin on a free loopback
// port, an instrumented client making a few requests against it, then every trace printed as a
// tree (client span → server span) and the metrics summarised. No outside service.
// `npm start -- --optional-metrics` (or TRACEWIRE_OPTIONAL_METRICS=1) adds the optional metrics:
// body sizes, active requests and the client's open connections.
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Hapi from '@hapi/hapi';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { client, errors, staticFiles } from 'tracewire';
import { instrumentClient, tracing, withRequestContext } from 'tracewire/instrumentation';
import { printMetrics, printTraces } from './report.js';
import { startTelemetry } from './telemetry.js';

const optionalMetrics = process.argv.includes('--optional-metrics') || process.env.TRACEWIRE_OPTIONAL_METRICS === '1';

// The SDK comes first: the instrumentation picks up the global providers when it is set up.
const telemetry = startTelemetry();

const server = Hapi.server({ host: '127.0.0.1', port: 0 });
await server.register([staticFiles, { plugin: tracing, options: { optionalMetrics } }]);
server.route([
    {
        method: 'GET',
        path: '/files/{path*}',
        handler: {
            directory: {
                path: fileURLToPath(new URL('./public', import.meta.url)),
                listing: true,
                lookupCompressed: true
            }
        }
    },
    { method: 'GET', path: '/readme', handler: (_request, h) => h.redirect('/files/readme.txt') },
    {
        method: 'GET',
        path: '/api/stock',
        handler: () => {
            // The payload says only "An internal server error occurred"; the span keeps the message.
            throw errors.badImplementation('Inventory database unreachable');
        }
    },
    {
        method: 'GET',
        path: '/api/export',
        // A download whose body trickles in over about 300 ms, after headers sent at once.
        handler: (_request, h) =>
            h.response(
                Readable.from(trickle(['id,name\n', '1,ada\n', '2,grace\n', '3,edsger\n'], 100), { objectMode: false })
            )
    },
    {
        method: 'GET',
        path: '/api/summary',
        // An outgoing call made for a request: run it in the request's context to parent it.
        handler: (request) =>
            withRequestContext(request, async () => {
                const { payload } = await api.get('/files/readme.txt', { route: '/files/{path*}' });
                return { lines: String(payload).trim().split('\n').length };
            })
    }
]);
await server.start();

const api = client.defaults({ events: true, baseUrl: server.info.uri });
const instrumentation = instrumentClient(api, { optionalMetrics });
// The pipeline's `response` event fires when the headers of a hop arrive.
let headersArrivedAt = 0;
api.events.on('response', () => {
    headersArrivedAt = performance.now();
});

const requests = [
    ['a file', '/files/readme.txt', { route: '/files/{path*}' }],
    [
        'a pre-compressed file',
        '/files/app.css',
        { route: '/files/{path*}', headers: { 'accept-encoding': 'gzip' }, gunzip: true }
    ],
    ['a range of a file', '/files/readme.txt', { route: '/files/{path*}', headers: { range: 'bytes=0-15' } }],
    ['a directory listing', '/files/docs/', { route: '/files/{path*}' }],
    ['a slow download', '/api/export', { route: '/api/export' }],
    ['a redirect', '/readme', { redirects: 2 }],
    ['a missing file', '/files/missing.txt', { route: '/files/{path*}' }],
    ['a failing handler', '/api/stock', {}],
    ['a call made by a handler', '/api/summary', {}]
];

console.log(`tracewire demo: hapi on ${server.info.uri}\n`);
const tracer = trace.getTracer('tracewire-demo');
for (const [what, path, options] of requests) {
    // One INTERNAL span per step, so the hops of the redirect land in one trace too.
    await tracer.startActiveSpan(`demo: ${what}`, async (step) => {
        try {
            const started = performance.now();
            const { res, payload } = await api.get(path, options);
            const headersAfter = headersArrivedAt - started;
            const bodyAfter = performance.now() - started;
            const encoding = res.headers['content-encoding'] ? `, ${res.headers['content-encoding']} on the wire` : '';
            // The client span runs from the request to the last byte of the body, not just to the headers.
            const timing =
                bodyAfter - headersAfter > 50
                    ? `; headers after ${headersAfter.toFixed(0)} ms, body after ${bodyAfter.toFixed(0)} ms`
                    : '';
            console.log(
                `${what.padEnd(26)} GET ${path.padEnd(20)} → ${res.statusCode} (${payload.length} bytes${encoding}${timing})`
            );
        } catch (err) {
            step.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
            console.log(`${what.padEnd(26)} GET ${path.padEnd(20)} → ${err.output.statusCode} ${err.message}`);
        } finally {
            step.end();
        }
    });
}

// Read while the client's kept-alive connections are still open, so the pool gauge has something to show.
const resourceMetrics = await telemetry.collectMetrics();
// Stopping waits for the requests in flight, so every server span has ended.
await server.stop();
instrumentation.disable();

printTraces(telemetry.finishedSpans());
printMetrics(resourceMetrics);
if (!optionalMetrics) {
    console.log('\n(run `npm start -- --optional-metrics` for body sizes, active requests and open connections)');
}

await telemetry.shutdown();
if (telemetry.endpoint) {
    console.log(`\nexported the traces and metrics to ${telemetry.endpoint} over OTLP/HTTP`);
}

/** A stream yielding `chunks` one every `interval` ms. */
async function* trickle(chunks, interval) {
    for (const [index, chunk] of chunks.entries()) {
        if (index > 0) {
            await sleep(interval);
        }

        yield chunk;
    }
}
