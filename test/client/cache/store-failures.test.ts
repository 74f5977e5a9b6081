import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { type AddressInfo, connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../../src/client/cache/stores/memory-store.js';
import type { RedisStoreFailure } from '../../../src/client/cache/stores/redis/redis-calls.js';
import { RedisCacheStore } from '../../../src/client/cache/stores/redis/redis-store.js';
import type { CacheStore } from '../../../src/client/contract/cache-store.js';
import { type CacheStoreErrorMessage, CLIENT_CHANNELS } from '../../../src/client/index.js';
import { Client } from '../../../src/client/surface/client.js';
import { isHttpError } from '../../../src/errors/index.js';
import { MockNetwork } from '../../../src/testing/index.js';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { type AppClient, clientKinds, eventually } from './redis-clients.js';

/**
 * docs/cache.md "Store failures": a failed store call never reaches the request, so each is published on
 * `tracewire:client:cacheStoreError` ({ operation, reason, error, store }) for a metric to count, once.
 */

// The origin is a MockNetwork (docs/testing.md): the cache calls its store above the transport seam, for a
// mocked exchange as for one on the network; the stores are real (a real redis-server below).
const origin = 'http://stored.test';
const mock = new MockNetwork();
mock.intercept({ origin, method: () => true })
    .reply(200, 'origin', { 'cache-control': 'max-age=60' })
    .persist();
const published: CacheStoreErrorMessage[] = [];
const listener = (message: unknown) => published.push(message as CacheStoreErrorMessage);
afterAll(() => {
    mock.close();
});
afterEach(() => {
    unsubscribe(CLIENT_CHANNELS.cacheStoreError, listener);
    published.length = 0;
});

let paths = 0;
function url(): string {
    return `${origin}/f${++paths}`;
}

describe('Cache: store failures on tracewire:client:cacheStoreError', () => {
    it('a store that throws, rejects or does not answer in time: one message per failed call, the call answered', async () => {
        const cases: [CacheStore, CacheStoreErrorMessage['reason'], RegExp][] = [
            [
                {
                    get: () => {
                        throw new Error('sync');
                    },
                    set: () => {
                        throw new Error('sync');
                    },
                    delete: () => {
                        throw new Error('sync');
                    }
                },
                'error',
                /^The cache store's (get|set) failed: sync$/
            ],
            [
                {
                    get: () => Promise.reject(new Error('async')),
                    set: () => Promise.reject(new Error('async')),
                    delete: () => Promise.reject(new Error('async'))
                },
                'error',
                /^The cache store's (get|set) failed: async$/
            ],
            [
                { get: () => new Promise(() => {}), set: () => new Promise(() => {}), delete: async () => {} },
                'timeout',
                /^The cache store's (get|set) did not answer within the cache's bound \(250 ms\)$/
            ]
        ];
        subscribe(CLIENT_CHANNELS.cacheStoreError, listener);
        for (const [store, reason, message] of cases) {
            published.length = 0;
            const client = new Client().defaults({ mock, cache: { store } });
            expect(String((await client.get(url())).payload)).toBe('origin');
            expect(published.map((m) => m.operation)).toStrictEqual(['get', 'set']);
            for (const failure of published) {
                expect(failure.reason).toBe(reason);
                expect(failure.store).toBe(store);
                expect(isHttpError(failure.error, 500)).toBe(true);
                expect(failure.error.message).toMatch(message);
            }
        }
    });

    it('a store answer waiting in a socket as a blocked loop turn ends is in time, not taken for a timeout', async () => {
        // A store whose every answer comes back through a loopback socket, as a networked store's does.
        const echo = createServer((socket) => socket.pipe(socket));
        await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
        const socket = connect((echo.address() as AddressInfo).port, '127.0.0.1');
        await once(socket, 'connect');
        const inner = new MemoryCacheStore();
        const answers: (() => void)[] = [];
        socket.on('data', (data: Buffer) => {
            for (let i = 0; i < data.length; i++) {
                answers.shift()?.();
            }
        });
        const overSocket = <T>(value: () => Promise<T>) =>
            new Promise<T>((resolve) => {
                answers.push(() => resolve(value()));
                socket.write('.');
            });
        const store: CacheStore = {
            get: (key) => overSocket(() => inner.get(key)),
            set: (key, entry) => overSocket(() => inner.set(key, entry)),
            delete: (key) => overSocket(() => inner.delete(key))
        };
        try {
            const client = new Client().defaults({ mock, cache: { store } });
            const target = url();
            await client.get(target);
            subscribe(CLIENT_CHANNELS.cacheStoreError, listener);
            // A fresh window of the cache's shared bound (250 ms), then a call, then a loop turn blocked past it.
            await sleep(300);
            const hit = client.get(target);
            const blockedUntil = Date.now() + 400;
            while (Date.now() < blockedUntil) {
                // The echo arrives meanwhile, and waits in the socket.
            }

            expect((await hit).res.headers['cache-status']).toMatch(/^tracewire; hit/);
            expect(published).toStrictEqual([]);
        } finally {
            socket.destroy();
            echo.close();
        }
    });

    it('storeTimeout sets the bound: a store slower than 250 ms but within it answers, one slower still does not', async () => {
        // A memory store whose every call takes 400 ms.
        const memory = new MemoryCacheStore();
        const slow: CacheStore = {
            get: (key) => sleep(400).then(() => memory.get(key)),
            set: (key, entry) => sleep(400).then(() => memory.set(key, entry)),
            delete: (key) => sleep(400).then(() => memory.delete(key))
        };
        subscribe(CLIENT_CHANNELS.cacheStoreError, listener);
        const patient = new Client().defaults({ mock, cache: { store: slow, storeTimeout: 2_000 } });
        const path = url();
        expect((await patient.get(path)).res.headers['cache-status']).toMatch(/fwd=miss; .*stored/);
        expect((await patient.get(path)).res.headers['cache-status']).toMatch(/tracewire; hit/);
        expect(published).toStrictEqual([]);

        // With the default bound the same store is too slow: a lookup counts as a miss, and says so.
        const hasty = new Client().defaults({ mock, cache: { store: slow } });
        expect((await hasty.get(path)).res.headers['cache-status']).toMatch(/fwd=miss/);
        expect(published.map(({ operation, reason }) => `${operation} ${reason}`)).toContain('get timeout');
        expect(published[0]?.error.message).toMatch(/within the cache's bound \(250 ms\)/);
    });

    it('refuses a storeTimeout that is not a positive integer of milliseconds, naming it', async () => {
        for (const storeTimeout of [0, -1, 1.5, '100']) {
            const err = await new Client()
                .get(url(), { mock, cache: { storeTimeout } as never })
                .catch((e: unknown) => e);
            expect(isHttpError(err) && err.message).toBe(
                'Option cache.storeTimeout must be a positive integer of milliseconds'
            );
        }
    });

    it('nothing is published, and nothing breaks, without a subscriber', async () => {
        const store: CacheStore = {
            get: () => Promise.reject(new Error('async')),
            set: () => Promise.reject(new Error('async')),
            delete: () => Promise.reject(new Error('async'))
        };
        const client = new Client().defaults({ mock, cache: { store } });
        expect(String((await client.get(url())).payload)).toBe('origin');
        expect(published).toStrictEqual([]);
    });

    describe('RedisCacheStore', () => {
        let redis: RedisServer;
        let app: AppClient;
        beforeAll(async () => {
            redis = await startRedis();
            app = await clientKinds[0]!.connect(redis.port);
        }, 30_000);
        afterAll(async () => {
            app?.disconnect();
            await redis?.stop();
        });

        it('publishes each of its failures once, with its own reason, whether or not onError is given; the cache adds no second', async () => {
            const failures: RedisStoreFailure[] = [];
            const watched = new RedisCacheStore({ client: app, onError: (failure) => failures.push(failure) });
            const unwatched = new RedisCacheStore({ client: app, keyPrefix: 'other:' });
            subscribe(CLIENT_CHANNELS.cacheStoreError, listener);
            await redis.kill();
            await eventually(() => app.status !== 'ready');
            try {
                for (const store of [watched, unwatched]) {
                    published.length = 0;
                    // The cache's own bound far above the store's, so that a loaded machine's late timer
                    // cannot make the cache give up first: each failure here is the store's to publish.
                    const client = new Client().defaults({ mock, cache: { store, storeTimeout: 5_000 } });
                    expect(String((await client.get(url())).payload)).toBe('origin');
                    // The lookup, the fill lock of request coalescing, the write.
                    expect(published.map((m) => [m.operation, m.reason])).toStrictEqual([
                        ['get', 'unavailable'],
                        ['lockFill', 'unavailable'],
                        ['set', 'unavailable']
                    ]);
                    for (const failure of published) {
                        expect(failure.store).toBe(store);
                        expect(failure.error.message).toMatch(
                            /^RedisCacheStore (get|lockFill|set) not sent: the client is /
                        );
                    }

                    if (store === watched) {
                        // The hook hears of the very failures published.
                        expect(failures.map((failure) => failure.error)).toStrictEqual(published.map((m) => m.error));
                    }
                }
            } finally {
                watched.close();
                unwatched.close();
                await redis.restart();
            }
        });
    });
});
