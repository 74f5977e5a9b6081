import { execFile } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repo, scratchProject } from './scratch.js';

/*
 * The README's manual set-up and `examples/` as written, run against the packed package and the
 * current SDK line (sdk-trace 3, sdk-metrics 3, context-async-hooks 3, api 1.10). The repository's
 * own suite runs on the 2.x line (its dev dependencies: SDK 3 needs Node 22.15, the suite also runs
 * on Node 20); the code of both is written for either line.
 */

const servers: Server[] = [];
afterAll(() => {
    for (const server of servers) {
        server.close();
    }
});

async function listen(handler: (req: IncomingMessage, body: string) => string): Promise<string> {
    const server = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk) => {
            body += chunk;
        });
        req.on('end', () => res.end(handler(req, body)));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('on the current SDK line', () => {
    const dir = scratchProject('otel-current', { apps: 'otel' });

    it('examples/ (what npm start runs) runs as written: traces printed as trees, histograms', async () => {
        cpSync(join(repo, 'examples'), join(dir, 'examples'), { recursive: true });
        const { OTEL_EXPORTER_OTLP_ENDPOINT: _ignored, ...env } = process.env;
        const { stdout } = await promisify(execFile)(process.execPath, ['examples/demo.js'], {
            cwd: dir,
            env,
            timeout: 120_000
        });
        for (const expected of [
            'CLIENT GET /files/{path*}',
            'SERVER GET /files/{path*}',
            'http.client.request.duration (s)',
            'http.server.request.duration (s)',
            // The log-based events, through the Logs API of @opentelemetry/api 1.10 (no api-logs on this line).
            'log ERROR http.server.request.exception'
        ]) {
            expect(stdout).toContain(expected);
        }
    });

    it("the README's manual set-up (one client instrumented) exports its spans and metrics over OTLP/HTTP", async () => {
        const exported: string[] = [];
        const collector = await listen((req) => {
            exported.push(req.url ?? '');
            return '{}';
        });
        const traceparents: (string | undefined)[] = [];
        const api = await listen((req) => {
            traceparents.push(req.headers.traceparent as string | undefined);
            return JSON.stringify({ id: 42 });
        });

        // The block of README "Setup" that instruments one client, with the API it calls made local,
        // then the providers flushed so the test can see what was exported.
        const readme = readFileSync(join(repo, 'README.md'), 'utf8');
        const from = readme.indexOf('```js', readme.indexOf('To instrument one client only'));
        const block = readme.slice(from + '```js'.length, readme.indexOf('```', from + 5));
        expect(block).toContain("from '@opentelemetry/sdk-trace'");
        const script = `${block.replace("'https://api.example.com'", 'process.env.API_BASE')}
await trace.getTracerProvider().getDelegate().forceFlush();
await metrics.getMeterProvider().forceFlush();
process.exit(0);
`;
        writeFileSync(join(dir, 'readme-setup.mjs'), script);
        await promisify(execFile)(process.execPath, ['readme-setup.mjs'], {
            cwd: dir,
            env: { ...process.env, API_BASE: api, OTEL_EXPORTER_OTLP_ENDPOINT: collector },
            timeout: 120_000
        });
        expect(traceparents).toHaveLength(1);
        expect(traceparents[0]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
        expect(exported).toContain('/v1/traces');
        expect(exported).toContain('/v1/metrics');
    });
});
