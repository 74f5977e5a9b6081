// static: hapi + tracewire staticFiles against hapi + @hapi/inert, a hapi route answering from
// memory (the ceiling of any hapi plugin) and @fastify/static, each server in its own process and
// loaded by autocannon (32 keep-alive connections) from this one.
import http from 'node:http';
import autocannon from 'autocannon';
import { createFixtures } from '../lib/fixtures.js';
import { startChild, stopChild } from '../lib/processes.js';
import { formatNumber, formatRatio, markdownTable, median, pairedRatio, rotate, verdict } from '../lib/stats.js';

const connections = 32;

const implementations = [
    { name: 'tracewire directory', server: 'tracewire', prefix: '/f/' },
    { name: 'tracewire h.file', server: 'tracewire', prefix: '/h/' },
    { name: 'inert directory', server: 'inert', prefix: '/f/' },
    { name: 'inert h.file', server: 'inert', prefix: '/h/' },
    // Its routes send no etag unless asked: this is the one they answer a conditional GET for.
    { name: 'hapi fixed string', server: 'fixed', prefix: '/f/', etag: '"fixed"' },
    { name: '@fastify/static', server: 'fastify', prefix: '/f/' }
];

const cases = [
    { id: '1k', label: '1 KiB', file: 'file-1k.txt', status: 200, length: 1024 },
    { id: '64k', label: '64 KiB', file: 'file-64k.txt', status: 200, length: 64 * 1024 },
    {
        id: 'gz',
        label: '64 KiB, pre-compressed `.gz` twin',
        file: 'file-64k.txt',
        headers: { 'accept-encoding': 'gzip' },
        status: 200,
        encoding: 'gzip'
    },
    {
        id: '10m',
        label: '10 MiB (MiB/s)',
        file: 'file-10m.bin',
        status: 200,
        length: 10 * 1024 * 1024,
        perByte: true
    },
    { id: '304', label: '304, conditional GET of the 1 KiB file', file: 'file-1k.txt', status: 304, conditional: true }
];

const targets = [
    ['1k', 'tracewire directory', 'inert directory', 1.3],
    ['1k', 'tracewire h.file', 'inert h.file', 1.3],
    ['304', 'tracewire directory', 'inert directory', 1.3],
    ['304', 'tracewire h.file', 'inert h.file', 1.3],
    ['10m', 'tracewire directory', 'inert directory', 1.2],
    ['10m', 'tracewire h.file', 'inert h.file', 1.2],
    ['1k', 'tracewire directory', 'hapi fixed string', 0.8],
    ['1k', 'tracewire h.file', 'hapi fixed string', 0.8]
];

/** One request with node:http: status, headers and body length. */
function probe(port, path, headers = {}) {
    return new Promise((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
            let length = 0;
            res.on('data', (chunk) => {
                length += chunk.length;
            });
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, length }));
            res.on('error', reject);
        });
        req.on('error', reject);
    });
}

