// One row of the cache rows (sections/client-cache.js) or of the cache-redis section, alone in this process
// against the origin (servers/origin.js) in another: its CPU per call, or under callgrind its instructions.
//   node bench/profile/cache-calls.js <row> [count=5000] [warm-up=5000] [build dir] [callgrind]
// rows: uncached | conditional (a 304 without the cache) | hit | revalidated | redis-hit | undici8-uncached |
// undici8-hit | undici8-revalidated | floor (node:http's floor of a revalidation, lib/cache-rows.js)
// (redis-hit starts a redis-server of its own, as the cache-redis section does). A build directory runs
// another checkout's client. With `cpuprof:<file>` last, V8's CPU profile of the measured calls (not the
// warm-up) is written to <file> (cache-parts.js reads them by part). With `callgrind` last, run it under
// valgrind as client-instructions.js is:
//   valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --callgrind-out-file=/tmp/cg/out.%p \
//     node bench/profile/cache-calls.js revalidated 2000 5000 '' callgrind
//   grep '^summary' /tmp/cg/out.*.1-*   # every thread's count over the measured calls
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';
import { runCalls } from '../lib/calls.js';
import { startChild, stopChild } from '../lib/processes.js';

const [row = 'revalidated', count = '5000', warmUp = '5000', build = '', mode = ''] = process.argv.slice(2);
const concurrency = 10;
const origin = await startChild('../servers/origin.js');
const base = `http://127.0.0.1:${origin.port}`;
const cleanups = [() => stopChild(origin)];

async function freePort() {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address();
    await new Promise((resolve) => server.close(resolve));
    return port;
}

async function startRedis() {
    const port = await freePort();
    const redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore'
    });
    cleanups.push(() => redis.kill('SIGTERM'));
    const { default: Redis } = await import('ioredis');
    const connection = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
    for (let attempt = 0; ; attempt++) {
        try {
            await connection.connect();
            break;
        } catch (error) {
            if (attempt > 50) throw error;
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
    }

    cleanups.unshift(() => connection.quit());
    return connection;
}

async function tracewireCall() {
    const entry = build === '' ? 'tracewire' : pathToFileURL(`${build}/dist/src/index.js`).href;
    const { client, MemoryCacheStore, RedisCacheStore } = await import(entry);
    if (row === 'uncached') {
        return () => client.get(`${base}/small`);
    }

    if (row === 'conditional') {
        // The floor of a revalidation on this client's pipeline: its conditional GET, with no cache.
        return () => client.get(`${base}/revalidated`, { headers: { 'if-none-match': '"v1"' } });
    }

    const store = row === 'redis-hit' ? new RedisCacheStore({ client: await startRedis() }) : new MemoryCacheStore();
    const cached = client.defaults({ cache: { store } });
    const path = row === 'revalidated' ? '/revalidated' : '/cached';
    return () => cached.get(`${base}${path}`);
}

async function undiciCall() {
    const undici = await import('undici8');
    const dispatcher =
        row === 'undici8-uncached'
            ? new undici.Agent()
            : new undici.Agent().compose(
                  undici.interceptors.cache({ store: new undici.cacheStores.MemoryCacheStore() })
              );
    cleanups.unshift(() => dispatcher.close());
    const path = row === 'undici8-uncached' ? '/small' : row === 'undici8-hit' ? '/cached' : '/revalidated';
    return async () => Buffer.from(await (await undici.request(base + path, { dispatcher })).body.arrayBuffer());
}

async function floorCall() {
    const { cacheRowsOf } = await import('../lib/cache-rows.js');
    const { calls, close } = await cacheRowsOf('node:http', origin.port);
    cleanups.unshift(close);
    return calls['raw node:http, the floor of a revalidation (304, stored body)'];
}

/** Starts V8's profiler at 100 µs (its default is 1 ms); returns what stops it and writes the profile. */
async function startProfile(file) {
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    return async () => {
        const { profile } = await session.post('Profiler.stop');
        writeFileSync(file, JSON.stringify(profile));
        session.disconnect();
    };
}

const call =
    row === 'floor' ? await floorCall() : row.startsWith('undici8') ? await undiciCall() : await tracewireCall();
await runCalls(call, Number(warmUp), concurrency);
const stopProfile = mode.startsWith('cpuprof:') ? await startProfile(mode.slice('cpuprof:'.length)) : undefined;
const callgrind = (...args) => execFileSync('callgrind_control', [...args, String(process.pid)], { stdio: 'ignore' });
if (mode === 'callgrind') {
    callgrind('-i', 'on');
    callgrind('-z');
}

const { rate, cpuPerOperation } = await runCalls(call, Number(count), concurrency);
if (mode === 'callgrind') {
    callgrind('-d');
}

await stopProfile?.();

console.log(
    `${row}${build === '' ? '' : ` (${build})`}: ${rate.toFixed(0)} calls/s, ${cpuPerOperation.toFixed(1)} µs CPU per call`
);
for (const cleanup of cleanups) {
    await cleanup();
}

process.exit(0);
