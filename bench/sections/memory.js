// memory: serving a 1 GiB (sparse) file and reading a 100 MiB response must each grow the RSS of
// the process doing it by less than 64 MiB. Both are measured inside that process.
import { once } from 'node:events';
import http from 'node:http';
import { createFixtures } from '../lib/fixtures.js';
import { ask, startChild, stopChild } from '../lib/processes.js';
import { markdownTable, verdict } from '../lib/stats.js';

const limit = 64 * 1024 * 1024;
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Downloads `path` from the server in `handle` and returns its RSS growth meanwhile. */
async function serveOnce(handle, path) {
    await ask(handle.child, { type: 'startProbe' });
    let bytes = 0;
    await new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: handle.port, path, agent: false }, (res) => {
            res.on('data', (chunk) => {
                bytes += chunk.length;
            });
            res.on('end', resolve);
            res.on('error', reject);
        }).on('error', reject);
    });
    return { bytes, ...(await ask(handle.child, { type: 'stopProbe' })) };
}

async function readOnce(implementation, origin) {
    const url = `http://127.0.0.1:${origin.port}/stream?bytes=${100 * 1024 * 1024}`;
    const handle = await startChild('../children/read-response.js', [implementation, url], {
        execArgv: ['--expose-gc'],
        timeoutMs: 120_000
    });
    await once(handle.child, 'exit');
    return handle;
}

export async function runMemorySection({ log }) {
    const rows = [];
    const fixtures = await createFixtures();
    const servers = [];
    const origin = await startChild('../servers/origin.js');
    try {
        const serving = [
            ['tracewire', '/f/file-1g.bin', 'tracewire directory handler serves 1 GiB', true],
            ['tracewire', '/h/file-1g.bin', 'tracewire h.file() serves 1 GiB', true],
            ['inert', '/f/file-1g.bin', '(reference) @hapi/inert directory handler serves 1 GiB', false]
        ];
        for (const [kind, path, label, checked] of serving) {
            // A fresh server for each row, so that one row's heap growth is not the next one's baseline.
            const server = await startChild('../servers/static.js', [kind, fixtures.directory], {
                execArgv: ['--expose-gc']
            });
            servers.push(server);
            const result = await serveOnce(server, path);
            await stopChild(server);
            const complete = result.bytes === 1024 ** 3;
            log(`  ${label}: ${mib(result.bytes)} sent, RSS +${mib(result.growth)}`);
            rows.push([label, result, checked, complete]);
        }

        const reading = [
            ['tracewire', 'tracewire client reads a 100 MiB response (stream)', true],
            ['node:http', '(reference) node:http reads a 100 MiB response (stream)', false]
        ];
        for (const [implementation, label, checked] of reading) {
            const result = await readOnce(implementation, origin);
            const complete = result.bytes === 100 * 1024 * 1024;
            log(`  ${label}: ${mib(result.bytes)} read, RSS +${mib(result.growth)}`);
            rows.push([label, result, checked, complete]);
        }
    } finally {
        for (const handle of servers) {
            await stopChild(handle);
        }

        await stopChild(origin);
        await fixtures.remove();
    }

    const table = markdownTable(
        ['scenario (RSS of the process that serves or reads)', 'RSS before', 'peak', 'growth', 'limit', 'result'],
        rows.map(([label, { baseline, peak, growth }, checked, complete]) => [
            label,
            mib(baseline),
            mib(peak),
            mib(growth),
            checked ? '< 64 MiB' : '',
            !complete ? '**FAIL** (incomplete transfer)' : checked ? verdict(limit - growth, 1e-9) : 'info'
        ])
    );
    const note = 'RSS sampled every 5 ms after a GC; the 1 GiB file is sparse (read from the page cache, not disk).';
    return {
        title: 'memory',
        markdown: `${table}\n\n${note}`,
        failures: rows.filter(([, { growth }, checked, complete]) => checked && (!complete || growth >= limit)).length
    };
}
