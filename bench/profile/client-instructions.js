// Counts the instructions one client case costs per request, under callgrind (valgrind), which the load of
// a shared machine does not move: a warm-up runs uninstrumented, then `count` requests are measured,
// each thread in its own file (thread 1 is the event loop; the others are V8's compiler and GC helpers).
//   valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --callgrind-out-file=/tmp/cg/out.%p \
//     node bench/profile/client-instructions.js <tracewire|node:http|dir of another build> <a|b|d> [count=3000] [warm-up=15000]
//   grep '^summary' /tmp/cg/out.<pid>.1-01   # instructions of the event loop thread; divide by count
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { startChild, stopChild } from '../lib/processes.js';

const [implementation = 'tracewire', caseId = 'b', count = '3000', warmUp = '15000'] = process.argv.slice(2);
const shapes = { a: ['/small', 1], b: ['/small', 50], d: ['/json', 20] };
const [path, concurrency] = shapes[caseId] ?? shapes.b;
const body = JSON.stringify({ pad: 'x'.repeat(64 * 1024 - 10) });
const origin = await startChild('../servers/origin.js');
const url = `http://127.0.0.1:${origin.port}${path}`;

let call;
if (implementation === 'node:http') {
    // As the client section's raw client: an options object, a keep-alive agent.
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    const method = path === '/json' ? 'POST' : 'GET';
    const payload = path === '/json' ? body : undefined;
    call = () =>
        new Promise((resolve, reject) => {
            const headers =
                payload === undefined
                    ? {}
                    : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
            const req = http.request({ host: '127.0.0.1', port: origin.port, path, method, agent, headers }, (res) => {
                const chunks = [];
                res.on('data', (chunk) => chunks.push(chunk));
                res.on('end', () => resolve(Buffer.concat(chunks)));
                res.on('error', reject);
            });
            req.on('error', reject);
            req.end(payload);
        });
} else {
    const entry =
        implementation === 'tracewire' ? 'tracewire' : pathToFileURL(`${implementation}/dist/src/index.js`).href;
    const { client } = await import(entry);
    call =
        path === '/json'
            ? () => client.post(url, { payload: body, headers: { 'content-type': 'application/json' }, json: true })
            : () => client.get(url);
}

async function batch(total) {
    let issued = 0;
    await Promise.all(
        Array.from({ length: concurrency }, async () => {
            while (issued < total) {
                issued++;
                await call();
            }
        })
    );
}

const callgrind = (...args) => execFileSync('callgrind_control', [...args, String(process.pid)], { stdio: 'ignore' });
await batch(Number(warmUp));
callgrind('-i', 'on');
callgrind('-z');
await batch(Number(count));
callgrind('-d');
await stopChild(origin);
process.exit(0);
