// Where the process CPU of a traced request goes, by thread: each variant of the tracing section
// (bench/lib/traced-variants.js) in fresh processes, alternating, as tracing-cpu.js runs them (the
// client pinned to one core, the origin to the other), with every thread's CPU time read from
// /proc/<pid>/task/<tid>/schedstat (nanoseconds on the CPU) before and after the measured GETs, and
// summed by the thread's name: the event loop (`node`), V8's workers (the garbage collector's helpers
// and the optimizing compiler, `V8 DefaultWorke`), libuv's pool, Node's platform threads. Linux only.
//   node bench/profile/tracing-threads.js <rounds> <variant,variant,...> [count=10000] [warm-up=5000]
import { readdirSync, readFileSync } from 'node:fs';
import { ask, pinToCore, startChild, stopChild } from '../lib/processes.js';
import { median, rotate } from '../lib/stats.js';

const [rounds = '5', list = 'tracewire,tracewire+otel', count = '10000', warmUp = '5000'] = process.argv.slice(2);
const variants = list.split(',');
const concurrency = 50;

/** CPU nanoseconds of each thread of `pid`, by thread id, with the thread's name. */
function threadTimes(pid) {
    const times = new Map();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
            const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
            const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
            times.set(tid, { name, ns });
        } catch {
            // The thread ended between the listing and the read.
        }
    }

    return times;
}

/** µs per request spent by each thread name between two readings. */
function perName(before, after, requests) {
    const byName = {};
    for (const [tid, { name, ns }] of after) {
        const spent = ns - (before.get(tid)?.ns ?? 0);
        byName[name] = (byName[name] ?? 0) + spent / 1000 / requests;
    }

    return byName;
}

const origin = await startChild('../servers/origin.js');
pinToCore(origin.child.pid, 0);
const samples = Object.fromEntries(variants.map((variant) => [variant, []]));
try {
    for (let round = 0; round < Number(rounds); round++) {
        for (const variant of rotate(variants, round)) {
            const handle = await startChild('../children/traced-client.js', [variant, String(origin.port)]);
            try {
                pinToCore(handle.child.pid, 1);
                await ask(handle.child, { type: 'run', count: Number(warmUp), concurrency });
                const before = threadTimes(handle.child.pid);
                const { cpuMicros } = await ask(handle.child, { type: 'run', count: Number(count), concurrency });
                const after = threadTimes(handle.child.pid);
                samples[variant].push({
                    cpu: cpuMicros / Number(count),
                    threads: perName(before, after, Number(count))
                });
            } finally {
                await stopChild(handle);
            }
        }

        process.stderr.write(`round ${round + 1} of ${rounds}\n`);
    }
} finally {
    await stopChild(origin);
}

for (const variant of variants) {
    const names = [...new Set(samples[variant].flatMap((sample) => Object.keys(sample.threads)))].sort();
    const threads = names
        .map((name) => `${name} ${median(samples[variant].map((sample) => sample.threads[name] ?? 0)).toFixed(1)}`)
        .join(', ');
    console.log(
        `${variant.padEnd(22)} ${median(samples[variant].map((sample) => sample.cpu)).toFixed(1)} µs/req: ${threads}`
    );
}
