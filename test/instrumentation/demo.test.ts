import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

// The demo imports `tracewire` through the package's self-reference, i.e. from `dist/`: `npm test`
// builds first (pretest), as `npm start` does.
async function runDemo(env: Record<string, string> = {}) {
    const { OTEL_EXPORTER_OTLP_ENDPOINT: _ignored, ...inherited } = process.env;
    return await run(process.execPath, ['examples/demo.js'], {
        cwd: root,
        env: { ...inherited, ...env },
        timeout: 30_000
    });
}

describe('the npm start demo', () => {
    it('prints each trace as a tree of client and server spans, and the histograms', async () => {
        const { stdout } = await runDemo();
        const lines = stdout.split('\n');
        const indexOf = (text: string, from = 0) => lines.findIndex((line, i) => i >= from && line.includes(text));

        // A client span with its server span as the child, one level deeper.
        const clientLine = indexOf('CLIENT GET /files/{path*}');
        const serverLine = indexOf('SERVER GET /files/{path*}', clientLine);
        expect(clientLine).toBeGreaterThan(-1);
        expect(serverLine).toBeGreaterThan(clientLine);
        expect(lines[serverLine]!.indexOf('└─')).toBeGreaterThan(lines[clientLine]!.indexOf('└─'));

        for (const expected of [
            'SERVER GET /readme',
            'http.request.resend_count=1',
            'http.response.status_code=404  error.type=404',
            'SERVER GET /api/stock',
            // The 5xx's exception, a log record under its server span (docs/observability.md "Events as logs").
            'log ERROR http.server.request.exception: Inventory database unreachable',
            'SERVER GET /api/summary',
            'gzip on the wire',
            // Traced file serving: what the static plugin served, on its server span.
            'file.path=readme.txt',
            'file.path=app.css.gz',
            'tracewire.static.encoding=gzip',
            'tracewire.static.range=bytes=0-15',
            'http.client.request.duration (s)',
            'http.server.request.duration (s)',
            'npm start -- --optional-metrics'
        ]) {
            expect(stdout).toContain(expected);
        }

        // The slow download: its client span lasts until the last byte, some 300 ms after the headers.
        expect(stdout).toMatch(/a slow download .* headers after \d+ ms, body after \d+ ms/);
        const download = /CLIENT GET \/api\/export {2}\((\d+\.\d) ms\)/.exec(stdout);
        // (Node's timers run off a loop clock in whole milliseconds: 300 ms of them can measure a little less.)
        expect(Number(download?.[1])).toBeGreaterThanOrEqual(295);
        expect(stdout).not.toContain('http.client.open_connections');

        // The root client's download, traced process-wide, with its progress bar up to 100%.
        expect(stdout).toContain('CLIENT GET /api/archive');
        expect(stdout).toContain('[########################] 100%  1024 of 1024 KiB');
        expect(stdout).toMatch(/a download with progress +GET \/api\/archive → 1048576 bytes/);

        // Every step of the demo is one trace: 12 steps (the four HTTP/2 requests are one), 12 trace ids.
        expect(lines.filter((line) => line.startsWith('trace '))).toHaveLength(12);

        // The waterfall of four requests (examples/waterfall.js): each phase a line, the phases a
        // request did not have marked, the slow server's time in firstByte, the slow download's in download.
        const waterfall = indexOf('where the time went');
        expect(waterfall).toBeGreaterThan(-1);
        const block = (label: string) => {
            const start = indexOf(`  ${label} `, waterfall);
            expect(start).toBeGreaterThan(waterfall);
            return lines.slice(start + 1, start + 8).map((line) => line.trim());
        };
        const phase = (rows: string[], name: string) => rows.find((row) => row.startsWith(`${name} `))!;
        const millis = (row: string) => Number(/([\d.]+) ms$/.exec(row)?.[1]);
        const fresh = block('a new connection');
        expect(phase(fresh, 'tcp')).toMatch(/█+ +[\d.]+ ms$/);
        expect(phase(fresh, 'dns')).toMatch(/ -$/);
        expect(phase(fresh, 'tls')).toMatch(/ -$/);
        const reused = block('a reused connection');
        expect(phase(reused, 'tcp')).toMatch(/ -$/);
        expect(millis(phase(block('a slow server'), 'firstByte'))).toBeGreaterThanOrEqual(140);
        expect(millis(phase(block('a slow download'), 'download'))).toBeGreaterThanOrEqual(280);
        // Four requests at once on one HTTP/2 session: the first opens it (a tcp phase), the others
        // wait for it (a wait phase, no connection of their own).
        expect(stdout).toMatch(
            /four requests at once over HTTP\/2\.0 \(http2: \{ h2c: true \}\): 1 connection, streams 1, 3, 5, 7/
        );
        const opener = block('stream 1 (opens the session)');
        expect(phase(opener, 'tcp')).toMatch(/█+ +[\d.]+ ms$/);
        for (const label of ['stream 3', 'stream 5', 'stream 7']) {
            const rows = block(label);
            expect(phase(rows, 'tcp')).toMatch(/ -$/);
            expect(phase(rows, 'wait')).toMatch(/█+ +[\d.]+ ms$/);
        }

        // The same phases on the client spans.
        expect(stdout).toMatch(
            /phases: wait [\d.]+ ms, tcp [\d.]+ ms, request [\d.]+ ms, first_byte [\d.]+ ms, download [\d.]+ ms/
        );
    });

    it('exports over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, with the optional metrics when asked', async () => {
        const received: string[] = [];
        const collector = createServer((req, res) => {
            received.push(`${req.method} ${req.url}`);
            req.resume();
            req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
        });
        collector.listen(0, '127.0.0.1');
        await once(collector, 'listening');
        const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
        try {
            const { stdout } = await runDemo({
                OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
                TRACEWIRE_OPTIONAL_METRICS: '1'
            });
            expect(stdout).toContain(`exported the traces and metrics to ${endpoint}`);
            for (const metric of [
                'http.client.request.body.size (By)',
                'http.client.response.body.size (By)',
                'http.client.active_requests ({request})',
                'http.server.active_requests ({request})',
                'http.server.response.body.size (By)'
            ]) {
                expect(stdout).toContain(metric);
            }

            // The client's pool: its kept-alive connections, idle once the requests are done.
            expect(stdout).toMatch(
                /http\.client\.open_connections \(\{connection\}\)\n {2}state=idle server\.port=\d+ +value=[1-9]/
            );
            expect(received).toContain('POST /v1/traces');
            expect(received).toContain('POST /v1/metrics');
        } finally {
            collector.close();
        }
    });
});
