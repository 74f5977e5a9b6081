// client: tracewire against raw node:http, @hapi/wreck, undici and fetch, all talking to one
// keep-alive node:http server in a separate process (bench/servers/origin.js); with `--baseline`, also
// the build of another checkout (`tracewire@baseline`), so a change is measured against what it replaces
// in the same interleaved rounds. Each client runs in a process of its own (children/client-runner.js),
// as in a service, which loads one: in one shared process, Node's http code is optimised for the
// objects of every library at once and runs each of them slower, unevenly. The instrumented client has
// its own section (tracing.js).
import { ask, startChild, stopChild } from '../lib/processes.js';
import {
    formatNumber,
    formatRatio,
    geometricMean,
    markdownTable,
    median,
    pairedRatio,
    rotate,
    verdict
} from '../lib/stats.js';
import { runCacheRows } from './client-cache.js';
import { runMockRows } from './client-mock.js';

/** The 64 KiB JSON document case (d) posts. */
export const jsonBody = makeJsonBody(64 * 1024);

/** The cases of the section, each run in every client's process in turn, round after round. */
export const cases = [
    { id: 'a', label: '(a) 2,000 sequential GETs, 100 B', count: 2000, concurrency: 1, route: 'small' },
    { id: 'b', label: '(b) 10,000 GETs, 100 B, concurrency 50', count: 10_000, concurrency: 50, route: 'small' },
    { id: 'c', label: '(c) 200 GETs, 1 MiB, concurrency 4', count: 200, concurrency: 4, route: 'large' },
    { id: 'd', label: '(d) 2,000 POSTs, 64 KiB JSON, concurrency 20', count: 2000, concurrency: 20, route: 'json' }
];

/** A JSON document of exactly `bytes` bytes: an array of small records padded by the last one. */
function makeJsonBody(bytes) {
    const records = [];
    let length = 2;
    for (let id = 0; length < bytes - 200; id++) {
        const record = JSON.stringify({ id, name: `user-${id}`, active: id % 2 === 0, score: id * 1.5 });
        records.push(record);
        length += record.length + 1;
    }

    const head = `[${records.join(',')},`;
    const padding = bytes - head.length - '{"pad":""}]'.length;
    return `${head}{"pad":"${'x'.repeat(padding)}"}]`;
}

const clientNames = ['node:http', '@hapi/wreck', 'undici', 'fetch', 'tracewire', 'tracewire events'];
const baselineNames = ['tracewire@baseline', 'tracewire events@baseline'];

/** One process per client, each validated with one call of every route; a client that fails is left out. */
async function startClients(port, baseline, log) {
    const names = baseline === undefined ? clientNames : [...clientNames, ...baselineNames];
    const working = [];
    for (const name of names) {
        const args = baseline === undefined ? [name, String(port)] : [name, String(port), baseline.directory];
        let handle;
        try {
            handle = await startChild('../children/client-runner.js', args);
            await ask(handle.child, { type: 'validate', jsonBody });
            working.push({ name, handle });
        } catch (error) {
            log(`  ${name}: left out, ${error.message}`);
            await stopChild(handle);
        }
    }

    return working;
}

