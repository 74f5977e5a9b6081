// Where the heap bytes of a request of one variant of the tracing section are allocated, by function:
// V8's sampling heap profiler, objects collected since included (they are what the garbage collector
// pays for), over `count` GETs at concurrency 50 after a warm-up. Prints bytes per request by allocating
// function (self), the largest first; what tracing adds is a traced variant's table less the plain one's.
//   node bench/profile/tracing-allocations.js <variant> [count=5000] [warm-up=10000] [rows=40] [baseline build directory]
import { allocationsOf } from '../lib/allocations.js';
import { runCalls } from '../lib/calls.js';
import { startChild, stopChild } from '../lib/processes.js';
import { setUpVariant } from '../lib/traced-variants.js';

const [variant = 'tracewire+otel', count = '5000', warmUp = '10000', rows = '40', baselineDirectory] =
    process.argv.slice(2);
const origin = await startChild('../servers/origin.js');
const { get, sdk } = await setUpVariant(variant, `http://127.0.0.1:${origin.port}/small`, baselineDirectory);
await runCalls(get, Number(warmUp), 50);

const { byFunction, total } = await allocationsOf(() => runCalls(get, Number(count), 50));

const perRequest = (value) => (value / Number(count)).toFixed(0).padStart(7);
console.log(`${variant}: ${perRequest(total)} bytes per request sampled, by allocating function:`);
for (const [where, value] of byFunction.slice(0, Number(rows))) {
    console.log(`${perRequest(value)}  ${where}`);
}

await sdk?.tracerProvider.shutdown();
await sdk?.meterProvider.shutdown();
await stopChild(origin);
process.exit(0);
