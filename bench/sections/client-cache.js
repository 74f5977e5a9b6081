// The cache rows of the client section: a fresh hit and a revalidated (304) call of tracewire's cache next
// to an uncached request, and next to undici 8's cache interceptor, and next to the floor of a revalidation
// made with node:http alone (lib/cache-rows.js). Each library's rows run in a process of its own
// (children/cache-runner.js), as the section's clients do: in one shared process, one library's garbage was
// collected during another's row, and Node's http code was optimised for the objects of all three at once.
import { cacheLibraries } from '../lib/cache-rows.js';
import { ask, startChild, stopChild } from '../lib/processes.js';
import { formatNumber, formatRatio, markdownTable, median, pairedRatio, rotate, verdict } from '../lib/stats.js';

// The warm-up round (dropped) is 25,000 calls a row: a 304's code, and an uncached call's, reach their steady
// cost only after about that many (CPU per call of batches of 5,000: docs/performance.md). Then many short
// rounds rather than a few long ones, as many calls in all: this machine's speed drifts over seconds (one
// row's CPU per call moved 77-130 µs between rounds of 5,000), and the rows a round compares are then
// measured within a second of each other. Five rounds of 5,000 put one build's 304 at 0.66-0.86× an
// uncached GET in three runs; 25 of 1,000, at 0.83-0.88× in three (docs/performance.md).
const calls = { count: 1000, concurrency: 10, warmUp: 25_000, rounds: 25 };

/** One process per library, each validated with a call of every row; a library that fails is left out. */
async function startLibraries(port, log) {
    const working = [];
    for (const library of Object.keys(cacheLibraries)) {
        let handle;
        try {
            handle = await startChild('../children/cache-runner.js', [library, String(port)]);
            await ask(handle.child, { type: 'validate' });
            working.push({ library, handle });
        } catch (error) {
            log(`  ${library} cache rows: left out, ${error.message.split('\n')[0]}`);
            await stopChild(handle);
        }
    }

    return working;
}

/** Interleaved rounds of each row; returns the section's Markdown and its failed targets. */
export async function runCacheRows({ port, quick, log }) {
    const libraries = await startLibraries(port, log);
    const rows = libraries.flatMap(({ library, handle }) =>
        cacheLibraries[library].map((name) => ({ name, child: handle.child }))
    );
    const samples = Object.fromEntries(rows.map(({ name }) => [name, []]));
    // The CPU µs per call of the row's process, which moves less than the rate on a shared machine.
    const cpuSamples = Object.fromEntries(rows.map(({ name }) => [name, []]));
    const rounds = quick ? 6 : calls.rounds;
    const count = Math.round(calls.count * (quick ? 0.5 : 1));
    try {
        for (let round = 0; round <= rounds; round++) {
            for (const { name, child } of rotate(rows, round)) {
                const { rate, cpuPerOperation } = await ask(child, {
                    type: 'run',
                    row: name,
                    count: round === 0 ? Math.round(calls.warmUp * (quick ? 0.25 : 1)) : count,
                    concurrency: calls.concurrency
                });
                if (round > 0) {
                    samples[name].push(rate);
                    cpuSamples[name].push(cpuPerOperation);
                }
            }
        }
    } finally {
        for (const { handle } of libraries) {
            await ask(handle.child, { type: 'close' }).catch(() => {});
            await stopChild(handle);
        }
    }

    const ratio = (a, b) => (samples[a] && samples[b] ? pairedRatio(samples[a], samples[b]) : Number.NaN);
    // The same comparison in what each client pays a call, the table's medians (b's CPU over a's): the origin
    // shares this machine's cores, so a cheaper client gains less rate than CPU (docs/performance.md, the 304's
    // sixth pass), and a round's 1,000 calls are too few for its CPU alone to pair with another row's.
    const cpuRatio = (a, b) =>
        cpuSamples[a] && cpuSamples[b] ? median(cpuSamples[b]) / median(cpuSamples[a]) : Number.NaN;
    const table = markdownTable(
        [
            `${rounds} rounds of ${count} GETs of 100 B, concurrency ${calls.concurrency}`,
            'median ops/s',
            'vs uncached',
            'CPU µs per call'
        ],
        rows.map(({ name }) => [
            name,
            formatNumber(median(samples[name])),
            formatRatio(ratio(name, 'tracewire, uncached')),
            median(cpuSamples[name]).toFixed(1)
        ])
    );
    const targets = [
        ['fresh hit vs an uncached request', ratio('tracewire, fresh hit', 'tracewire, uncached'), 10],
        ['fresh hit vs undici 8 interceptor hit', ratio('tracewire, fresh hit', 'undici 8 interceptor, fresh hit'), 1],
        // A revalidation is one round trip without a body: about an uncached call's cost (docs/performance.md).
        ['revalidated (304) vs an uncached request', ratio('tracewire, revalidated (304)', 'tracewire, uncached'), 0.8],
        [
            'revalidated (304) vs undici 8 interceptor revalidated',
            ratio('tracewire, revalidated (304)', 'undici 8 interceptor, revalidated (304)'),
            1.3
        ]
    ];
    // What the transport allows a revalidation, and this client's pipeline without the cache's rules, and how
    // far from each tracewire's is.
    const floorRow = 'raw node:http, the floor of a revalidation (304, stored body)';
    const pipelineFloorRow = 'tracewire, conditional GET without the cache (304)';
    const undiciRevalidated = 'undici 8 interceptor, revalidated (304)';
    const floors = [
        ['(floor) the floor of a revalidation vs raw node:http uncached', ratio(floorRow, 'raw node:http, uncached')],
        ['(floor) the floor of a revalidation vs undici 8 interceptor revalidated', ratio(floorRow, undiciRevalidated)],
        [
            "(floor) tracewire's conditional GET without the cache vs undici 8 interceptor revalidated",
            ratio(pipelineFloorRow, undiciRevalidated)
        ],
        ['revalidated (304) vs the floor of a revalidation', ratio('tracewire, revalidated (304)', floorRow)],
        [
            "revalidated (304) vs tracewire's conditional GET without the cache",
            ratio('tracewire, revalidated (304)', pipelineFloorRow)
        ],
        [
            "(CPU a call) revalidated (304) vs undici 8 interceptor revalidated: undici's median CPU over ours",
            cpuRatio('tracewire, revalidated (304)', undiciRevalidated)
        ]
    ];
    const targetTable = markdownTable(
        ['cache target', 'measured', 'required', 'result'],
        [
            ...targets.map(([label, value, atLeast]) => [
                label,
                formatRatio(value),
                `≥ ${formatRatio(atLeast)}`,
                verdict(value, atLeast)
            ]),
            ...floors.map(([label, value]) => [label, formatRatio(value), '', 'info'])
        ]
    );
    return {
        markdown: `${table}\n\n${targetTable}`,
        failures: targets.filter(([, value, atLeast]) => Number.isFinite(value) && value < atLeast).length
    };
}
