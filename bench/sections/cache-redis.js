// The fleet's cache (docs/cache.md "Running as a fleet"): a fresh hit through RedisCacheStore, without
// and with its local tier, next to a MemoryCacheStore hit and an uncached call, all against the client
// section's origin server (GET /small uncached, /cached fresh for an hour); then how long another
// instance's change takes to reach a local tier, and what a call costs while the server is stopped; then
// what a stampede of 1,000 concurrent calls for one URL nobody has stored costs the origin, with and
// without request coalescing (docs/cache.md "Request coalescing"): in one process on a MemoryCacheStore
// and on a RedisCacheStore, and over four processes sharing the server (children/fleet-member.js).
// Redis is a redis-server of its own (Debian's `redis-server`), on loopback, reached through ioredis.
import { spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { client, MemoryCacheStore, RedisCacheStore } from 'tracewire';
import { CLIENT_CHANNELS } from 'tracewire/client';
import { runCalls } from '../lib/calls.js';
import { ask, startChild, stopChild } from '../lib/processes.js';
import { formatNumber, formatRatio, markdownTable, median, pairedRatio, rotate, verdict } from '../lib/stats.js';

const calls = { count: 5000, concurrency: 10 };

function freePort() {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
}

/** A redis-server on a free port, resolved once it logs that it accepts connections. */
async function startRedis() {
    const port = await freePort();
    const dir = mkdtempSync(join(os.tmpdir(), 'tracewire-bench-redis-'));
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir], {
        stdio: ['ignore', 'pipe', 'pipe']
    });
    let output = '';
    await new Promise((resolve, reject) => {
        child.stdout.on('data', (chunk) => {
            output += chunk;
            if (output.includes('Ready to accept connections')) {
                resolve();
            }
        });
        child.once('error', reject);
        child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
    });
    const stop = async () => {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
        rmSync(dir, { recursive: true, force: true });
    };
    return { port, child, stop };
}