export async function runClientSection({ quick, baseline, rounds: roundsWanted, log }) {
    const rounds = roundsWanted ?? (quick ? 2 : 5);
    const minRounds = Math.min(rounds, quick ? 2 : 3);
    const scale = quick ? 0.25 : 1;
    const origin = await startChild('../servers/origin.js');
    let working = [];
    try {
        working = await startClients(origin.port, baseline, log);
        // The budget is for six clients and the default rounds; a baseline adds two, `--rounds` more.
        const budgetSeconds = ((quick ? 60 : 170) * working.length * Math.max(1, rounds / (quick ? 2 : 5))) / 6;

        // samples[case][implementation] = ops/s per round, cpuSamples the client CPU µs per operation;
        // round 0 warms every path up and is dropped.
        const perCase = () =>
            Object.fromEntries(cases.map(({ id }) => [id, Object.fromEntries(working.map(({ name }) => [name, []]))]));
        const samples = perCase();
        const cpuSamples = perCase();
        // The machine is shared: when rounds run slow, stop after `minRounds` rather than overrun the budget.
        const started = Date.now();
        let measured = 0;
        for (let round = 0; round <= rounds; round++) {
            const elapsed = (Date.now() - started) / 1000;
            if (measured >= minRounds && elapsed + elapsed / round > budgetSeconds) {
                log(`  stopping after ${measured} rounds: ${elapsed.toFixed(0)} s of a ${budgetSeconds} s budget used`);
                break;
            }

            for (const benchCase of cases) {
                const count = Math.max(
                    benchCase.concurrency,
                    Math.round(benchCase.count * (round === 0 ? 0.1 : scale))
                );
                for (const implementation of rotate(working, round)) {
                    let measuredCase = { rate: Number.NaN, cpuPerOperation: Number.NaN };
                    try {
                        measuredCase = await ask(implementation.handle.child, {
                            type: 'run',
                            route: benchCase.route,
                            count,
                            concurrency: benchCase.concurrency
                        });
                    } catch (error) {
                        log(`  ${implementation.name} ${benchCase.label}: ${error.message}`);
                    }

                    if (round > 0) {
                        samples[benchCase.id][implementation.name].push(measuredCase.rate);
                        cpuSamples[benchCase.id][implementation.name].push(measuredCase.cpuPerOperation);
                    }
                }
            }

            measured = round;
            log(`  round ${round}${round === 0 ? ' (warm-up)' : ''} done`);
        }

        const result = report(samples, cpuSamples, working, { rounds: measured, quick });
        // The cache rows: a fresh hit and a 304 revalidation, beside an uncached call and undici 8's interceptor.
        const cache = await runCacheRows({ port: origin.port, quick, log });
        // The mocked rows: a GET answered by tracewire/testing beside the same GET on loopback.
        const mocked = await runMockRows({ port: origin.port, quick });
        return {
            ...result,
            markdown: `${result.markdown}\n\n${cache.markdown}\n\n${mocked.markdown}`,
            failures: result.failures + cache.failures + mocked.failures
        };
    } finally {
        for (const { handle } of working) {
            await ask(handle.child, { type: 'close' }).catch(() => {});
            await stopChild(handle);
        }

        await stopChild(origin);
    }
}

