import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalTier } from '../../../src/client/cache/stores/redis/redis-local-tier.js';
import type { ChangeNotices } from '../../../src/client/cache/stores/redis/redis-notices.js';
import { RedisCacheStore, type RedisCacheStoreOptions } from '../../../src/client/cache/stores/redis/redis-store.js';
import type { CachedResponse } from '../../../src/client/contract/cache-store.js';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { type AppClient, clientKinds, eventually } from './redis-clients.js';
import { cachedResponse } from './store-contract.js';

/**
 * The local tier of RedisCacheStore (README "Cache stores", docs/cache.md "Running as a fleet"):
 * answers without a round trip, kept current by the change notices, emptied whenever they may have
 * been lost.
 */

let redis: RedisServer;
const cleanup: (() => void | Promise<void>)[] = [];
beforeAll(async () => {
    redis = await startRedis();
}, 30_000);
afterAll(async () => {
    for (const step of cleanup.reverse()) {
        await step();
    }

    await redis?.stop();
});

let prefixes = 0;

async function connect(port = redis.port, kind = clientKinds[0]!): Promise<AppClient> {
    const client = await kind.connect(port);
    cleanup.push(() => client.disconnect());
    return client;
}

function storeOn(client: AppClient, options: Partial<RedisCacheStoreOptions> = {}): RedisCacheStore {
    const store = new RedisCacheStore({ client, keyPrefix: `tier${++prefixes}:`, localTier: true, ...options });
    cleanup.push(() => store.close());
    return store;
}

