import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCacheStore } from '../../../src/client/cache/stores/redis/redis-store.js';
import { type RedisCluster, startRedisCluster } from '../../integration/servers.js';
import { type AppCluster, clientKinds, clusterSlot, eventually } from './redis-clients.js';
import { cachedResponse, describeCacheStore } from './store-contract.js';

/**
 * RedisCacheStore on a real Redis Cluster of three masters (docs/cache.md "Running as a fleet"):
 * every script touches the keys of one hash tag, so one slot, so one node; the keys of many URLs
 * spread over the nodes; the notices cross the cluster.
 */

let cluster: RedisCluster;
const cleanup: (() => void)[] = [];
beforeAll(async () => {
    cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
    for (const step of cleanup) {
        step();
    }

    await cluster?.stop();
});

let prefixes = 0;

for (const kind of clientKinds) {
    describe(`on a cluster, with ${kind.name}`, () => {
        let client: AppCluster;
        beforeAll(async () => {
            client = await kind.cluster(cluster.ports);
            cleanup.push(() => client.disconnect());
        });

        describeCacheStore(
            `RedisCacheStore on a Redis Cluster (${kind.name})`,
            (bounds) => new RedisCacheStore({ client, keyPrefix: `cl${++prefixes}:`, timeout: 10_000, ...bounds }),
            (store) => (store as RedisCacheStore).close(),
            { totalBounds: 'server' }
        );

        it("the slot of each key is the server's own (CLUSTER KEYSLOT), and the URLs' keys spread over every node", async () => {
            const store = new RedisCacheStore({ client, keyPrefix: `cl${++prefixes}:` });
            cleanup.push(() => store.close());
            for (let i = 0; i < 60; i++) {
                await store.set(`https://example.test/${i}`, cachedResponse());
            }

            const keys: string[] = [];
            for (const node of client.nodes('master')) {
                const held = await node.keys(`${store.keyPrefix}*`);
                expect(held.length).toBeGreaterThan(5);
                keys.push(...held);
            }

            expect(keys).toHaveLength(60);
            for (const key of keys.slice(0, 20)) {
                for (const suffix of ['', ':lock', ':pass']) {
                    expect(Number(await client.cluster('KEYSLOT', key + suffix))).toBe(clusterSlot(key));
                }
            }
        });

        it('fill locks and the local tier work across the cluster', async () => {
            const keyPrefix = `cl${++prefixes}:`;
            const other = await kind.cluster(cluster.ports);
            cleanup.push(() => other.disconnect());
            const reader = new RedisCacheStore({ client, keyPrefix, localTier: { heartbeat: 100 } });
            const writer = new RedisCacheStore({ client: other, keyPrefix });
            cleanup.push(
                () => reader.close(),
                () => writer.close()
            );
            await eventually(() => reader.localTierLive, 10_000);

            const lock = await writer.lockFill('k', 5_000);
            expect(lock.acquired).toBe(true);
            expect(await reader.lockFill('k', 5_000)).toStrictEqual({ acquired: false, reason: 'held' });
            const waited = reader.awaitFill('k', 5_000);
            if (lock.acquired) {
                await writer.unlockFill('k', lock.token);
            }

            expect(await waited).toBe('released');

            const first = cachedResponse();
            await writer.set('k', first);
            expect(await reader.get('k')).toStrictEqual([first]);
            await writer.delete('k');
            await eventually(async () => (await reader.get('k')).length === 0, 1_000);
        });
    });
}
