// http2: tracewire's HTTP/2 against undici 8's (HTTP/2 on by default) and against tracewire's own
// HTTP/1.1, all talking to one node:http2 server over TLS (bench/servers/h2-origin.js) that also answers
// HTTP/1.1. Each client runs in a process of its own (children/h2-runner.js), a fresh one each round; the
// rounds interleave them.
import { ask, startChild, stopChild } from '../lib/processes.js';
import { formatNumber, formatRatio, markdownTable, median, pairedRatio, rotate, verdict } from '../lib/stats.js';

const names = ['tracewire h2', 'undici 8 h2', 'tracewire h1'];

const cases = [
    { id: 'small', label: '10,000 GETs, 100 B, concurrency 50', count: 10_000, concurrency: 50, route: 'small' },
    { id: 'large', label: '40 GETs, 8 MiB, concurrency 2', count: 40, concurrency: 2, route: 'large' }
];

// [case, against, at least]: the README's Performance targets: as fast as undici's HTTP/2, for no more CPU.
const targets = [
    ['small', 'undici 8 h2', 1],
    ['large', 'undici 8 h2', 1]
];

export async function runHttp2Section({ quick, rounds: roundsWanted, log }) {
    const rounds = roundsWanted ?? (quick ? 2 : 7);
    const scale = quick ? 0.25 : 1;
    const origin = await startChild('../servers/h2-origin.js');
    try {
        const perCase = () =>
            Object.fromEntries(cases.map(({ id }) => [id, Object.fromEntries(names.map((name) => [name, []]))]));
        const samples = perCase();
        const cpuSamples = perCase();
        for (let round = 0; round < rounds; round++) {
            // Fresh processes each round: one process's JIT can settle in a costlier (or cheaper) state than
            // the next one's for the whole of its life (8 MiB downloads moved 0.93-1.16x between whole runs
            // of one process per client); the median over fresh processes is the typical state.
            const working = await startRunners(origin.port, log);
            try {
                for (const benchCase of cases) {
                    const count = Math.max(benchCase.concurrency, Math.round(benchCase.count * scale));
                    for (const { name, handle } of rotate(working, round)) {
                        let measured = { rate: Number.NaN, cpuPerOperation: Number.NaN };
                        try {
                            measured = await ask(handle.child, {
                                type: 'run',
                                route: benchCase.route,
                                count,
                                concurrency: benchCase.concurrency
                            });
                        } catch (error) {
                            log(`  ${name} ${benchCase.label}: ${error.message}`);
                        }

                        samples[benchCase.id][name].push(measured.rate);
                        cpuSamples[benchCase.id][name].push(measured.cpuPerOperation);
                    }
                }
            } finally {
                await stopRunners(working);
            }

            log(`  round ${round + 1} of ${rounds} done`);
        }

        return report(samples, cpuSamples, { rounds });
    } finally {
        await stopChild(origin);
    }
}

/** A runner per client, checked and warmed up on every case (a tenth of each); a client that fails is left out. */
async function startRunners(port, log) {
    const working = [];
    for (const name of names) {
        let handle;
        try {
            handle = await startChild('../children/h2-runner.js', [name, String(port)]);
            await ask(handle.child, { type: 'validate' });
            for (const { route, count, concurrency } of cases) {
                await ask(handle.child, { type: 'run', route, count: Math.max(concurrency, count / 10), concurrency });
            }

            working.push({ name, handle });
        } catch (error) {
            log(`  ${name}: left out, ${error.message}`);
            await stopChild(handle);
        }
    }

    return working;
}

async function stopRunners(working) {
    for (const { handle } of working) {
        await ask(handle.child, { type: 'close' }).catch(() => {});
        await stopChild(handle);
    }
}

function report(samples, cpuSamples, { rounds }) {
    const rate = (id, a, b) => pairedRatio(samples[id][a] ?? [], samples[id][b] ?? []);
    // CPU per operation, theirs over ours: above 1 when tracewire spends less.
    const cpu = (id, a, b) => pairedRatio(cpuSamples[id][b] ?? [], cpuSamples[id][a] ?? []);
    const checked = [];
    for (const [id, peer, atLeast] of targets) {
        const label = cases.find((benchCase) => benchCase.id === id).label;
        const rateRatio = rate(id, 'tracewire h2', peer);
        const cpuRatio = cpu(id, 'tracewire h2', peer);
        checked.push({
            row: [
                `${label}: tracewire h2 vs ${peer}, rate`,
                formatRatio(rateRatio),
                `≥ ${formatRatio(atLeast)}`,
                verdict(rateRatio, atLeast)
            ],
            failed: !(rateRatio >= atLeast)
        });
        checked.push({
            row: [
                `${label}: tracewire h2 vs ${peer}, CPU per request (theirs / ours)`,
                formatRatio(cpuRatio),
                `≥ ${formatRatio(atLeast)}`,
                verdict(cpuRatio, atLeast)
            ],
            failed: !(cpuRatio >= atLeast)
        });
    }

    const targetTable = markdownTable(
        ['target', 'ratio', 'required', 'result'],
        checked.map(({ row }) => row)
    );
    const detailTable = markdownTable(
        [
            'case',
            ...names.map((name) => `${name} req/s`),
            ...names.map((name) => `${name} CPU µs/req`),
            'h2 vs h1 (rate)'
        ],
        cases.map(({ id, label }) => [
            label,
            ...names.map((name) => formatNumber(median(samples[id][name] ?? []))),
            ...names.map((name) => formatNumber(median(cpuSamples[id][name] ?? []))),
            formatRatio(rate(id, 'tracewire h2', 'tracewire h1'))
        ])
    );
    const note = [
        `One node:http2 server over TLS (also answering HTTP/1.1) in its own process; each client in a fresh process of its`,
        `own each round, warmed up; medians of ${rounds} interleaved rounds; ratios are medians of per-round ratios. CPU µs/req is the`,
        "client process's user + system time per request (process.cpuUsage). `tracewire h2`: `http2: true`; `tracewire h1`:",
        'the same client on HTTP/1.1 through its keep-alive agent; `undici 8 h2`: an undici 8 Agent (HTTP/2 by default).'
    ].join('\n');
    return {
        title: 'http2',
        markdown: `${targetTable}\n\n${detailTable}\n\n${note}`,
        failures: checked.filter(({ failed }) => failed).length
    };
}