/** The HGETALLs the server has run: a lookup the tier answered runs none. */
async function lookups(client: AppClient): Promise<number> {
    const stats = await client.info('commandstats');
    return Number(/cmdstat_hgetall:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

for (const kind of clientKinds) {
    describe(`RedisCacheStore's local tier on ${kind.name}`, () => {
        it('is live once its notices are subscribed; a lookup it answers makes no round trip', async () => {
            const client = await connect(redis.port, kind);
            const store = storeOn(client);
            await eventually(() => store.localTierLive);
            const entry = cachedResponse();
            await store.set('k', entry);
            expect(await store.get('k')).toStrictEqual([entry]);
            const before = await lookups(client);
            for (let i = 0; i < 20; i++) {
                expect(await store.get('k')).toStrictEqual([entry]);
            }

            expect(await lookups(client)).toBe(before);
        });

        it("another instance's store, update and delete reach it within milliseconds", async () => {
            const prefix = `tier${++prefixes}:`;
            const reader = storeOn(await connect(redis.port, kind), { keyPrefix: prefix });
            const writer = storeOn(await connect(redis.port, kind), { keyPrefix: prefix, localTier: false });
            await eventually(() => reader.localTierLive);
            const first = cachedResponse();
            await writer.set('k', first);
            expect(await reader.get('k')).toStrictEqual([first]);

            const second = cachedResponse();
            await writer.set('k', second);
            const updated = await eventually(
                async () => (await reader.get('k'))[0]?.statusMessage === second.statusMessage,
                1_000
            );
            await writer.delete('k');
            const deleted = await eventually(async () => (await reader.get('k')).length === 0, 1_000);
            console.log(`${kind.name}: another instance's update seen in ${updated} ms, its delete in ${deleted} ms`);
        });

        it('its own store and delete drop its own copy before they are sent', async () => {
            const store = storeOn(await connect(redis.port, kind));
            await eventually(() => store.localTierLive);
            await store.set('k', cachedResponse());
            await store.get('k');
            const next = cachedResponse();
            void store.set('k', next);
            expect(await store.get('k')).toStrictEqual([next]);
            void store.delete('k');
            expect(await store.get('k')).toStrictEqual([]);
        });

        it("an operator's PUBLISH <prefix>changes '*' empties it", async () => {
            const client = await connect(redis.port, kind);
            const store = storeOn(client);
            await eventually(() => store.localTierLive);
            await store.set('k', cachedResponse());
            await store.get('k');
            await client.publish(`${store.keyPrefix}changes`, '*');
            const before = await lookups(client);
            await eventually(async () => {
                await store.get('k');
                return (await lookups(client)) > before;
            }, 1_000);
        });
    });
}

describe("RedisCacheStore's local tier", () => {
    it('holds at most maxCount responses, the least recently used going first', async () => {
        const client = await connect();
        const store = storeOn(client, { localTier: { maxCount: 2 } });
        await eventually(() => store.localTierLive);
        for (const key of ['a', 'b', 'c']) {
            await store.set(key, cachedResponse());
            await store.get(key);
        }

        const before = await lookups(client);
        await store.get('b');
        await store.get('c');
        expect(await lookups(client)).toBe(before);
        await store.get('a');
        expect(await lookups(client)).toBe(before + 1);
    });

    it('empties itself when its connection is lost and again when it is back, then reads what the server has', async () => {
        const server = await startRedis();
        cleanup.push(() => server.stop());
        const reader = storeOn(await connect(server.port), { localTier: { heartbeat: 100 } });
        const writer = storeOn(await connect(server.port), { keyPrefix: reader.keyPrefix, localTier: false });
        await eventually(() => reader.localTierLive);
        await writer.set('k', cachedResponse());
        expect(await reader.get('k')).toHaveLength(1);

        await server.kill();
        await eventually(() => !reader.localTierLive);
        // Nothing held answers now: the lookup goes to the server, which is not there.
        await expect(reader.get('k')).rejects.toThrow(/^RedisCacheStore get /);

        await server.restart();
        await eventually(() => reader.localTierLive, 10_000);
        const fresh = cachedResponse();
        await eventually(async () => {
            await writer.set('k', fresh).catch(() => {});
            return (await reader.get('k').catch(() => []))[0]?.statusMessage === fresh.statusMessage;
        }, 10_000);
    });

    it('stops answering within two heartbeats of a server that stopped answering, and answers again once it does', async () => {
        const server = await startRedis();
        cleanup.push(() => server.stop());
        const store = storeOn(await connect(server.port), { localTier: { heartbeat: 100 } });
        await eventually(() => store.localTierLive);
        await store.set('k', cachedResponse());
        await store.get('k');
        server.pause();
        try {
            const took = await eventually(() => !store.localTierLive, 2_000);
            expect(took).toBeLessThan(1_000);
            await expect(store.get('k')).rejects.toThrow(/^RedisCacheStore get /);
        } finally {
            server.resume();
        }

        await eventually(() => store.localTierLive, 5_000);
        expect(await store.get('k')).toHaveLength(1);
    });
});

describe('LocalTier', () => {
    /** Notices a test drives by hand: the tier's only input besides the reads. */
    function handNotices() {
        const changes: ((id: string) => void)[] = [];
        const liveness: ((live: boolean) => void)[] = [];
        const notices = {
            live: true,
            onChange: (listener: (id: string) => void) => changes.push(listener),
            onLiveChange: (listener: (live: boolean) => void) => liveness.push(listener),
            notice: (id: string) => {
                for (const listener of changes) listener(id);
            },
            setLive: (live: boolean) => {
                notices.live = live;
                for (const listener of liveness) listener(live);
            }
        };
        return notices;
    }

    const bounds = { maxSize: 2 ** 20, maxCount: 100 };
    const entries: CachedResponse[] = [
        cachedResponse({ vary: { accept: 'b' } }),
        cachedResponse({ vary: { accept: 'a' } })
    ];

    it('keeps what a read brought, in the order read', async () => {
        const notices = handNotices();
        const tier = new LocalTier(bounds, notices as unknown as ChangeNotices);
        tier.read('id', tier.reading('id'), entries);
        expect(await tier.get('id')).toStrictEqual(entries);
    });

    it('a read whose resource changed while it was under way is not kept (the notice came before its answer)', async () => {
        const notices = handNotices();
        const tier = new LocalTier(bounds, notices as unknown as ChangeNotices);
        const stamp = tier.reading('id');
        const later = tier.reading('id');
        notices.notice('id');
        const after = tier.reading('id');
        tier.read('id', stamp, entries);
        tier.read('id', later, entries);
        expect(await tier.get('id')).toStrictEqual([]);
        // A read begun after the notice brings the current state: kept.
        tier.read('id', after, entries);
        expect(await tier.get('id')).toStrictEqual(entries);
    });

    it("another resource's notice does not spoil a read; '*' and a change of liveness spoil every read", async () => {
        const notices = handNotices();
        const tier = new LocalTier(bounds, notices as unknown as ChangeNotices);
        let stamp = tier.reading('id');
        notices.notice('other');
        tier.read('id', stamp, entries);
        expect(await tier.get('id')).toHaveLength(2);

        stamp = tier.reading('x');
        notices.notice('*');
        expect(await tier.get('id')).toStrictEqual([]);
        tier.read('x', stamp, entries);
        expect(await tier.get('x')).toStrictEqual([]);

        stamp = tier.reading('y');
        notices.setLive(false);
        notices.setLive(true);
        tier.read('y', stamp, entries);
        expect(await tier.get('y')).toStrictEqual([]);
    });

    it('answers nothing while the notices are not live, and keeps nothing read then', async () => {
        const notices = handNotices();
        const tier = new LocalTier(bounds, notices as unknown as ChangeNotices);
        tier.read('id', tier.reading('id'), entries);
        notices.live = false;
        expect(await tier.get('id')).toStrictEqual([]);
        tier.read('z', tier.reading('z'), entries);
        notices.live = true;
        expect(await tier.get('z')).toStrictEqual([]);
    });

    it('keeps a resource whole or not at all: variants past its bounds leave nothing held', async () => {
        const notices = handNotices();
        const tier = new LocalTier({ maxSize: 2 ** 20, maxCount: 1 }, notices as unknown as ChangeNotices);
        tier.read('id', tier.reading('id'), entries);
        await new Promise((resolve) => setImmediate(resolve));
        expect(await tier.get('id')).toStrictEqual([]);
    });
});
