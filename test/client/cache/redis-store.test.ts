import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisStoreFailure } from '../../../src/client/cache/stores/redis/redis-calls.js';
import type { RedisCacheClient } from '../../../src/client/cache/stores/redis/redis-client.js';
import { DecodedEntries, encodedHead } from '../../../src/client/cache/stores/redis/redis-entry.js';
import { RedisCacheStore } from '../../../src/client/cache/stores/redis/redis-store.js';
import { RedisCacheStore as FromClient } from '../../../src/client/index.js';
import { Client } from '../../../src/client/surface/client.js';
import { isHttpError } from '../../../src/errors/index.js';
import { RedisCacheStore as FromRoot } from '../../../src/index.js';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { type AppClient, clientKinds, clusterSlot } from './redis-clients.js';
import { cachedResponse, describeCacheStore } from './store-contract.js';

const MiB = 2 ** 20;

let redis: RedisServer;
const clients: AppClient[] = [];
const stores: RedisCacheStore[] = [];
beforeAll(async () => {
    redis = await startRedis();
}, 30_000);
afterAll(async () => {
    for (const store of stores) {
        store.close();
    }

    for (const client of clients) {
        client.disconnect();
    }

    await redis?.stop();
});

let prefixes = 0;
/** A prefix no other test of the file uses: the tests share one server. */
function freshPrefix(): string {
    return `test${++prefixes}:`;
}

async function connect(kind = clientKinds[0]!): Promise<AppClient> {
    const client = await kind.connect(redis.port);
    clients.push(client);
    return client;
}

function storeOn(client: AppClient, options: Omit<ConstructorParameters<typeof RedisCacheStore>[0], 'client'> = {}) {
    const store = new RedisCacheStore({ client, keyPrefix: freshPrefix(), ...options });
    stores.push(store);
    return store;
}

function idOf(key: string): string {
    return createHash('sha256').update(key).digest('base64url');
}

for (const kind of clientKinds) {
    let client: AppClient;
    beforeAll(async () => {
        client = await connect(kind);
    });
    // A generous timeout: the suite stores 20 MiB bodies on a loaded machine.
    describeCacheStore(
        `RedisCacheStore on ${kind.name}`,
        (bounds) => new RedisCacheStore({ client, keyPrefix: freshPrefix(), timeout: 10_000, ...bounds }),
        (store) => (store as RedisCacheStore).close(),
        { totalBounds: 'server' }
    );
    describeCacheStore(
        `RedisCacheStore on ${kind.name} with its local tier`,
        (bounds) =>
            new RedisCacheStore({ client, keyPrefix: freshPrefix(), timeout: 10_000, localTier: true, ...bounds }),
        (store) => (store as RedisCacheStore).close(),
        { totalBounds: 'server' }
    );
}

