// Counts the instructions one static server spends per response, under callgrind (valgrind), which the
// load of a shared machine does not move. The server (bench/servers/static.js) runs under valgrind with
// each thread in a file of its own; this process sends a warm-up uninstrumented, then `count` requests
// measured, over 32 keep-alive connections as wrk does, and prints every thread's instructions per
// response and their sum (the event loop's, the garbage collector's and the compiler's threads).
//   node bench/profile/static-instructions.js <tracewire|fixed|inert|<dir of another build>> <path> \
//     [count=2000] [warm-up=4000] [plain|conditional|gzip] [out dir=/tmp/cg-static] [node flags...]
// With `--perf-basic-prof` among the node flags, bench/profile/callgrind-functions.js names the JIT code.
//   e.g. node bench/profile/static-instructions.js tracewire /f/file-1k.txt 2000 4000 conditional
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { isAbsolute } from 'node:path';
import { createFixtures } from '../lib/fixtures.js';
import { startChild, stopChild } from '../lib/processes.js';

const [
    kind = 'tracewire',
    path = '/f/file-1k.txt',
    count = '2000',
    warmUp = '4000',
    mode = 'plain',
    out = '/tmp/cg-static',
    ...nodeFlags
] = process.argv.slice(2);
const connections = 32;

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const fixtures = await createFixtures();
// The content cache keeps no file changed within the last two seconds (src/static/content-cache.ts).
await new Promise((resolve) => setTimeout(resolve, 2500));
const [server, serverArgs] = isAbsolute(kind)
    ? ['tracewire@baseline', [fixtures.directory, kind]]
    : [kind, [fixtures.directory]];
const handle = await startChild('../servers/static.js', [server, ...serverArgs], {
    execPath: 'valgrind',
    execArgv: [
        '--tool=callgrind',
        '--instr-atstart=no',
        '--separate-threads=yes',
        `--callgrind-out-file=${out}/out.%p`,
        process.execPath,
        ...nodeFlags
    ],
    timeoutMs: 300_000
});
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });

function get(headers) {
    return new Promise((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port: handle.port, path, headers, agent }, (res) => {
            res.on('data', () => {});
            res.on('end', () => resolve(res));
            res.on('error', reject);
        });
        req.on('error', reject);
    });
}

let resets = 0;

async function batch(total, headers) {
    let sent = 0;
    const worker = async () => {
        while (sent < total) {
            sent++;
            // A connection the slowed server closed as it was reused: the request is sent again.
            await get(headers).catch((error) => {
                if (error.code !== 'ECONNRESET') throw error;
                resets++;
                return get(headers);
            });
        }
    };
    await Promise.all(Array.from({ length: connections }, worker));
}

const headers = {};
if (mode === 'conditional') {
    headers['if-none-match'] = (await get({})).headers.etag;
} else if (mode === 'gzip') {
    headers['accept-encoding'] = 'gzip';
}

const first = await get(headers);
console.log(`${kind} ${path} ${mode}: status ${first.statusCode}, ${first.headers['content-length'] ?? '-'} B`);
await batch(Number(warmUp), headers);
const callgrind = (...args) =>
    execFileSync('callgrind_control', [...args, String(handle.child.pid)], { stdio: 'ignore' });
callgrind('-i', 'on');
callgrind('-z');
await batch(Number(count), headers);
callgrind('-d');
agent.destroy();
await stopChild(handle);
await fixtures.remove();

// The dump's files: out.<pid>.1-<thread>. Each has a `summary:` (or `totals:`) line of Ir.
const perThread = [];
for (const name of readdirSync(out)) {
    const match = /^out\.\d+\.1-(\d+)$/.exec(name);
    if (match) {
        const text = readFileSync(`${out}/${name}`, 'utf8');
        const line = /^(?:summary|totals): (\d+)/m.exec(text);
        perThread.push([Number(match[1]), line ? Number(line[1]) : 0]);
    }
}

perThread.sort((a, b) => a[0] - b[0]);
const perResponse = (ir) => (ir / Number(count) / 1000).toFixed(1);
const total = perThread.reduce((sum, [, ir]) => sum + ir, 0);
console.log(
    `${resets} requests re-sent after a reset; instructions per response (k): ${perThread.map(([thread, ir]) => `thread ${thread} ${perResponse(ir)}`).join(', ')}; all ${perResponse(total)}`
);