async function connect(port) {
    const redis = new Redis({ host: '127.0.0.1', port });
    redis.on('error', () => {});
    await new Promise((resolve) => redis.once('ready', resolve));
    return redis;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** ms from another instance's change (a delete) until a reader's local tier stops answering with the old entry. */
async function noticeDelays(reader, writer, count) {
    const delays = [];
    for (let i = 0; i < count; i++) {
        const key = `https://example.test/notice/${i}`;
        await writer.set(key, entry());
        await reader.get(key);
        await reader.get(key);
        const started = process.hrtime.bigint();
        await writer.delete(key);
        while ((await reader.get(key)).length > 0) {
            await new Promise((resolve) => setImmediate(resolve));
        }

        delays.push(Number(process.hrtime.bigint() - started) / 1e6);
    }

    return delays;
}

function entry() {
    const now = Date.now();
    return {
        method: 'GET',
        statusCode: 200,
        statusMessage: 'OK',
        rawHeaders: ['Cache-Control', 'max-age=60'],
        vary: undefined,
        body: Buffer.alloc(100, 1),
        requestTime: now,
        responseTime: now,
        deleteAt: now + 60_000
    };
}

/** What calls cost while the server does not answer (SIGSTOP): the first waits for the bound, the next fail at once. */
async function stalledCalls(redis, store) {
    redis.child.kill('SIGSTOP');
    try {
        const durations = [];
        for (let i = 0; i < 20; i++) {
            const started = process.hrtime.bigint();
            await store.get(`https://example.test/stalled/${i}`).catch(() => {});
            durations.push(Number(process.hrtime.bigint() - started) / 1e6);
        }

        return { first: durations[0], rest: median(durations.slice(1)) };
    } finally {
        redis.child.kill('SIGCONT');
        await sleep(200);
    }
}

const stampedeSize = 1000;
const fleetSize = 4;
let stampedes = 0;

/** What the origin got for the stampede on `path`. */
async function originRequests(base, path) {
    const res = await client.get(`${base}/stampede-count/${path}`);
    return Number(String(res.payload));
}

/**
 * One stampede of `stampedeSize` calls made by `run(url)`: the origin requests it cost, ms until every call
 * settled, and the store calls that failed meanwhile (past their bound on the loaded machine, mostly).
 */
async function stampede(base, run) {
    const path = `${++stampedes}`;
    const started = Date.now();
    const { settledAt, failures } = await run(`${base}/stampede/${path}`);
    return { requests: await originRequests(base, path), ms: settledAt - started, failures };
}

/** The stampede rows, `rounds` stampedes each, interleaved. */
async function stampedeRows(base, redisPort, rounds, log) {
    const inProcess = (store, coalesce) => {
        const cached = client.defaults({ cache: { store, coalesce } });
        return async (url) => {
            let failures = 0;
            const count = () => failures++;
            subscribe(CLIENT_CHANNELS.cacheStoreError, count);
            try {
                await Promise.all(Array.from({ length: stampedeSize }, () => cached.get(url)));
            } finally {
                unsubscribe(CLIENT_CHANNELS.cacheStoreError, count);
            }

            return { settledAt: Date.now(), failures };
        };
    };
    const redisClient = await connect(redisPort);
    const redisStore = new RedisCacheStore({ client: redisClient });
    const members = [];
    try {
        for (const coalesce of ['on', 'off']) {
            for (let i = 0; i < fleetSize; i++) {
                members.push({
                    coalesce,
                    member: await startChild('../children/fleet-member.js', [
                        String(redisPort),
                        `stampede-${coalesce}:`,
                        coalesce
                    ])
                });
            }
        }

        const overFleet = (coalesce) => async (url) => {
            const mine = members.filter((member) => member.coalesce === coalesce);
            const count = stampedeSize / fleetSize;
            const settled = await Promise.all(
                mine.map(({ member }) => ask(member.child, { type: 'stampede', url, count }))
            );
            const failures = settled.reduce((sum, answer) => sum + answer.failures, 0);
            return { settledAt: Math.max(...settled.map((answer) => answer.settledAt)), failures };
        };
        const rows = [
            ['MemoryCacheStore, one process, coalescing off', inProcess(new MemoryCacheStore(), false)],
            ['MemoryCacheStore, one process, coalescing on', inProcess(new MemoryCacheStore(), true)],
            ['RedisCacheStore, one process, coalescing off', inProcess(redisStore, false)],
            ['RedisCacheStore, one process, coalescing on', inProcess(redisStore, true)],
            [`RedisCacheStore, ${fleetSize} processes, coalescing off`, overFleet('off')],
            [`RedisCacheStore, ${fleetSize} processes, coalescing on`, overFleet('on')]
        ];
        const samples = Object.fromEntries(rows.map(([name]) => [name, { requests: [], ms: [], failures: [] }]));
        for (let round = 0; round < rounds; round++) {
            for (const [name, run] of rotate(rows, round)) {
                const { requests, ms, failures } = await stampede(base, run);
                samples[name].requests.push(requests);
                samples[name].ms.push(ms);
                samples[name].failures.push(failures);
            }

            log(`  stampede round ${round + 1} done`);
        }

        return markdownTable(
            [
                `a stampede of ${stampedeSize} concurrent GETs of one URL (origin: 100 ms)`,
                'origin requests (median, max)',
                'ms until all settled (median)',
                'store calls failed (median, max)'
            ],
            rows.map(([name]) => [
                name,
                `${median(samples[name].requests)}, ${Math.max(...samples[name].requests)}`,
                formatNumber(median(samples[name].ms)),
                `${median(samples[name].failures)}, ${Math.max(...samples[name].failures)}`
            ])
        );
    } finally {
        for (const { member } of members) {
            await stopChild(member);
        }

        redisStore.close();
        redisClient.disconnect();
    }
}

export async function runCacheRedisSection({ quick, log }) {
    const origin = await startChild('../servers/origin.js');
    const redis = await startRedis();
    const connections = [await connect(redis.port), await connect(redis.port), await connect(redis.port)];
    const [one, two, three] = connections;
    const shared = new RedisCacheStore({ client: one });
    const tiered = new RedisCacheStore({ client: two, localTier: true });
    const writer = new RedisCacheStore({ client: three });
    try {
        while (!tiered.localTierLive) {
            await sleep(5);
        }

        const base = `http://127.0.0.1:${origin.port}`;
        const memory = client.defaults({ cache: { store: new MemoryCacheStore() } });
        const viaRedis = client.defaults({ cache: { store: shared } });
        const viaTier = client.defaults({ cache: { store: tiered } });
        const rows = [
            ['uncached', () => client.get(`${base}/small`)],
            ['MemoryCacheStore hit', () => memory.get(`${base}/cached`)],
            ['RedisCacheStore hit', () => viaRedis.get(`${base}/cached`)],
            ['RedisCacheStore hit, local tier', () => viaTier.get(`${base}/cached`)]
        ];
        const samples = Object.fromEntries(rows.map(([name]) => [name, []]));
        const rounds = quick ? 2 : 5;
        const count = Math.round(calls.count * (quick ? 0.25 : 1));
        for (let round = 0; round <= rounds; round++) {
            for (const [name, call] of rotate(rows, round)) {
                const { rate } = await runCalls(call, round === 0 ? count / 10 : count, calls.concurrency);
                if (round > 0) {
                    samples[name].push(rate);
                }
            }

            log(`  round ${round}${round === 0 ? ' (warm-up)' : ''} done`);
        }

        const ratio = (a, b) => pairedRatio(samples[a], samples[b]);
        const table = markdownTable(
            [
                `${count} GETs of 100 B, concurrency ${calls.concurrency}`,
                'median ops/s',
                'vs uncached',
                'vs memory hit'
            ],
            rows.map(([name]) => [
                name,
                formatNumber(median(samples[name])),
                formatRatio(ratio(name, 'uncached')),
                formatRatio(ratio(name, 'MemoryCacheStore hit'))
            ])
        );

        const delays = await noticeDelays(tiered, writer, quick ? 50 : 200);
        const sorted = [...delays].sort((a, b) => a - b);
        const stalled = await stalledCalls(redis, shared);
        const figures = markdownTable(
            ['fleet figure', 'measured'],
            [
                [
                    "another instance's delete reaching a local tier (median, p99)",
                    `${median(delays).toFixed(2)} ms, ${sorted[Math.floor(sorted.length * 0.99)].toFixed(2)} ms`
                ],
                [
                    `a lookup while the server is stopped: the first (bound ${shared.timeout} ms)`,
                    `${stalled.first.toFixed(1)} ms`
                ],
                ['the lookups after it, until the server answers (median)', `${stalled.rest.toFixed(3)} ms`]
            ]
        );
        const stampedeTable = await stampedeRows(base, redis.port, quick ? 2 : 5, log);
        // One Redis round trip should cost less than one HTTP round trip to a loopback origin (docs/performance.md).
        const redisHit = ratio('RedisCacheStore hit', 'uncached');
        const target = markdownTable(
            ['cache-redis target', 'measured', 'required', 'result'],
            [['RedisCacheStore hit vs an uncached request', formatRatio(redisHit), '≥ 2.00×', verdict(redisHit, 2)]]
        );
        return {
            markdown: `${table}\n\n${target}\n\n${figures}\n\n${stampedeTable}`,
            failures: Number.isFinite(redisHit) && redisHit < 2 ? 1 : 0
        };
    } finally {
        for (const store of [shared, tiered, writer]) {
            store.close();
        }

        for (const connection of connections) {
            connection.disconnect();
        }

        await redis.stop();
        await stopChild(origin);
    }
}
