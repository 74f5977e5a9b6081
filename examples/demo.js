// `npm start`: a hapi server with the static-file plugin and the tracing plugin on a free loopback
// port, an instrumented client making a few requests against it, then every trace printed as a
// tree (client span → server span) and the metrics summarised. No outside service.
// The last request is made by the root `client`, traced by the process-wide TracewireInstrumentation,
// and draws a progress bar for its download. Then a waterfall of the phases of four requests (a new
// connection, a reused one, a slow server, a slow download), from their `res.timings`.
// Then four requests multiplexed on one HTTP/2 session (a cleartext `node:http2` server, `h2c`), drawn
// the same way: the first opens the session, the others wait for it and share it.
// `npm start -- --optional-metrics` (or TRACEWIRE_OPTIONAL_METRICS=1) adds the optional metrics:
// body sizes, active requests and the client's open connections.
import http2 from 'node:http2';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Hapi from '@hapi/hapi';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { client, errors, staticFiles } from 'tracewire';
import { instrumentClient, TracewireInstrumentation, tracing, withRequestContext } from 'tracewire/instrumentation';
import { printMetrics, printTraces } from './report.js';
import { startTelemetry } from './telemetry.js';
import { renderWaterfalls } from './waterfall.js';

const optionalMetrics = process.argv.includes('--optional-metrics') || process.env.TRACEWIRE_OPTIONAL_METRICS === '1';

