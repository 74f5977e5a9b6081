// static: hapi + tracewire staticFiles against a hapi route answering the same bytes from memory
// (with etag and last-modified: the ceiling of any hapi plugin), hapi + @hapi/inert, and nginx with
// sendfile (the platform's limit for a file server). Each server runs in its own process and is
// loaded by wrk (C, one thread, 32 keep-alive connections); each sample reports requests per second,
// the server process's CPU time per request and wrk's p99.
import { truncate, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { createFixtures } from '../lib/fixtures.js';
import { ask, startChild, stopChild } from '../lib/processes.js';
import { formatNumber, formatRatio, markdownTable, median, pairedRatio, rotate, verdict } from '../lib/stats.js';
import { ensureWrk, runWrk } from '../lib/wrk.js';

const connections = 32;
const mebibyte = 1024 * 1024;

const implementations = [
    { name: 'tracewire', server: 'tracewire' },
    { name: 'in-memory route', server: 'fixed' },
    { name: 'inert', server: 'inert' },
    { name: 'nginx', server: 'nginx' }
];

// With `--baseline`: the static plugin of another checkout's build, as a server of its own.
const baselineImplementation = { name: 'tracewire@baseline', server: 'tracewire@baseline' };

// Against the baseline, a ratio within this of 1 is the spread between runs of one build (bench/README.md).
const baselineNoise = 0.95;

const cases = [
    { id: '1k', label: '1 KiB', file: 'file-1k.txt', status: 200, length: 1024 },
    {
        id: '304',
        label: '304 (If-None-Match) of the 1 KiB file',
        file: 'file-1k.txt',
        status: 304,
        conditional: true
    },
    { id: '64k', label: '64 KiB', file: 'file-64k.txt', status: 200, length: 64 * 1024 },
    {
        id: 'gz',
        label: '64 KiB, pre-compressed `.gz` twin',
        file: 'file-64k.txt',
        headers: { 'accept-encoding': 'gzip' },
        status: 200,
        encoding: 'gzip'
    },
    // wrk counts every byte it reads, finished responses or not, so MiB/s is exact even though
    // 32 connections complete only a few 10 MiB responses per second.
    { id: '10m', label: '10 MiB (MiB/s)', file: 'file-10m.bin', status: 200, length: 10 * mebibyte, perByte: true }
];

// [case, tracewire vs, at least, on]: the Performance targets (docs/performance.md), on the rate ratio, or
// with 'cpu' on the CPU ratio (the peer's server CPU per response over tracewire's: 0.67 is at most 1.5x
// the peer's CPU). The in-memory route is the ceiling of any hapi plugin, nginx with sendfile that of any
// file server on this machine.
const targets = [
    ['1k', 'in-memory route', 0.85],
    ['304', 'in-memory route', 0.85],
    ['64k', 'inert', 1.5],
    ['gz', 'inert', 1.8],
    ['10m', 'inert', 1.3],
    ['10m', 'nginx', 0.9],
    ['10m', 'in-memory route', 1 / 1.5, 'cpu']
];

/** One request with node:http: status, headers, body length, and the time to its first body byte. */
function probe(port, path, headers = {}) {
    return new Promise((resolve, reject) => {
        const started = performance.now();
        let firstByteMs = Number.NaN;
        const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
            let length = 0;
            res.on('data', (chunk) => {
                if (length === 0) {
                    firstByteMs = performance.now() - started;
                }

                length += chunk.length;
            });
            res.on('end', () =>
                resolve({
                    status: res.statusCode,
                    headers: res.headers,
                    length,
                    firstByteMs,
                    totalMs: performance.now() - started
                })
            );
            res.on('error', reject);
        });
        req.on('error', reject);
    });
}

/** The request headers of `benchCase` for one server, checked against what it must answer. */
async function prepare(port, path, benchCase) {
    const headers = { ...benchCase.headers };
    if (benchCase.conditional) {
        const { etag } = (await probe(port, path)).headers;
        if (!etag) {
            throw new Error(`no etag on ${path}`);
        }

        headers['if-none-match'] = etag;
    }

    const answer = await probe(port, path, headers);
    const problems = [];
    if (answer.status !== benchCase.status) problems.push(`status ${answer.status}`);
    if (benchCase.length !== undefined && answer.length !== benchCase.length) problems.push(`${answer.length} B`);
    if (benchCase.encoding && answer.headers['content-encoding'] !== benchCase.encoding) {
        problems.push(`content-encoding ${answer.headers['content-encoding']}`);
    }

    if (problems.length > 0) {
        throw new Error(`${path}: ${problems.join(', ')}`);
    }

    return headers;
}