function report(samples, cpuSamples, working, { rounds, quick }) {
    const names = new Set(working.map(({ name }) => name));
    const ratio = (caseId, a, b) =>
        names.has(a) && names.has(b) ? pairedRatio(samples[caseId][a], samples[caseId][b]) : Number.NaN;
    const columns = [
        ['tracewire', 'node:http', 'vs node:http'],
        ['tracewire', '@hapi/wreck', 'vs wreck'],
        ['tracewire', 'undici', 'vs undici'],
        ['tracewire', 'fetch', 'vs fetch'],
        ['tracewire events', 'tracewire', 'events:true vs plain'],
        ...(names.has('tracewire@baseline')
            ? [
                  ['tracewire', 'tracewire@baseline', 'vs baseline'],
                  ['tracewire events', 'tracewire events@baseline', 'events vs baseline']
              ]
            : [])
    ];
    const perCase = cases.map(({ id }) => columns.map(([a, b]) => ratio(id, a, b)));
    const geometric = columns.map((_, column) => geometricMean(perCase.map((row) => row[column])));
    const opsOf = (id, name) => (names.has(name) ? median(samples[id][name]) : Number.NaN);
    const ratioTable = markdownTable(
        ['case', 'tracewire ops/s', ...columns.map(([, , label]) => label)],
        [
            ...cases.map(({ id, label }, index) => [
                label,
                formatNumber(opsOf(id, 'tracewire')),
                ...perCase[index].map((value) => formatRatio(value))
            ]),
            ['**geometric mean (a)–(d)**', '', ...geometric.map((value) => `**${formatRatio(value)}**`)]
        ]
    );

    // Against raw node:http on each case, not only on average.
    const targets = [
        ...cases.map(({ label }, index) => [
            `${label}: tracewire vs raw node:http + keep-alive agent`,
            perCase[index][0],
            0.95
        ]),
        ['geometric mean (a)–(d): tracewire vs @hapi/wreck (its defaults)', geometric[1], 1.6],
        ['geometric mean (a)–(d): `events: true`, no listener, vs plain', geometric[4], 0.98]
    ];
    const targetTable = markdownTable(
        ['target', 'measured', 'required', 'result'],
        targets.map(([label, value, atLeast]) => [
            label,
            formatRatio(value),
            `≥ ${formatRatio(atLeast)}`,
            verdict(value, atLeast)
        ])
    );

    const allNames = working.map(({ name }) => name);
    const detailTable = markdownTable(
        ['case (median ops/s)', ...allNames],
        cases.map(({ id, label }) => [label, ...allNames.map((name) => formatNumber(opsOf(id, name)))])
    );

    // How far the per-round ratios spread around those medians, and the client's CPU per operation (a
    // busy machine moves it less than the rate): tracewire's against raw node:http's and the baseline's.
    const comparisons = [
        ['tracewire', 'node:http', 'vs node:http'],
        ['tracewire', 'tracewire@baseline', 'vs baseline']
    ].filter(([a, b]) => names.has(a) && names.has(b));
    const cpuOf = (id, name) => (names.has(name) ? median(cpuSamples[id][name]) : Number.NaN);
    const spreadTable = markdownTable(
        [
            'case',
            ...comparisons.map(([, , label]) => `ops/s ${label}: median (min–max of rounds)`),
            ...comparisons.map(([, b]) => `client CPU µs/op: ${b}`),
            'client CPU µs/op: tracewire',
            ...comparisons.map(([, , label]) => `CPU/op ${label}`)
        ],
        cases.map(({ id, label }) => [
            label,
            ...comparisons.map(([a, b]) => ratioWithRange(samples[id][a], samples[id][b])),
            ...comparisons.map(([, b]) => formatNumber(cpuOf(id, b))),
            formatNumber(cpuOf(id, 'tracewire')),
            ...comparisons.map(([a, b]) => formatRatio(pairedRatio(cpuSamples[id][a], cpuSamples[id][b])))
        ])
    );

    const note = [
        `Medians of ${rounds} interleaved rounds after a warm-up round${quick ? ', counts at a quarter (`--quick`)' : ''};`,
        'ratios are medians of per-round ratios. Server: node:http with keep-alive in a separate process.',
        'Each client runs in its own process. Client CPU: `process.cpuUsage()` of that process per operation (median of rounds); `CPU/op` ratios',
        'are tracewire over the other (above 1: tracewire spends more).',
        'POST (d) sends the same pre-serialised 64 KiB JSON string with every client and parses the ~1 KiB JSON reply.',
        'A GET is timed on the promise the library returns (raw node:http, @hapi/wreck, tracewire), with no async wrapper added.'
    ].join('\n');
    return {
        title: 'client',
        markdown: `${ratioTable}\n\n${targetTable}\n\n${detailTable}\n\n${spreadTable}\n\n${note}`,
        failures: targets.filter(([, value, atLeast]) => Number.isFinite(value) && value < atLeast).length
    };
}

/** The median of the per-round ratios a/b, with their lowest and highest: `0.97× (0.91–1.02)`. */
function ratioWithRange(samplesA, samplesB) {
    const ratios = samplesA.map((value, index) => value / samplesB[index]).filter((value) => Number.isFinite(value));
    if (ratios.length === 0) {
        return 'n/a';
    }

    return `${formatRatio(pairedRatio(samplesA, samplesB))} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
}
