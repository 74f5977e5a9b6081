import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RedisStoreFailure } from '../../../src/client/cache/stores/redis/redis-calls.js';
import { RedisCacheStore } from '../../../src/client/cache/stores/redis/redis-store.js';
import { Client } from '../../../src/client/surface/client.js';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { clientKinds, eventually } from './redis-clients.js';
import { cachedResponse } from './store-contract.js';

/**
 * A RedisCacheStore whose server goes away, comes back empty or stops answering (docs/cache.md
 * "Running as a fleet", faults): no call fails or stalls past the store's bound, nothing is lost but
 * hits, nothing is left behind, and no error escapes (the application's client has its own error
 * listener, as ioredis asks; the store's own connection must print nothing).
 */

let origin: Server;
let base: string;
beforeAll(async () => {
    origin = createServer((req, res) => {
        res.setHeader('Cache-Control', 'max-age=600');
        res.end(`body of ${req.url}`);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => origin.close(resolve)));

// What would escape: a rejection nobody handled, an error printed for want of a listener.
const escaped: unknown[] = [];
const onUnhandled = (reason: unknown) => escaped.push(reason);
let printed: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
    escaped.length = 0;
    process.on('unhandledRejection', onUnhandled);
    printed = vi.spyOn(console, 'error');
});
afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
    const messages = printed.mock.calls.map((args: unknown[]) => args.join(' '));
    printed.mockRestore();
    expect(escaped).toStrictEqual([]);
    expect(messages.filter((line: string) => line.includes('Unhandled error event'))).toStrictEqual([]);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const kind of clientKinds) {
    describe(`RedisCacheStore on ${kind.name}, faults`, () => {
        let redis: RedisServer;
        beforeEach(async () => {
            redis = await startRedis();
        }, 30_000);
        afterEach(async () => {
            await redis.stop();
        });

        for (const localTier of [false, true]) {
            it(`the server killed and restarted mid-run${localTier ? ', with the local tier' : ''}: every call answered in time, nothing lost but hits, hits again once it is back`, async () => {
                const client = await kind.connect(redis.port);
                const failures: RedisStoreFailure[] = [];
                const store = new RedisCacheStore({
                    client,
                    timeout: 100,
                    localTier: localTier ? { heartbeat: 100 } : false,
                    onError: (failure) => failures.push(failure)
                });
                const cached = new Client().defaults({ cache: { store } });
                const urls = Array.from({ length: 8 }, (_, i) => `${base}/item/${i}`);
                const phases: Record<'before' | 'down' | 'back', { calls: number; hits: number; slowest: number }> = {
                    before: { calls: 0, hits: 0, slowest: 0 },
                    down: { calls: 0, hits: 0, slowest: 0 },
                    back: { calls: 0, hits: 0, slowest: 0 }
                };
                let phase: keyof typeof phases = 'before';
                let running = true;
                const callers = Array.from({ length: 4 }, async (_, worker) => {
                    for (let i = worker; running; i++) {
                        const url = urls[i % urls.length]!;
                        const started = Date.now();
                        const { res, payload } = await cached.get(url);
                        const record = phases[phase];
                        record.calls++;
                        record.slowest = Math.max(record.slowest, Date.now() - started);
                        record.hits += /; hit/.test(String(res.headers['cache-status'])) ? 1 : 0;
                        expect(res.statusCode).toBe(200);
                        expect(String(payload)).toBe(`body of ${new URL(url).pathname}`);
                        await sleep(2);
                    }
                });
                try {
                    // Phases by progress, not by time: a loaded machine makes slow starts.
                    await eventually(() => phases.before.hits > 20, 10_000);
                    phase = 'down';
                    await redis.kill();
                    await eventually(() => phases.down.calls > 40, 10_000);
                    await redis.restart();
                    phase = 'back';
                    await eventually(() => phases.back.hits > 20, 10_000);
                } finally {
                    running = false;
                    await Promise.all(callers);
                    store.close();
                    client.disconnect();
                }

                console.log(`${kind.name}${localTier ? ' + local tier' : ''}: ${JSON.stringify(phases)}`);
                for (const record of Object.values(phases)) {
                    expect(record.calls).toBeGreaterThan(0);
                    // The store's bound (100 ms) and the guard's, plus a loopback origin: never a stall. 2 s: a
                    // loaded CI line's event loop alone made one call of a thousand take 1,068 ms; a stall would
                    // hold the calls until the server is back (the phases above wait for progress, 10 s at most).
                    expect(record.slowest).toBeLessThan(2_000);
                }

                expect(phases.before.hits).toBeGreaterThan(0);
                expect(failures.length).toBeGreaterThan(0);
                for (const failure of failures) {
                    expect(['timeout', 'unavailable', 'error']).toContain(failure.reason);
                }
            }, 30_000);
        }

        it('a server that stops answering (SIGSTOP): each call rejects within the bound, the next ones at once, and all go on once it answers again', async () => {
            const client = await kind.connect(redis.port);
            const failures: RedisStoreFailure[] = [];
            const store = new RedisCacheStore({ client, timeout: 100, onError: (f) => failures.push(f) });
            const cached = new Client().defaults({ cache: { store } });
            try {
                await store.set('k', cachedResponse());
                await cached.get(`${base}/slow`);
                redis.pause();
                let started = Date.now();
                await expect(store.get('k')).rejects.toThrow(/^RedisCacheStore get took longer than 100 ms$/);
                const first = Date.now() - started;
                expect(first).toBeGreaterThanOrEqual(95);
                expect(first).toBeLessThan(500);
                for (const call of [store.get('k'), store.set('k', cachedResponse()), store.delete('k')]) {
                    started = Date.now();
                    await expect(call).rejects.toThrow(/not sent: an earlier command is unanswered after 100 ms$/);
                    expect(Date.now() - started).toBeLessThan(50);
                }

                // Through the cache: answered by the origin, with no wait on the store at all.
                started = Date.now();
                const answer = await cached.get(`${base}/slow`);
                expect(answer.res.headers['cache-status']).toMatch(/fwd=miss/);
                expect(Date.now() - started).toBeLessThan(500);
                expect(new Set(failures.map((f) => f.reason))).toStrictEqual(new Set(['timeout', 'unavailable']));
            } finally {
                redis.resume();
            }

            await eventually(async () => (await store.get('k').catch(() => undefined)) !== undefined);
            expect(await store.get('k')).toHaveLength(1);
            store.close();
            client.disconnect();
        });

        it('a client still connecting: the calls made meanwhile wait for it and are sent once it is ready, the fill lock taken', async () => {
            // Loaded first, as in a service that has taken traffic: the calls below are made before the client connects.
            await import('../../../src/client/cache/stores/redis/redis-engine.js');
            for (let round = 0; round < 3; round++) {
                const client = kind.create(redis.port);
                const failures: RedisStoreFailure[] = [];
                // A bound far above a connect on a loaded machine: what this test holds is that the calls wait
                // for the connection (the bound itself is the next test's).
                const store = new RedisCacheStore({
                    client,
                    timeout: 2_000,
                    onError: (failure) => failures.push(failure)
                });
                const statuses = [client.status];
                const calls = Promise.all([
                    store.lockFill(`cold${round}`, 1_000),
                    store.get(`cold${round}`),
                    store.set(`cold${round}`, cachedResponse())
                ]);
                await Promise.resolve();
                statuses.push(client.status);
                const [lock, found, stored] = await calls;
                expect(statuses).toStrictEqual(['connecting', 'connecting']);
                expect(lock.acquired).toBe(true);
                expect(found).toStrictEqual([]);
                expect(stored).toBe(true);
                expect(failures).toStrictEqual([]);
                store.close();
                client.disconnect();
            }
        });

        it('a server that does not answer while the client connects: the first call fails at the bound saying "connecting", the next at once, all go once it answers', async () => {
            await import('../../../src/client/cache/stores/redis/redis-engine.js');
            // Stopped, the server's socket still takes connections: the client connects and waits for its ready check.
            redis.pause();
            const client = kind.create(redis.port);
            const failures: RedisStoreFailure[] = [];
            const store = new RedisCacheStore({ client, timeout: 100, onError: (f) => failures.push(f) });
            const cached = new Client().defaults({ cache: { store } });
            try {
                let started = Date.now();
                await expect(store.get('k')).rejects.toThrow(
                    /^RedisCacheStore get not sent: the client is still connecting after 100 ms$/
                );
                expect(Date.now() - started).toBeGreaterThanOrEqual(95);
                expect(Date.now() - started).toBeLessThan(500);
                for (const call of [store.get('k'), store.set('k', cachedResponse()), store.lockFill('k', 100)]) {
                    started = Date.now();
                    await expect(call).rejects.toThrow(/ not sent: the client is connecting$/);
                    expect(Date.now() - started).toBeLessThan(50);
                }

                // Through the cache: answered by the origin at once, and not said to be stored.
                started = Date.now();
                const { res } = await cached.get(`${base}/connecting`);
                expect(Date.now() - started).toBeLessThan(500);
                expect(res.headers['cache-status']).toMatch(
                    /^tracewire; fwd=miss; fwd-status=200; ttl=\d+; detail=store-error$/
                );
                expect(new Set(failures.map((f) => f.reason))).toStrictEqual(new Set(['unavailable']));
                for (const failure of failures) {
                    expect(failure.error.message).not.toMatch(/ is (connect|reconnecting|wait|ready|close|end)\b/);
                }
            } finally {
                redis.resume();
            }

            await eventually(async () => (await store.get('k').catch(() => undefined)) !== undefined);
            const { res } = await cached.get(`${base}/connecting`);
            expect(res.headers['cache-status']).toMatch(/^tracewire; fwd=miss; fwd-status=200; stored; ttl=/);
            expect((await cached.get(`${base}/connecting`)).res.headers['cache-status']).toMatch(/^tracewire; hit/);
            store.close();
            client.disconnect();
        });

        it('a lazy client not yet connected: its first call connects it; one told not to queue works once connected', async () => {
            for (const options of [{ lazyConnect: true }, { lazyConnect: true, enableOfflineQueue: false }]) {
                const lazy = kind.create(redis.port, options);
                const store = new RedisCacheStore({ client: lazy, timeout: 1_000 });
                const entry = cachedResponse();
                await eventually(() =>
                    store.set('k', entry).then(
                        () => true,
                        () => false
                    )
                );
                expect(await store.get('k')).toStrictEqual([entry]);
                store.close();
                lazy.disconnect();
            }
        });

        it('leaves no timer and no socket behind once closed, after its server went away and came back', async () => {
            const resources = () => {
                const info = process.getActiveResourcesInfo();
                return info.filter((name) => name === 'Timeout' || name === 'TCPSocketWrap').length;
            };
            const before = resources();
            const client = await kind.connect(redis.port);
            const store = new RedisCacheStore({ client, timeout: 100, localTier: { heartbeat: 50 } });
            await eventually(() => store.localTierLive);
            await store.set('k', cachedResponse());
            await redis.kill();
            await store.get('k').catch(() => {});
            await redis.restart();
            await eventually(() => store.localTierLive, 10_000);
            await store.get('k');
            store.close();
            client.disconnect();
            await eventually(() => resources() <= before, 5_000);
        });
    });
}
