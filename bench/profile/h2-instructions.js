// Counts the instructions one HTTP/2 client spends per request, under callgrind, against the HTTP/2
// section's server (servers/h2-origin.js, started here as a child): a warm-up runs uninstrumented,
// then `count` GETs of /small at concurrency 50 are measured.
//   valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --callgrind-out-file=/tmp/cg/h2.%p \
//     node bench/profile/h2-instructions.js <tracewire h2|tracewire h1|undici 8 h2> [count=3000] [warm-up=10000] [route=small|large] [concurrency=50]
//   grep '^summary' /tmp/cg/h2.<pid>.1-01   # the event loop thread's instructions; divide by count
// Without valgrind it prints the client's CPU µs per request instead (a quick look).
import { execFileSync } from 'node:child_process';
import { runCalls } from '../lib/calls.js';
import { startChild, stopChild } from '../lib/processes.js';

const [name = 'tracewire h2', count = '3000', warmUp = '10000', route = 'small', concurrency = '50'] =
    process.argv.slice(2);
const origin = await startChild('../servers/h2-origin.js');
const url = `https://127.0.0.1:${origin.port}/${route}`;
let get;
let close = async () => {};
if (name.startsWith('tracewire')) {
    const { client } = await import('tracewire');
    const api = client.defaults({ http2: name === 'tracewire h2', rejectUnauthorized: false });
    get = () => api.get(url);
} else {
    const { Agent, request } = await import('undici8');
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    get = async () => (await request(url, { dispatcher })).body.arrayBuffer();
    close = () => dispatcher.close();
}

const underCallgrind = process.env.LD_PRELOAD?.includes('vgpreload') || process.execArgv.length < 0;
const callgrind = (...args) => {
    try {
        execFileSync('callgrind_control', [...args, String(process.pid)], { stdio: 'ignore' });
    } catch {
        // Not under callgrind: the CPU figure below is what this run is for.
    }
};
await runCalls(get, Number(warmUp), Number(concurrency));
callgrind('-i', 'on');
callgrind('-z');
const measured = await runCalls(get, Number(count), Number(concurrency));
callgrind('-d');
if (!underCallgrind) {
    console.log(
        `${name}: ${measured.rate.toFixed(0)} req/s, ${measured.cpuPerOperation.toFixed(1)} µs CPU per request`
    );
}

await close();
await stopChild(origin);
process.exit(0);
