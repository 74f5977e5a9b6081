// The calls both apps make, against a real local server, then what was exported (printed as JSON).
const { createServer } = require('node:http');

async function run({ client, instrumentClient }) {
    const seen = [];
    const server = createServer((req, res) => {
        seen.push({ url: req.url, traceparent: req.headers.traceparent });
        if (req.url === '/redirect') {
            res.writeHead(302, { location: '/' }).end();
        } else {
            res.end('ok');
        }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${server.address().port}`;

    // A root call (no active span), a redirect (two hops), and a client instrumented on its own.
    await client.get(`${base}/`);
    await client.get(`${base}/redirect`, { redirects: 2 });
    const own = client.defaults({ events: true });
    const handle = instrumentClient(own);
    await own.get(`${base}/own`);
    handle.disable();

    server.close();
    await globalThis.telemetry.sdk.shutdown();
    const spans = globalThis.telemetry.finished.map((span) => ({
        name: span.name,
        kind: span.kind,
        scope: (span.instrumentationScope ?? span.instrumentationLibrary).name,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId ?? span.parentSpanId
    }));
    // The API's own record of its version (its package.json is not exported).
    const api = globalThis[Symbol.for('opentelemetry.js.api.1')]?.version;
    console.log(JSON.stringify({ node: process.version, api, seen, spans }));
}

module.exports = { run };
