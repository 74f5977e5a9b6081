// Profiles one static server under wrk load: the server runs with --cpu-prof and writes its
// profile to `dir` when it is stopped.
// Usage: node bench/profile/static-load.js <tracewire|inert|fixed|fastify> <path> [seconds=5] [dir=/tmp/tracewire-prof] [conditional|gzip]
//   e.g. node bench/profile/static-load.js tracewire /f/file-1k.txt 5 /tmp/prof-static
import http from 'node:http';
import { createFixtures } from '../lib/fixtures.js';
import { ask, startChild, stopChild } from '../lib/processes.js';
import { ensureWrk, runWrk } from '../lib/wrk.js';

const [kind = 'tracewire', path = '/f/file-1k.txt', seconds = '5', dir = '/tmp/tracewire-prof', mode] =
    process.argv.slice(2);
ensureWrk(console.log);
const fixtures = await createFixtures();
const server = await startChild('../servers/static.js', [kind, fixtures.directory], {
    execArgv: ['--cpu-prof', '--cpu-prof-interval', '100', `--cpu-prof-dir=${dir}`]
});
const headers = {};
if (mode === 'conditional') {
    const etag = await new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: server.port, path }, (res) => {
            res.resume();
            resolve(res.headers.etag);
        }).on('error', reject);
    });
    headers['if-none-match'] = etag ?? '"fixed"';
} else if (mode === 'gzip') {
    headers['accept-encoding'] = 'gzip';
}

const before = await ask(server.child, { type: 'cpu' });
const result = await runWrk(`http://127.0.0.1:${server.port}${path}`, { seconds: Number(seconds), headers });
const after = await ask(server.child, { type: 'cpu' });
const cpu = after.user - before.user + after.system - before.system;
console.log(
    `${kind} ${path}: ${(result.requests / (result.durationUs / 1e6)).toFixed(0)} req/s, ` +
        `${(cpu / result.requests).toFixed(1)} µs CPU/req, p99 ${(result.p99Us / 1000).toFixed(1)} ms, ` +
        `${result.status} non-2xx/3xx`
);
await stopChild(server);
await fixtures.remove();
console.log(`profile written to ${dir}`);