/** One wrk run against one server: rate (req/s, or MiB/s), server CPU µs per request, p99 in ms. */
async function sample(handle, plan, seconds, benchCase) {
    const before = await ask(handle.child, { type: 'cpu' });
    const result = await runWrk(plan.url, { seconds, connections, headers: plan.headers });
    const after = await ask(handle.child, { type: 'cpu' });
    const cpuMicros = after.user - before.user + (after.system - before.system);
    const elapsed = result.durationUs / 1e6;
    const responses = benchCase.perByte ? result.bytes / benchCase.length : result.requests;
    const errors = result.connect + result.read + result.write + result.status + result.timeout;
    return {
        rate: benchCase.perByte ? result.bytes / mebibyte / elapsed : result.requests / elapsed,
        cpuPerRequest: responses > 0 ? cpuMicros / responses : Number.NaN,
        p99Ms: result.p99Us / 1000,
        errors
    };
}

/**
 * Lets the machine settle before a first-byte probe: right after a 300 MiB file is written or sent,
 * the next request of any size waits 15-35 ms on the kernel and the processes freeing what that
 * used. A pause and then a 1 KiB request on a fresh connection absorb that, before the first probe
 * and the later one alike, so what the probes time is the server's own work.
 */
async function settle(port) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await probe(port, '/f/file-1k.txt');
}

/**
 * The first request for a large file no server has seen yet against a later request for it: the
 * time to the first body byte of each, read from node:http in this process, a fresh 300 MiB sparse
 * file every round.
 */
async function firstByteRounds(servers, fixtures, rounds, log) {
    const size = 300 * mebibyte;
    const results = Object.fromEntries(Object.keys(servers).map((kind) => [kind, []]));
    // Round 0 warms the code paths of a first request up (the JIT, not the file: each round has its
    // own) and is not counted.
    for (let round = 0; round <= rounds; round++) {
        const name = `file-300m-${round}.bin`;
        await writeFile(join(fixtures, name), '');
        await truncate(join(fixtures, name), size);
        if (round > 0) {
            log(`  300 MiB first-byte round ${round} of ${rounds}`);
        }

        for (const kind of rotate(Object.keys(servers), round)) {
            const { port, child } = servers[kind];
            await settle(port);
            const cpuBefore = await ask(child, { type: 'cpu' });
            const first = await probe(port, `/f/${name}`);
            const cpuMiddle = await ask(child, { type: 'cpu' });
            await settle(port);
            const later = await probe(port, `/f/${name}`);
            const cpuAfter = await ask(child, { type: 'cpu' });
            if (first.status !== 200 || first.length !== size || later.status !== 200 || later.length !== size) {
                log(`  ${kind} 300 MiB: status ${first.status}/${later.status}, ${first.length}/${later.length} B`);
                if (round > 0) {
                    results[kind].push(null);
                }

                continue;
            }

            const cpu = (a, b) => (b.user - a.user + b.system - a.system) / 1000;
            if (round === 0) {
                continue;
            }

            results[kind].push({
                first: first.firstByteMs,
                later: later.firstByteMs,
                firstTotal: first.totalMs,
                laterTotal: later.totalMs,
                firstCpu: cpu(cpuBefore, cpuMiddle),
                laterCpu: cpu(cpuMiddle, cpuAfter)
            });
        }
    }

    return results;
}

