// Counts the instructions one variant of the tracing section costs per request, under callgrind
// (valgrind), which the load of a shared machine does not move: a warm-up runs uninstrumented, then
// `count` GETs at concurrency 50 are measured, each thread in its own file (thread 1 is the event loop).
//   valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --callgrind-out-file=/tmp/cg/out.%p \
//     node bench/profile/tracing-instructions.js <variant> [count=3000] [warm-up=15000] [baseline build directory]
//   grep '^summary' /tmp/cg/out.<pid>.1-01   # the event loop thread's count; divide by count
// Under valgrind the threads run one at a time, and which of them does a scavenge's work changes from one
// run to the next (a tenth of the event loop thread's count, or none): compare the event loop thread's
// count less the garbage collector's share of it (`callgrind_annotate --inclusive=yes`, the line of
// `Heap::CollectGarbage`), and the allocation apart: the script prints the bytes the measured requests
// allocated on the heap, per request (the heap's growth between collections, from v8.GCProfiler).
// The variants are those of bench/lib/traced-variants.js; what tracing adds to a request is the
// traced variant's count less the plain one's (`tracewire+otel` − `tracewire`).
import { execFileSync } from 'node:child_process';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { runCalls } from '../lib/calls.js';
import { startChild, stopChild } from '../lib/processes.js';
import { setUpVariant } from '../lib/traced-variants.js';

const [variant = 'tracewire+otel', count = '3000', warmUp = '15000', baselineDirectory] = process.argv.slice(2);
const origin = await startChild('../servers/origin.js');
const { get, sdk } = await setUpVariant(variant, `http://127.0.0.1:${origin.port}/small`, baselineDirectory);
const callgrind = (...args) => execFileSync('callgrind_control', [...args, String(process.pid)], { stdio: 'ignore' });

await runCalls(get, Number(warmUp), 50);
const profiler = new GCProfiler();
const heapAtStart = getHeapStatistics().used_heap_size;
profiler.start();
callgrind('-i', 'on');
callgrind('-z');
await runCalls(get, Number(count), 50);
callgrind('-d');
const heapAtEnd = getHeapStatistics().used_heap_size;
const { statistics } = profiler.stop();
console.log(JSON.stringify({ variant, count: Number(count), allocatedPerRequest: allocated() / Number(count) }));

/** Bytes allocated over the measured requests: what the heap grew by between each collection and the next. */
function allocated() {
    let total = 0;
    let after = heapAtStart;
    for (const { beforeGC, afterGC } of statistics) {
        total += beforeGC.heapStatistics.usedHeapSize - after;
        after = afterGC.heapStatistics.usedHeapSize;
    }

    return total + heapAtEnd - after;
}

await sdk?.tracerProvider.shutdown();
await sdk?.meterProvider.shutdown();
await stopChild(origin);
process.exit(0);
