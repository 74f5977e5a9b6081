// CPU per request of variants of the tracing section (bench/lib/traced-variants.js), each round in fresh
// processes started one after the other (a process's JIT can settle in a costlier state than the next
// one's, as one section process keeps for all its rounds), against one origin; prints the median CPU
// per request of each variant and what each traced variant adds over its untraced client. On Linux with
// two cores or more, the client runs pinned to one core and the origin to another.
//   node bench/profile/tracing-cpu.js <rounds> <variant,variant,...> [baseline build directory]
//   node bench/profile/tracing-cpu.js 8 tracewire,tracewire+otel,tracewire@baseline,tracewire+otel@baseline /tmp/base
import { ask, pinToCore, startChild, stopChild } from '../lib/processes.js';
import { median, rotate } from '../lib/stats.js';

const [rounds = '8', list = 'tracewire,tracewire+otel', baselineDirectory] = process.argv.slice(2);
const variants = list.split(',');
const count = 10_000;
const concurrency = 50;

const origin = await startChild('../servers/origin.js');
pinToCore(origin.child.pid, 0);
const cpu = Object.fromEntries(variants.map((variant) => [variant, []]));
try {
    for (let round = 0; round < Number(rounds); round++) {
        for (const variant of rotate(variants, round)) {
            const args = [
                variant,
                String(origin.port),
                ...(baselineDirectory === undefined ? [] : [baselineDirectory])
            ];
            const handle = await startChild('../children/traced-client.js', args);
            try {
                pinToCore(handle.child.pid, 1);
                await ask(handle.child, { type: 'run', count: count / 2, concurrency });
                const { cpuMicros } = await ask(handle.child, { type: 'run', count, concurrency });
                cpu[variant].push(cpuMicros / count);
            } finally {
                await stopChild(handle);
            }
        }

        process.stderr.write(`round ${round + 1} of ${rounds}\n`);
    }
} finally {
    await stopChild(origin);
}

// The untraced client of a traced variant: its name up to the first `+`, with the same build.
const untraced = (variant) => variant.replace(/\+[^@]*/, '');
for (const variant of variants) {
    const plain = untraced(variant);
    const added =
        plain !== variant && cpu[plain] !== undefined
            ? ` added ${median(cpu[variant].map((value, round) => value - cpu[plain][round])).toFixed(1)} µs`
            : '';
    const values = cpu[variant].map((value) => value.toFixed(1)).join(' ');
    console.log(`${variant.padEnd(28)} ${median(cpu[variant]).toFixed(1)} µs/req${added}   (${values})`);
}