export async function runStaticSection({ quick, baseline, log }) {
    ensureWrk(log);
    // Many short rounds rather than a few long ones: a burst of load from elsewhere on the shared
    // machine then spoils one set of samples, and the median of the per-round ratios drops it.
    const rounds = quick ? 2 : 5;
    const seconds = quick ? 1 : 2;
    const fixtures = await createFixtures();
    const kinds = ['fixed', 'inert', 'tracewire'];
    const servers = {};
    try {
        for (const kind of kinds) {
            servers[kind] = await startChild('../servers/static.js', [kind, fixtures.directory]);
        }

        if (baseline !== undefined) {
            // The build this change replaces, interleaved with the others: a change measured against it.
            servers['tracewire@baseline'] = await startChild('../servers/static.js', [
                'tracewire@baseline',
                fixtures.directory,
                baseline.directory
            ]);
        }

        try {
            servers.nginx = await startChild('../servers/nginx.js', [fixtures.directory]);
        } catch (error) {
            log(`  nginx: left out, ${error.message.split('\n')[0]}`);
        }

        // plans[case][implementation] = { url, headers } for every pair that answers correctly.
        const plans = {};
        const available = [...implementations, baselineImplementation].filter(({ server }) => servers[server]);
        for (const benchCase of cases) {
            plans[benchCase.id] = {};
            for (const implementation of available) {
                const handle = servers[implementation.server];
                const path = `/f/${benchCase.file}`;
                try {
                    const headers = await prepare(handle.port, path, benchCase);
                    const plan = { url: `http://127.0.0.1:${handle.port}${path}`, headers };
                    // Warm-up: the JIT, the caches and the connection paths of the server.
                    await sample(handle, plan, 1, benchCase);
                    plans[benchCase.id][implementation.name] = plan;
                } catch (error) {
                    log(`  ${implementation.name} ${benchCase.label}: left out, ${error.message}`);
                }
            }
        }

        const samples = Object.fromEntries(
            cases.map(({ id }) => [id, Object.fromEntries(available.map(({ name }) => [name, []]))])
        );
        const nothing = { rate: Number.NaN, cpuPerRequest: Number.NaN, p99Ms: Number.NaN };
        for (let round = 0; round < rounds; round++) {
            for (const benchCase of cases) {
                for (const implementation of rotate(available, round)) {
                    const plan = plans[benchCase.id][implementation.name];
                    if (!plan) {
                        samples[benchCase.id][implementation.name].push(nothing);
                        continue;
                    }

                    const result = await sample(servers[implementation.server], plan, seconds, benchCase);
                    if (result.errors > 0) {
                        log(
                            `  ${implementation.name} ${benchCase.label}: ${result.errors} errors or unexpected statuses`
                        );
                    }

                    samples[benchCase.id][implementation.name].push(result);
                }
            }

            log(`  round ${round + 1} of ${rounds} done`);
        }

        const firstByteServers = Object.fromEntries(
            ['tracewire', 'inert'].filter((kind) => servers[kind]).map((kind) => [kind, servers[kind]])
        );
        const firstBytes = await firstByteRounds(firstByteServers, fixtures.directory, quick ? 1 : 5, log);
        return report(samples, firstBytes, { rounds, seconds, baseline: servers['tracewire@baseline'] !== undefined });
    } finally {
        for (const handle of Object.values(servers)) {
            await stopChild(handle);
        }

        await fixtures.remove();
    }
}