describe('RedisCacheStore', () => {
    it('is exported from tracewire and tracewire/client', () => {
        expect(FromRoot).toBe(RedisCacheStore);
        expect(FromClient).toBe(RedisCacheStore);
    });

    it('takes the clients of ioredis and iovalkey, Redis and Cluster alike, as they are typed', async () => {
        const { Redis: IORedis, Cluster } = await import('ioredis');
        const { Redis: IORedis5, Cluster: Cluster5 } = await import('ioredis5');
        const { Valkey, Cluster: ValkeyCluster } = await import('iovalkey');
        // Type-checked (npm run typecheck): each is a RedisCacheClient without a cast.
        const accepted: ((client: RedisCacheClient) => void)[] = [];
        const take = (client: RedisCacheClient) => accepted.push(() => client);
        const lazy = { lazyConnect: true };
        take(new IORedis(lazy));
        take(new IORedis5(lazy));
        take(new Cluster5([], lazy));
        take(new Valkey(lazy));
        take(new Cluster([], lazy));
        take(new ValkeyCluster([], lazy));
        expect(accepted).toHaveLength(6);
    });

    describe('options: a 500 HttpError naming the option', () => {
        it.each([
            [undefined, 'RedisCacheStore options must be an object with a client'],
            [
                { client: undefined },
                'Option client must be an ioredis or iovalkey client (status, hgetallBuffer, eval, publish, duplicate)'
            ],
            [{ client: { status: 'ready' } }, 'Option client must be an ioredis or iovalkey client'],
            [
                { keyPrefix: 'a{b}:' },
                'Option keyPrefix must be a string without { or } (the store adds its own hash tags)'
            ],
            [{ keyPrefix: 7 }, 'Option keyPrefix must be a string'],
            [{ maxEntrySize: 0 }, 'Option maxEntrySize must be a positive integer up to 536870912'],
            [{ maxEntrySize: 2 ** 30 }, 'Option maxEntrySize must be a positive integer up to 536870912'],
            [{ maxVariants: 1.5 }, 'Option maxVariants must be a positive integer up to 1024'],
            [{ timeout: -1 }, 'Option timeout must be a positive integer up to 60000'],
            [{ localTier: 'yes' }, 'Option localTier must be a boolean or an object of bounds'],
            [{ localTier: { maxSize: 0 } }, 'Option localTier.maxSize must be a positive integer'],
            [
                { localTier: { heartbeat: 'often' } },
                'Option localTier.heartbeat must be a positive integer up to 60000'
            ],
            [{ onError: 'log' }, 'Option onError must be a function']
        ])('%j', async (options, message) => {
            const client = options === undefined || 'client' in options ? undefined : await connect();
            const given = options === undefined ? undefined : { client, ...options };
            let thrown: unknown;
            try {
                new RedisCacheStore(given as never);
            } catch (err) {
                thrown = err;
            }

            expect(isHttpError(thrown, 500)).toBe(true);
            expect((thrown as Error).message).toContain(message);
        });

        it('null or undefined means not set: the defaults', async () => {
            const store = storeOn(await connect(), {
                maxEntrySize: null,
                maxVariants: undefined,
                timeout: null,
                localTier: null,
                onError: null
            });
            expect(store).toMatchObject({ maxEntrySize: MiB, maxVariants: 16, timeout: 100 });
            expect(store.localTierLive).toBe(false);
            expect(new RedisCacheStore({ client: await connect() }).keyPrefix).toBe('tracewire:cache:');
        });
    });

    describe('the key layout (docs/cache.md "Running as a fleet")', () => {
        it("one hash per cache key, named by the key's SHA-256 as a hash tag, its variants as fields", async () => {
            const client = await connect();
            const store = storeOn(client);
            const key = 'https://example.test/a?x={1}';
            await store.set(key, cachedResponse({ vary: { accept: 'text/html' } }));
            await store.set(key, cachedResponse());
            const hash = `${store.keyPrefix}{${idOf(key)}}`;
            expect(await client.keys(`${store.keyPrefix}*`)).toStrictEqual([hash]);
            const fields: string[] = (await client.hkeys(hash)).sort();
            expect(fields).toHaveLength(4);
            expect(fields.filter((field) => field.startsWith('b:'))).toHaveLength(2);
            expect(fields.filter((field) => field.startsWith('m:'))).toHaveLength(2);
            expect(fields).toContain('b:none');
        });

        it('every key of one cache key is in one Cluster slot, and cache keys spread over the slots', async () => {
            const store = storeOn(await connect());
            const slots = new Set<number>();
            for (let i = 0; i < 200; i++) {
                const id = idOf(`https://example.test/${i}`);
                const keys = [`{${id}}`, `{${id}}:lock`, `{${id}}:pass`].map((key) => store.keyPrefix + key);
                const [slot, ...others] = keys.map(clusterSlot);
                expect(others).toStrictEqual([slot, slot]);
                slots.add(slot!);
            }

            expect(slots.size).toBeGreaterThan(190);
        });

        it('the hash expires on the server with the last useful variant (PEXPIREAT)', async () => {
            const client = await connect();
            const store = storeOn(client);
            const deleteAt = Date.now() + 60_000;
            await store.set('k', cachedResponse({ deleteAt, vary: { accept: 'a' } }));
            await store.set('k', cachedResponse({ deleteAt: deleteAt - 30_000, vary: { accept: 'b' } }));
            const hash = `${store.keyPrefix}{${idOf('k')}}`;
            expect(Number(await client.call('PEXPIRETIME', hash))).toBe(deleteAt);

            const soon = Date.now() + 300;
            await store.set('soon', cachedResponse({ deleteAt: soon }));
            await new Promise((resolve) => setTimeout(resolve, soon - Date.now() + 50));
            expect(await client.exists(`${store.keyPrefix}{${idOf('soon')}}`)).toBe(0);
        });

        it('past maxVariants the oldest stored variants go; expired ones go with the next store', async () => {
            const client = await connect();
            const store = storeOn(client, { maxVariants: 3 });
            const entries = Array.from({ length: 5 }, (_, i) => cachedResponse({ vary: { accept: `type/${i}` } }));
            for (const entry of entries) {
                await store.set('k', entry);
            }

            expect(await store.get('k')).toStrictEqual(entries.slice(2).reverse());
            const hash = `${store.keyPrefix}{${idOf('k')}}`;
            expect(await client.hlen(hash)).toBe(6);

            await store.set('e', cachedResponse({ vary: { accept: 'old' }, deleteAt: Date.now() + 100 }));
            await new Promise((resolve) => setTimeout(resolve, 150));
            await store.set('e', cachedResponse({ vary: { accept: 'new' } }));
            expect(await client.hlen(`${store.keyPrefix}{${idOf('e')}}`)).toBe(2);
        });

        it('a value of another layout, or one naming another cache key, is skipped, not misread', async () => {
            const client = await connect();
            const store = storeOn(client);
            const entry = cachedResponse();
            await store.set('k', entry);
            const hash = `${store.keyPrefix}{${idOf('k')}}`;
            const stored = (await client.hgetallBuffer(hash))['b:none']!;
            await client.hset(
                hash,
                'b:other',
                Buffer.concat([Buffer.from([9]), stored.subarray(1)]),
                'm:other',
                '7 9999999999999'
            );
            const foreign = Buffer.from(stored.toString('latin1').replace('"k"', '"j"'), 'latin1');
            await client.hset(hash, 'b:foreign', foreign, 'm:foreign', '8 9999999999999');
            await client.hset(
                hash,
                'b:broken',
                Buffer.from([1, 0, 0, 0, 3, 0x7b, 0x7b, 0x7b]),
                'm:broken',
                '9 9999999999999'
            );
            expect(await store.get('k')).toStrictEqual([entry]);
        });
    });

    describe('bounds', () => {
        // Redis's LRU is approximate, by samples and a clock of one second: which of the entries stored in
        // the same second go is its choice; what is certain is the bound, and the entry stored last.
        it('the server bounds the total: a server at its maxmemory (volatile-lru) evicts to stay within it, every store resolves', async () => {
            const small = await startRedis({ args: ['--maxmemory', '4mb', '--maxmemory-policy', 'volatile-lru'] });
            try {
                const client = await clientKinds[0]!.connect(small.port);
                const store = new RedisCacheStore({ client, timeout: 5_000 });
                const body = Buffer.alloc(100_000, 7);
                for (let i = 0; i < 200; i++) {
                    await store.set(`https://example.test/${i}`, cachedResponse({ body }));
                }

                const info = await client.info('memory');
                const used = Number(/used_memory:(\d+)/.exec(info)![1]);
                expect(used).toBeLessThanOrEqual(4 * MiB + 200_000);
                expect(await store.get('https://example.test/199')).toHaveLength(1);
                let kept = 0;
                for (let i = 0; i < 200; i++) {
                    kept += (await store.get(`https://example.test/${i}`)).length;
                }

                // No more than the bound holds.
                expect(kept).toBeGreaterThan(0);
                expect(kept).toBeLessThanOrEqual(Math.floor((4 * MiB + 200_000) / body.length));
                client.disconnect();
            } finally {
                await small.stop();
            }
        });
    });

    describe('what one call stores, the next finds', () => {
        it("a lookup sent after a store on the same client finds it, even before the store's promise settled (sent in order on one connection)", async () => {
            // The order is what this holds, not the bound: a loaded machine took longer than the default 100 ms.
            const store = storeOn(await connect(), { timeout: 5_000 });
            for (let i = 0; i < 50; i++) {
                const entry = cachedResponse();
                void store.set(`k${i}`, entry);
                expect(await store.get(`k${i}`)).toStrictEqual([entry]);
            }
        });

        it('what one instance stores, deletes or updates (a 304), another instance on its own connection finds next', async () => {
            const prefix = freshPrefix();
            const one = new RedisCacheStore({
                client: await connect(clientKinds[0]),
                keyPrefix: prefix,
                timeout: 5_000
            });
            const other = new RedisCacheStore({
                client: await connect(clientKinds[2]),
                keyPrefix: prefix,
                timeout: 5_000
            });
            const entry = cachedResponse();
            await one.set('k', entry);
            expect(await other.get('k')).toStrictEqual([entry]);
            const updated = { ...entry, rawHeaders: [...entry.rawHeaders, 'X-Updated', '1'] };
            await other.set('k', updated);
            expect(await one.get('k')).toStrictEqual([updated]);
            await one.delete('k');
            expect(await other.get('k')).toStrictEqual([]);
        });
    });

    describe('failures', () => {
        it('an entry it cannot encode rejects with an HttpError naming the store, reported to onError', async () => {
            const failures: RedisStoreFailure[] = [];
            const store = storeOn(await connect(), { onError: (failure) => failures.push(failure) });
            const stored = store.set('k', { ...cachedResponse(), body: undefined } as never);
            expect(stored).toBeInstanceOf(Promise);
            const err = await stored.catch((e: unknown) => e);
            expect(isHttpError(err, 500)).toBe(true);
            expect((err as Error).message).toMatch(/^RedisCacheStore set failed: /);
            expect(failures).toMatchObject([{ operation: 'set', reason: 'error', error: err }]);
        });

        it('a server error (a script refused) rejects naming the store and the cause; a throwing onError is ignored', async () => {
            const client = await connect();
            const store = storeOn(client, {
                onError: () => {
                    throw new Error('the hook failed');
                }
            });
            // A key of the store's layout holding a string: the server refuses HKEYS on it.
            await client.set(`${store.keyPrefix}{${idOf('k')}}`, 'not a hash');
            const err = await store.set('k', cachedResponse()).catch((e: unknown) => e);
            expect(isHttpError(err, 500)).toBe(true);
            expect((err as Error).message).toMatch(/^RedisCacheStore set failed: .*WRONGTYPE/);
            await expect(store.get('k')).rejects.toThrow(/^RedisCacheStore get failed: WRONGTYPE/);
        });

        it('after close() calls reject naming the store; close() again does nothing', async () => {
            const store = storeOn(await connect(), { localTier: true });
            store.close();
            store.close();
            for (const call of [store.get('k'), store.set('k', cachedResponse()), store.delete('k')]) {
                const err = await call.catch((e: unknown) => e);
                expect(isHttpError(err, 500)).toBe(true);
                expect((err as Error).message).toBe('RedisCacheStore is closed');
            }

            await expect(store.lockFill('k', 100)).rejects.toThrow('RedisCacheStore is closed');
        });
    });

    describe('behind the cache of a client', () => {
        let origin: Server;
        let url: string;
        let requests = 0;
        beforeAll(async () => {
            origin = createServer((req, res) => {
                requests++;
                if (req.method === 'POST') {
                    res.end('posted');
                    return;
                }

                res.setHeader('Cache-Control', 'max-age=60');
                res.end(`answer ${requests}`);
            });
            await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
            url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/item`;
        });
        afterAll(() => new Promise((resolve) => origin.close(resolve)));

        it('a response one instance fetched is a hit for another; a POST on a third invalidates it for all', async () => {
            const prefix = freshPrefix();
            const instances = await Promise.all(
                [0, 1, 2].map(async (kind) => {
                    const store = new RedisCacheStore({ client: await connect(clientKinds[kind]), keyPrefix: prefix });
                    stores.push(store);
                    return new Client().defaults({ cache: { store, shared: true } });
                })
            );
            const [first, second, third] = instances as [Client, Client, Client];
            const before = requests;
            const fetched = await first.get(url);
            expect(fetched.res.headers['cache-status']).toMatch(/fwd=miss; fwd-status=200; stored/);
            // The layer stores without awaiting: a round trip of that store after the call has its write behind it.
            await stores.at(-3)!.get('nothing');
            const hit = await second.get(url);
            expect(hit.res.headers['cache-status']).toMatch(/^tracewire; hit/);
            expect(String(hit.payload)).toBe(String(fetched.payload));
            expect(requests - before).toBe(1);

            await third.post(url, { payload: 'change' });
            for (const instance of instances) {
                const after = await instance
                    .get(url, { headers: { 'cache-control': 'only-if-cached' } })
                    .catch((err: { output: { statusCode: number } }) => err.output.statusCode);
                expect(after).toBe(504);
            }
        });
    });
});

describe('RedisCacheStore lookups read back what they decoded before', () => {
    it('a lookup that reads the same bytes again gets the same entry; one written anew, by any instance, is decoded anew', async () => {
        const client = await connect();
        const prefix = freshPrefix();
        const store = new RedisCacheStore({ client, keyPrefix: prefix });
        const other = new RedisCacheStore({ client: await connect(), keyPrefix: prefix });
        stores.push(store, other);
        const key = 'http://example.test/decoded';
        await store.set(key, cachedResponse({ body: Buffer.from('first') }));
        const [first] = await store.get(key);
        const [again] = await store.get(key);
        // The cache's rules keep what they work out per entry object: the same object is read once.
        expect(again).toBe(first);
        expect(again!.body.toString()).toBe('first');

        await other.set(key, cachedResponse({ body: Buffer.from('second') }));
        const [rewritten] = await store.get(key);
        expect(rewritten).not.toBe(first);
        expect(rewritten!.body.toString()).toBe('second');
        expect(first!.body.toString()).toBe('first');
    });

    it("one caller's change to the entry it got never reaches the next lookup: the entry is frozen, a body written to is decoded anew", async () => {
        const client = await connect();
        const store = storeOn(client);
        const key = 'http://example.test/shared-entry';
        await store.set(key, cachedResponse({ body: Buffer.from('original') }));
        const [first] = await store.get(key);
        expect(Object.isFrozen(first)).toBe(true);
        expect(Object.isFrozen(first!.rawHeaders)).toBe(true);
        expect(() => {
            (first as { statusCode: number }).statusCode = 500;
        }).toThrow(TypeError);
        // A body's bytes cannot be frozen: written to, they differ from the value read next, decoded anew.
        first!.body.write('tampered');
        const [next] = await store.get(key);
        expect(next).not.toBe(first);
        expect(next!.body.toString()).toBe('original');
        expect(next!.statusCode).toBe(200);
        const [after] = await store.get(key);
        expect(after).toBe(next);
    });
});

describe('DecodedEntries: the entries a RedisCacheStore reuses are bounded', () => {
    const key = 'http://example.test/bounded';
    const stored = (body: Buffer) => {
        const entry = cachedResponse({ body });
        return Buffer.concat([encodedHead(key, entry), entry.body]);
    };

    it('keeps at most 1000 values: past them the oldest is decoded anew', () => {
        const decoded = new DecodedEntries();
        const values = Array.from({ length: 1001 }, (_, i) => stored(Buffer.from(`body ${i}`)));
        const first = values.map((value, i) => decoded.entryOf(key, `b:${i}`, value));
        expect(decoded.entryOf(key, 'b:1000', values[1000]!)).toBe(first[1000]);
        expect(decoded.entryOf(key, 'b:1', values[1]!)).toBe(first[1]);
        expect(decoded.entryOf(key, 'b:0', values[0]!)).not.toBe(first[0]);
    });

    it('keeps at most 4 MiB: past them the oldest is decoded anew; a value over 256 KiB is never kept', () => {
        const decoded = new DecodedEntries();
        // 21 values of 200 KiB: 4.1 MiB with their heads, so the first goes.
        const values = Array.from({ length: 21 }, (_, i) => stored(Buffer.alloc(200 * 1024, i)));
        const first = values.map((value, i) => decoded.entryOf(key, `b:${i}`, value));
        expect(decoded.entryOf(key, 'b:20', values[20]!)).toBe(first[20]);
        expect(decoded.entryOf(key, 'b:1', values[1]!)).toBe(first[1]);
        expect(decoded.entryOf(key, 'b:0', values[0]!)).not.toBe(first[0]);

        const large = stored(Buffer.alloc(256 * 1024 + 1, 1));
        const once = decoded.entryOf(key, 'b:large', large);
        const twice = decoded.entryOf(key, 'b:large', large);
        expect(twice).not.toBe(once);
        expect(twice!.body.equals(once!.body)).toBe(true);
        expect(Object.isFrozen(twice)).toBe(true);
    });
});
