// Profiles one static server under autocannon load: the server runs with --cpu-prof and writes its
// profile to `dir` when it is stopped.
// Usage: node bench/profile/static-load.js <tracewire|inert|fixed|fastify> <path> [seconds=5] [dir=/tmp/tracewire-prof] [conditional]
//   e.g. node bench/profile/static-load.js tracewire /f/file-1k.txt 5 /tmp/prof-static
import http from 'node:http';
import autocannon from 'autocannon';
import { createFixtures } from '../lib/fixtures.js';
import { startChild, stopChild } from '../lib/processes.js';

const [kind = 'tracewire', path = '/f/file-1k.txt', seconds = '5', dir = '/tmp/tracewire-prof', conditional] =
    process.argv.slice(2);
const fixtures = await createFixtures();
const server = await startChild('../servers/static.js', [kind, fixtures.directory], {
    execArgv: ['--cpu-prof', '--cpu-prof-interval', '100', `--cpu-prof-dir=${dir}`]
});
const headers = {};
if (conditional === 'conditional') {
    const etag = await new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: server.port, path }, (res) => {
            res.resume();
            resolve(res.headers.etag);
        }).on('error', reject);
    });
    headers['if-none-match'] = etag ?? '"fixed"';
}

const result = await autocannon({
    url: `http://127.0.0.1:${server.port}${path}`,
    headers,
    connections: 32,
    duration: Number(seconds)
});
console.log(`${kind} ${path}: ${(result.requests.total / Number(seconds)).toFixed(0)} req/s`, result.statusCodeStats);
await stopChild(server);
await fixtures.remove();
console.log(`profile written to ${dir}`);