function report(samples, firstBytes, { rounds, seconds, baseline }) {
    const values = (id, name, key) => (samples[id][name] ?? []).map((result) => result[key]);
    const ratio = (id, a, b) => pairedRatio(values(id, a, 'rate'), values(id, b, 'rate'));
    // The same comparison in CPU time per request (b's over a's): steadier than req/s while other
    // processes take CPU time from the server now and then.
    const cpuRatio = (id, a, b) => pairedRatio(values(id, b, 'cpuPerRequest'), values(id, a, 'cpuPerRequest'));
    const names = [...implementations, ...(baseline ? [baselineImplementation] : [])].map(({ name }) => name);
    const detailTable = markdownTable(
        [
            'case',
            ...names.map((name) => `${name} req/s`),
            ...names.map((name) => `${name} CPU µs/req`),
            ...names.map((name) => `${name} p99`)
        ],
        cases.map(({ id, label }) => [
            label,
            ...names.map((name) => formatNumber(median(values(id, name, 'rate')))),
            ...names.map((name) => formatNumber(median(values(id, name, 'cpuPerRequest')))),
            ...names.map((name) => `${formatNumber(median(values(id, name, 'p99Ms')))} ms`)
        ])
    );

    const compared = baseline
        ? [...targets, ...cases.map(({ id }) => [id, 'tracewire@baseline', baselineNoise])]
        : targets;
    const checked = compared.map(([id, peer, atLeast, on]) => {
        const value = on === 'cpu' ? cpuRatio(id, 'tracewire', peer) : ratio(id, 'tracewire', peer);
        const label = cases.find((benchCase) => benchCase.id === id).label;
        return {
            row: [
                `${label}: tracewire vs ${peer}${on === 'cpu' ? ' (CPU per response)' : ''}`,
                formatRatio(value),
                formatRatio(cpuRatio(id, 'tracewire', peer)),
                `≥ ${formatRatio(atLeast)}`,
                verdict(value, atLeast)
            ],
            failed: value < atLeast
        };
    });

    // First byte of a 300 MiB file: the first request (nothing known about the file) over a later one.
    const ttfb = Object.entries(firstBytes).map(([kind, list]) => {
        const good = list.filter(Boolean);
        // A later request's first byte takes a few ms, so one round's ratio swings with a single
        // scheduling hiccup: the target is judged on the medians, the per-round ratios are shown.
        const ratios = good.map(({ first, later }) => first / later);
        const value = median(good.map(({ first }) => first)) / median(good.map(({ later }) => later));
        return { kind, good, ratios, value };
    });
    const tracewireTtfb = ttfb.find(({ kind }) => kind === 'tracewire');
    if (tracewireTtfb) {
        const value = tracewireTtfb.value;
        checked.push({
            row: [
                '300 MiB, first request: time to first byte / a later request’s',
                formatRatio(value),
                '',
                '≤ 2.00×',
                Number.isFinite(value) ? (value <= 2 ? 'pass' : '**FAIL**') : 'n/a'
            ],
            failed: !(value <= 2)
        });
    }

    const targetTable = markdownTable(
        ['target', 'req/s ratio', 'CPU/req ratio', 'required', 'result'],
        checked.map(({ row }) => row)
    );
    const ttfbTable = markdownTable(
        [
            '300 MiB file',
            'first: first byte',
            'first: whole',
            'first: server CPU',
            'later: first byte',
            'later: whole',
            'later: server CPU',
            'per-round first-byte ratios'
        ],
        ttfb.map(({ kind, good, ratios }) => {
            const of = (key) => `${formatNumber(median(good.map((result) => result[key])))} ms`;
            return [
                kind,
                of('first'),
                of('firstTotal'),
                of('firstCpu'),
                of('later'),
                of('laterTotal'),
                of('laterCpu'),
                ratios.map((ratio) => ratio.toFixed(2)).join(' ')
            ];
        })
    );

    const note = [
        `wrk (one thread), ${connections} keep-alive connections, ${seconds} s per sample, medians of ${rounds} interleaved rounds after a`,
        'warm-up run of each server; ratios are medians of per-round ratios (req/s: tracewire over the peer; CPU/req: the',
        "peer's server CPU time per request over tracewire's). CPU µs/req is the server process's user + system time",
        "(process.cpuUsage) over the responses wrk completed (10 MiB: over the bytes read / 10 MiB); p99 is wrk's latency.",
        'Every server runs in its own process: tracewire and inert use the `directory` handler with `lookupCompressed`; the',
        'in-memory route answers the same bytes with an etag and last-modified through `h.entity`; nginx (one worker,',
        '`sendfile`, `etag`, `gzip_static`) serves the same directory, its CPU read from /proc (10 ms ticks).',
        'The 300 MiB rows: a fresh sparse file each round (after an uncounted warm-up round), read whole with node:http after a',
        '300 ms pause and a 1 KiB request (a request right after a 300 MiB file is written or sent waits on the system, whatever its size); the pass/fail is the',
        'median time to first byte of the first requests over that of the later ones (a later one takes a few ms, so the',
        'ratio of a single round, shown in the last column, swings with one scheduling hiccup).'
    ].join('\n');
    return {
        title: 'static',
        markdown: `${targetTable}\n\n${detailTable}\n\n${ttfbTable}\n\n${note}`,
        failures: checked.filter(({ failed }) => failed).length
    };
}
