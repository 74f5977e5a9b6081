// Alternating wrk runs of a few static servers on one case of the static section, for an A/B that
// must hold within a few %: many short rounds, the servers' order rotated each round, and per server
// the median rate and server CPU per response, and the first server's ratios to each other one (medians of
// the per-round ratios, with their range).
//   node bench/profile/static-ab.js <1k|304|64k|gz|10m> [rounds=12] [seconds=2] [servers=tracewire,fixed]
// A server is tracewire, fixed (the in-memory route), inert, nginx, or the directory of another
// checkout's build (its static plugin, as `tracewire@baseline`).
import { isAbsolute } from 'node:path';
import { createFixtures } from '../lib/fixtures.js';
import { ask, startChild, stopChild } from '../lib/processes.js';
import { median, rotate } from '../lib/stats.js';
import { ensureWrk, runWrk } from '../lib/wrk.js';

const [caseId = '1k', rounds = '12', seconds = '2', list = 'tracewire,fixed'] = process.argv.slice(2);
const mebibyte = 1024 * 1024;
const cases = {
    '1k': { file: 'file-1k.txt' },
    304: { file: 'file-1k.txt', conditional: true },
    '64k': { file: 'file-64k.txt' },
    gz: { file: 'file-64k.txt', headers: { 'accept-encoding': 'gzip' } },
    '10m': { file: 'file-10m.bin', length: 10 * mebibyte }
};
const benchCase = cases[caseId];
if (benchCase === undefined) {
    throw new Error(`unknown case ${caseId}: ${Object.keys(cases).join(', ')}`);
}

ensureWrk(console.log);
const fixtures = await createFixtures();
const servers = [];
try {
    for (const name of list.split(',')) {
        const handle =
            name === 'nginx'
                ? await startChild('../servers/nginx.js', [fixtures.directory])
                : isAbsolute(name)
                  ? await startChild('../servers/static.js', ['tracewire@baseline', fixtures.directory, name])
                  : await startChild('../servers/static.js', [name, fixtures.directory]);
        servers.push({ name, handle, samples: [] });
    }

    const url = (server) => `http://127.0.0.1:${server.handle.port}/f/${benchCase.file}`;
    for (const server of servers) {
        server.headers = { ...benchCase.headers };
        if (benchCase.conditional) {
            const response = await fetch(url(server));
            await response.arrayBuffer();
            server.headers['if-none-match'] = response.headers.get('etag');
        }

        // Warm-up: the JIT, the caches, the connections; the content cache keeps only files still for 2 s.
        await runWrk(url(server), { seconds: 3, headers: server.headers });
    }

    for (let round = 0; round < Number(rounds); round++) {
        for (const server of rotate(servers, round)) {
            const before = await ask(server.handle.child, { type: 'cpu' });
            const result = await runWrk(url(server), { seconds: Number(seconds), headers: server.headers });
            const after = await ask(server.handle.child, { type: 'cpu' });
            const cpu = after.user - before.user + after.system - before.system;
            const responses = benchCase.length ? result.bytes / benchCase.length : result.requests;
            const errors = result.connect + result.read + result.write + result.status + result.timeout;
            server.samples[round] = {
                rate: responses / (result.durationUs / 1e6),
                cpu: cpu / responses,
                errors
            };
        }
    }

    const [first] = servers;
    for (const server of servers) {
        const rate = median(server.samples.map((sample) => sample.rate));
        const cpu = median(server.samples.map((sample) => sample.cpu));
        // As the static section reports them: the first server's rate over this one's, this one's CPU over the first's.
        const rateRatios = server.samples.map((sample, round) => first.samples[round].rate / sample.rate);
        const cpuRatios = server.samples.map((sample, round) => sample.cpu / first.samples[round].cpu);
        const errors = server.samples.reduce((sum, sample) => sum + sample.errors, 0);
        console.log(
            `${server.name.padEnd(24)} ${rate.toFixed(1).padStart(9)} responses/s  ${cpu.toFixed(1).padStart(8)} µs CPU each` +
                (server === first
                    ? ''
                    : `  ${first.name} vs this: rate ${median(rateRatios).toFixed(3)} ` +
                      `(${Math.min(...rateRatios).toFixed(2)}–${Math.max(...rateRatios).toFixed(2)}), ` +
                      `CPU ${median(cpuRatios).toFixed(3)} (${Math.min(...cpuRatios).toFixed(2)}–${Math.max(...cpuRatios).toFixed(2)})`) +
                (errors > 0 ? `  ${errors} errors` : '')
        );
    }
} finally {
    for (const server of servers) {
        await stopChild(server.handle);
    }

    await fixtures.remove();
}