// The SDK comes first: the instrumentation picks up the global providers when it is set up.
const telemetry = startTelemetry();
// Every other tracewire client of the process (the root `client` below) is traced by this one line;
// `api` keeps its own instrumentClient(), which then has its hops to itself.
const processWide = new TracewireInstrumentation();

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
            // The payload says only "An internal server error occurred"; the span's status and its
            // http.server.request.exception log record keep the message.
            throw errors.badImplementation('Inventory database unreachable');
        }
    },
    {
        method: 'GET',
        path: '/api/report',
        // A server that thinks for 150 ms before its headers.
        handler: async () => {
            await sleep(150);
            return { ready: true };
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
        path: '/api/archive',
        // 1 MiB with its content-length, in 8 pieces over about 150 ms: something to show a progress bar for.
        handler: (_request, h) => {
            const pieces = Array.from({ length: 8 }, () => Buffer.alloc(128 * 1024, 'tracewire '));
            return h
                .response(Readable.from(trickle(pieces, 20), { objectMode: false }))
                .header('content-length', String(1024 * 1024));
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
    ['a slow server', '/api/report', { route: '/api/report' }],
    ['a slow download', '/api/export', { route: '/api/export' }],
    ['a redirect', '/readme', { redirects: 2 }],
    ['a missing file', '/files/missing.txt', { route: '/files/{path*}' }],
    ['a failing handler', '/api/stock', {}],
    ['a call made by a handler', '/api/summary', {}]
];

// The requests whose phases are drawn as a waterfall at the end, by label, from `res.timings`.
const waterfallOf = new Map([
    ['a file', 'a new connection'],
    ['a pre-compressed file', 'a reused connection'],
    ['a slow server', 'a slow server'],
    ['a slow download', 'a slow download']
]);
const waterfalls = [];

console.log(`tracewire demo: hapi on ${server.info.uri}\n`);
const tracer = trace.getTracer('tracewire-demo');
for (const [what, path, options] of requests) {
    // One INTERNAL span per step, so the hops of the redirect land in one trace too.
    await tracer.startActiveSpan(`demo: ${what}`, async (step) => {
        try {
            const started = performance.now();
            const { res, payload } = await api.get(path, options);
            if (waterfallOf.has(what)) {
                // Read after the body: `end` and `download` are set once it has been read.
                waterfalls.push({ label: waterfallOf.get(what), timings: res.timings });
            }
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

// The root client, traced by the process-wide instrumentation, with a progress bar for its download.
await tracer.startActiveSpan('demo: a download with a progress bar', async (step) => {
    const { payload } = await client.get(`${server.info.uri}/api/archive`, {
        route: '/api/archive',
        onDownloadProgress: progressBar()
    });
    console.log(`${'a download with progress'.padEnd(26)} GET /api/archive → ${payload.length} bytes`);
    step.end();
});

// Where the time of a few requests went, on one scale: `res.timings`, also on each client span.
console.log('\nwhere the time went (res.timings; the same phases are on each client span):');
for (const line of renderWaterfalls(waterfalls)) {
    console.log(`  ${line}`);
}

// HTTP/2: four requests at once to a cleartext node:http2 server, one session carrying their four streams.
const h2Server = http2.createServer((req, res) => {
    // Each answer takes a little longer than the one before, so the streams' bars end apart.
    const delay = 20 * Number(new URL(req.url, 'http://localhost').searchParams.get('n'));
    res.setHeader('content-type', 'application/json');
    setTimeout(() => res.end(JSON.stringify({ stream: req.stream.id })), delay);
});
let h2Connections = 0;
h2Server.on('connection', () => h2Connections++);
// The client's idle session stays open until its idleTimeout (unref'd: it holds no process); the server's side of it is closed at the end.
const h2Sessions = new Set();
h2Server.on('session', (session) => h2Sessions.add(session));
await new Promise((resolve) => h2Server.listen(0, '127.0.0.1', resolve));
const h2 = client.defaults({ http2: { h2c: true }, events: true });
const h2Instrumentation = instrumentClient(h2, { optionalMetrics });
const h2Waterfalls = await tracer.startActiveSpan('demo: four requests on one HTTP/2 session', async (step) => {
    const origin = `http://127.0.0.1:${h2Server.address().port}`;
    const answers = await Promise.all(
        [1, 2, 3, 4].map((n) => h2.get(`${origin}/api/part?n=${n}`, { route: '/api/part', json: true }))
    );
    step.end();
    return answers.map(({ res, payload }, index) => ({
        label: `stream ${payload.stream}${index === 0 ? ' (opens the session)' : ''}`,
        timings: res.timings,
        version: res.httpVersion
    }));
});
console.log(
    `\nfour requests at once over HTTP/${h2Waterfalls[0].version} (http2: { h2c: true }): ${h2Connections} connection, streams ${h2Waterfalls.map(({ label }) => label.split(' ')[1]).join(', ')}`
);
for (const line of renderWaterfalls(h2Waterfalls)) {
    console.log(`  ${line}`);
}

// Read while the client's kept-alive connections are still open, so the pool gauge has something to show.
const resourceMetrics = await telemetry.collectMetrics();
// Stopping waits for the requests in flight, so every server span has ended.
await server.stop();
h2Server.close();
for (const session of h2Sessions) {
    session.close();
}
instrumentation.disable();
h2Instrumentation.disable();
processWide.disable();

printTraces(telemetry.finishedSpans(), telemetry.finishedLogRecords());
printMetrics(resourceMetrics);
if (!optionalMetrics) {
    console.log('\n(run `npm start -- --optional-metrics` for body sizes, active requests and open connections)');
}

await telemetry.shutdown();
if (telemetry.endpoint) {
    console.log(`\nexported the traces and metrics to ${telemetry.endpoint} over OTLP/HTTP`);
}

/**
 * An `onDownloadProgress` callback drawing a bar: redrawn in place on a terminal, one line per
 * quarter of the way otherwise (a log, a test).
 */
function progressBar(width = 24) {
    let shown = -1;
    return ({ transferred, total, percent }) => {
        const filled = Math.round(((percent ?? 0) / 100) * width);
        const size = total === undefined ? `${kib(transferred)} KiB` : `${kib(transferred)} of ${kib(total)} KiB`;
        const line = `  [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(percent ?? 0).toFixed(0).padStart(3)}%  ${size}`;
        if (process.stdout.isTTY) {
            process.stdout.write(`\r${line}${percent === 100 ? '\n' : ''}`);
        } else if (Math.floor((percent ?? 0) / 25) > shown) {
            shown = Math.floor((percent ?? 0) / 25);
            console.log(line);
        }
    };
}

function kib(bytes) {
    return (bytes / 1024).toFixed(0);
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
