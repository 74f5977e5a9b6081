// Where the heap bytes of one call of the cache rows (sections/client-cache.js) are allocated, by function:
// V8's sampling heap profiler, objects collected since included (what the garbage collector pays for), over
// `count` calls at concurrency 10 after a warm-up, against the origin (servers/origin.js) in another process.
// What the cache adds to a call is one row's table less the uncached one's.
//   node bench/profile/cache-allocations.js <uncached|hit|revalidated> [count=5000] [warm-up=10000] [rows=40]
import { client, MemoryCacheStore } from 'tracewire';
import { allocationsOf } from '../lib/allocations.js';
import { runCalls } from '../lib/calls.js';
import { startChild, stopChild } from '../lib/processes.js';

const [row = 'revalidated', count = '5000', warmUp = '10000', rows = '40'] = process.argv.slice(2);
const paths = { uncached: '/small', hit: '/cached', revalidated: '/revalidated' };
if (!(row in paths)) {
    throw new Error(`unknown row ${row}: ${Object.keys(paths).join(', ')}`);
}

const origin = await startChild('../servers/origin.js');
const url = `http://127.0.0.1:${origin.port}${paths[row]}`;
const cached = client.defaults({ cache: { store: new MemoryCacheStore() } });
const get = row === 'uncached' ? () => client.get(url) : () => cached.get(url);
await runCalls(get, Number(warmUp), 10);

const { byFunction, total } = await allocationsOf(() => runCalls(get, Number(count), 10));

const perCall = (value) => (value / Number(count)).toFixed(0).padStart(7);
console.log(`${row}: ${perCall(total)} bytes per call sampled, by allocating function:`);
for (const [where, value] of byFunction.slice(0, Number(rows))) {
    console.log(`${perCall(value)}  ${where}`);
}

await stopChild(origin);
process.exit(0);
