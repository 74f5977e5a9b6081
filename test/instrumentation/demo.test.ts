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
            'event exception: Inventory database unreachable',
            'SERVER GET /api/summary',
            'gzip on the wire',
            'http.client.request.duration (s)',
            'http.server.request.duration (s)'
        ]) {
            expect(stdout).toContain(expected);
        }

        // Every request of the demo is one trace: 7 steps, 7 trace ids.
        expect(lines.filter((line) => line.startsWith('trace '))).toHaveLength(7);
    });

    it('exports over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
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
            const { stdout } = await runDemo({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
            expect(stdout).toContain(`exported the traces and metrics to ${endpoint}`);
            expect(received).toContain('POST /v1/traces');
            expect(received).toContain('POST /v1/metrics');
        } finally {
            collector.close();
        }
    });
});
