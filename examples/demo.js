// `npm start`: a hapi server with the static-file plugin and the tracing plugin on a free loopback
// port, an instrumented client making a few requests against it, then every trace printed as a
// tree (client span → server span) and the duration histograms summarised. No outside service.
import { fileURLToPath } from 'node:url';
import Hapi from '@hapi/hapi';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { client, errors, staticFiles } from 'tracewire';
import { instrumentClient, tracing, withRequestContext } from 'tracewire/instrumentation';
import { printHistograms, printTraces } from './report.js';
import { startTelemetry } from './telemetry.js';

// The SDK comes first: the instrumentation picks up the global providers when it is set up.
const telemetry = startTelemetry();

const server = Hapi.server({ host: '127.0.0.1', port: 0 });
await server.register([staticFiles, tracing]);
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
const instrumentation = instrumentClient(api);

const requests = [
    ['a file', '/files/readme.txt', { route: '/files/{path*}' }],
    [
        'a pre-compressed file',
        '/files/app.css',
        { route: '/files/{path*}', headers: { 'accept-encoding': 'gzip' }, gunzip: true }
    ],
    ['a directory listing', '/files/docs/', { route: '/files/{path*}' }],
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
            const { res, payload } = await api.get(path, options);
            const encoding = res.headers['content-encoding'] ? `, ${res.headers['content-encoding']} on the wire` : '';
            console.log(
                `${what.padEnd(26)} GET ${path.padEnd(20)} → ${res.statusCode} (${payload.length} bytes${encoding})`
            );
        } catch (err) {
            step.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
            console.log(`${what.padEnd(26)} GET ${path.padEnd(20)} → ${err.output.statusCode} ${err.message}`);
        } finally {
            step.end();
        }
    });
}

// Stopping waits for the requests in flight, so every server span has ended.
await server.stop();
instrumentation.disable();

printTraces(telemetry.finishedSpans());
printHistograms(await telemetry.collectMetrics());
await telemetry.shutdown();
if (telemetry.endpoint) {
    console.log(`\nexported the traces and metrics to ${telemetry.endpoint} over OTLP/HTTP`);
}