/** The request headers of `benchCase` for one implementation, checked against what it must answer. */
async function prepare(port, path, benchCase, knownEtag) {
    const headers = { ...benchCase.headers };
    if (benchCase.conditional) {
        const etag = knownEtag ?? (await probe(port, path)).headers.etag;
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

/** Requests per second (MiB/s for `perByte`) under autocannon, and how many answers were unexpected. */
async function load(url, headers, seconds, benchCase) {
    // autocannon counts the bytes of completed responses only, and 32 connections × 10 MiB complete in
    // waves seconds apart: a timed sample would count 0, 32 or 64 of them. So the 10 MiB case times
    // one whole wave instead, each connection fetching the file once.
    // autocannon notices that `amount` is reached only on its sampling tick (1 s by default), so its
    // own start/finish would round the wave up to whole seconds: a 10 ms tick and the wall clock instead.
    const limit = benchCase.perByte ? { amount: connections, sampleInt: 10 } : { duration: seconds };
    const started = performance.now();
    const result = await autocannon({ url, headers, connections, pipelining: 1, ...limit });
    const elapsed = benchCase.perByte ? (performance.now() - started) / 1000 : (result.finish - result.start) / 1000;
    const expected = result.statusCodeStats[benchCase.status]?.count ?? 0;
    const unexpected = result.requests.total - expected + result.errors + result.timeouts;
    const rate = benchCase.perByte ? result.throughput.total / 1024 / 1024 / elapsed : result.requests.total / elapsed;
    return { rate, unexpected: Math.max(0, unexpected) };
}

export async function runStaticSection({ quick, components, log }) {
    // Many short rounds rather than a few long ones: a burst of load from elsewhere on the shared
    // machine then spoils one pair of samples, and the median of the per-round ratios drops it.
    const rounds = quick ? 2 : 5;
    const seconds = 1;
    const fixtures = await createFixtures();
    const kinds = ['inert', 'fixed', 'fastify', ...(components.static ? ['tracewire'] : [])];
    const servers = {};
    try {
        for (const kind of kinds) {
            servers[kind] = await startChild('../servers/static.js', [kind, fixtures.directory]);
        }

        // plans[case][implementation] = { url, headers } for every pair that answers correctly.
        const plans = {};
        const available = implementations.filter(({ server }) => servers[server]);
        for (const benchCase of cases) {
            plans[benchCase.id] = {};
            for (const implementation of available) {
                const { port } = servers[implementation.server];
                const path = implementation.prefix + benchCase.file;
                try {
                    const headers = await prepare(port, path, benchCase, implementation.etag);
                    plans[benchCase.id][implementation.name] = { url: `http://127.0.0.1:${port}${path}`, headers };
                    // Warm-up: the JIT, the etag caches and the connection paths of the server.
                    await load(plans[benchCase.id][implementation.name].url, headers, quick ? 0.5 : 1, benchCase);
                } catch (error) {
                    log(`  ${implementation.name} ${benchCase.label}: left out, ${error.message}`);
                }
            }
        }

        const samples = Object.fromEntries(
            cases.map(({ id }) => [id, Object.fromEntries(available.map(({ name }) => [name, []]))])
        );
        for (let round = 0; round < rounds; round++) {
            for (const benchCase of cases) {
                for (const implementation of rotate(available, round)) {
                    const plan = plans[benchCase.id][implementation.name];
                    if (!plan) {
                        samples[benchCase.id][implementation.name].push(Number.NaN);
                        continue;
                    }

                    const { rate, unexpected } = await load(plan.url, plan.headers, seconds, benchCase);
                    if (unexpected > 0) {
                        log(`  ${implementation.name} ${benchCase.label}: ${unexpected} unexpected answers or errors`);
                    }

                    samples[benchCase.id][implementation.name].push(rate);
                }
            }

            log(`  round ${round + 1} of ${rounds} done`);
        }

        return report(samples, { rounds, seconds, components });
    } finally {
        for (const handle of Object.values(servers)) {
            await stopChild(handle);
        }

        await fixtures.remove();
    }
}

function report(samples, { rounds, seconds, components }) {
    const ratio = (caseId, a, b) => pairedRatio(samples[caseId][a] ?? [], samples[caseId][b] ?? []);
    const columns = [
        ['tracewire directory', 'inert directory', 'directory vs inert'],
        ['tracewire h.file', 'inert h.file', 'h.file vs inert'],
        ['tracewire directory', 'hapi fixed string', 'directory vs fixed string'],
        ['tracewire h.file', 'hapi fixed string', 'h.file vs fixed string'],
        ['tracewire directory', '@fastify/static', 'directory vs @fastify/static']
    ];
    const rate = (id, name) => median(samples[id][name] ?? []);
    const ratioTable = markdownTable(
        ['case', 'tracewire directory', ...columns.map(([, , label]) => label)],
        cases.map(({ id, label }) => [
            label,
            formatNumber(rate(id, 'tracewire directory')),
            ...columns.map(([a, b]) => formatRatio(ratio(id, a, b)))
        ])
    );

    const checked = targets.map(([id, a, b, atLeast]) => {
        const value = ratio(id, a, b);
        const label = cases.find((benchCase) => benchCase.id === id).label;
        return [
            `${label}: ${a} vs ${b}`,
            formatRatio(value, 3),
            `≥ ${formatRatio(atLeast)}`,
            verdict(value, atLeast),
            value < atLeast
        ];
    });
    const targetTable = markdownTable(
        ['target', 'measured', 'required', 'result'],
        checked.map((row) => row.slice(0, 4))
    );

    const names = implementations.map(({ name }) => name);
    const detailTable = markdownTable(
        ['case (median req/s; MiB/s for 10 MiB)', ...names],
        cases.map(({ id, label }) => [label, ...names.map((name) => formatNumber(rate(id, name)))])
    );
    const note = [
        `autocannon, ${connections} keep-alive connections, ${seconds} s per sample (10 MiB: the time of 32 concurrent downloads, one per connection), medians of ${rounds} interleaved rounds`,
        'after a warm-up run of each pair; ratios are medians of per-round ratios. Each server runs in its own',
        'process with default options plus `lookupCompressed` (`preCompressed` for fastify); each tracewire handler is',
        "compared with inert's same handler.",
        ...(components.static ? [] : ['**tracewire staticFiles missing: only the peers were measured.**'])
    ].join('\n');
    return {
        title: 'static',
        markdown: `${ratioTable}\n\n${targetTable}\n\n${detailTable}\n\n${note}`,
        failures: checked.filter((row) => row[4]).length
    };
}
