// memory: serving a 1 GiB (sparse) file and reading a 100 MiB response must each grow the RSS of
// the process doing it by less than 64 MiB. Both are measured inside that process.
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
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

/** Stalled readers: each asks for the 4 MiB file, reads the first bytes, then reads no more. */
const stalledReaders = 200;
const stalledFile = 'file-4m.bin';
const stalledLimit = 0.3 * 1024 * 1024;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Opens `stalledReaders` connections that each request `path` and stop reading after the first
 * chunk, waits until the server's RSS (after a GC) stops moving, and returns its growth per response.
 */
async function stallOnce(handle, path) {
    await pause(200);
    const { rss: baseline } = await ask(handle.child, { type: 'rss' });
    const sockets = [];
    await Promise.all(
        Array.from(
            { length: stalledReaders },
            () =>
                new Promise((resolve, reject) => {
                    const socket = net.connect(handle.port, '127.0.0.1', () =>
                        socket.write(`GET ${path} HTTP/1.1\r\nhost: localhost\r\n\r\n`)
                    );
                    sockets.push(socket);
                    socket.once('error', reject);
                    socket.once('data', () => {
                        socket.pause();
                        resolve();
                    });
                })
        )
    );
    // The kernel's buffers fill, then what each response holds in the server stays put.
    let settled = baseline;
    for (let round = 0, still = 0; round < 40 && still < 3; round++) {
        await pause(250);
        const { rss } = await ask(handle.child, { type: 'rss' });
        still = Math.abs(rss - settled) < 1024 * 1024 ? still + 1 : 0;
        settled = rss;
    }

    for (const socket of sockets) {
        socket.destroy();
    }

    return { baseline, peak: settled, growth: settled - baseline, perResponse: (settled - baseline) / stalledReaders };
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
    const stalledRows = [];
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

        await writeFile(join(fixtures.directory, stalledFile), Buffer.alloc(4 * 1024 * 1024, 'stalled'));
        const stalling = [
            ['tracewire', `tracewire: ${stalledReaders} stalled readers of a 4 MiB file`, true],
            ['inert', `(reference) @hapi/inert: ${stalledReaders} stalled readers of a 4 MiB file`, false]
        ];
        for (const [kind, label, checked] of stalling) {
            const server = await startChild('../servers/static.js', [kind, fixtures.directory], {
                execArgv: ['--expose-gc']
            });
            servers.push(server);
            const result = await stallOnce(server, `/f/${stalledFile}`);
            await stopChild(server);
            log(`  ${label}: RSS +${mib(result.growth)}, ${mib(result.perResponse)} per response`);
            stalledRows.push([label, result, checked]);
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
    const stalledTable = markdownTable(
        ['stalled responses (RSS of the server, after a GC)', 'RSS before', 'held', 'per response', 'limit', 'result'],
        stalledRows.map(([label, { baseline, peak, perResponse }, checked]) => [
            label,
            mib(baseline),
            mib(peak),
            `${(perResponse / 1024 / 1024).toFixed(2)} MiB`,
            checked ? '<= 0.3 MiB' : '',
            checked ? verdict(stalledLimit - perResponse, 1e-9) : 'info'
        ])
    );
    const note = [
        'RSS sampled every 5 ms after a GC; the 1 GiB file is sparse (read from the page cache, not disk).',
        `Stalled readers: ${stalledReaders} connections each read the first bytes of the response and stop; the RSS is read after a GC once it stops moving.`
    ].join('\n');
    return {
        title: 'memory',
        markdown: `${table}\n\n${stalledTable}\n\n${note}`,
        failures:
            rows.filter(([, { growth }, checked, complete]) => checked && (!complete || growth >= limit)).length +
            stalledRows.filter(([, { perResponse }, checked]) => checked && perResponse > stalledLimit).length
    };
}
