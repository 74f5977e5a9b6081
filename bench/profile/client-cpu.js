// The client process's CPU per request of one client case, alone (no interleaving), with V8's GC work
// over the same requests: a quick A/B of two builds, or of a build against raw node:http, between
// interleaved runs of the client section. Run it alternately for the implementations compared.
//   node bench/profile/client-cpu.js <tracewire|node:http|dir of another build> <a|b|c|d> [count=30000] [warm-up=10000]
import v8 from 'node:v8';
import { runCalls } from '../lib/calls.js';
import { startClientCase } from '../lib/client-case.js';

const [implementation = 'tracewire', caseId = 'b', count = '30000', warmUp = '10000'] = process.argv.slice(2);
const { call, concurrency, stop } = await startClientCase(implementation, caseId);

await runCalls(call, Number(warmUp), concurrency);
const profiler = new v8.GCProfiler();
profiler.start();
const { rate, cpuPerOperation } = await runCalls(call, Number(count), concurrency);
const { statistics } = profiler.stop();
let scavenges = 0;
let gcMicros = 0;
for (const gc of statistics) {
    scavenges += gc.gcType.includes('Scavenge') ? 1 : 0;
    gcMicros += gc.cost;
}

console.log(
    `${implementation} (${caseId}): ${rate.toFixed(0)} ops/s, client CPU ${cpuPerOperation.toFixed(1)} µs/op, ` +
        `${scavenges} scavenges and ${statistics.length - scavenges} other GCs, GC ${(gcMicros / Number(count)).toFixed(2)} µs/op`
);
await stop();
process.exit(0);
