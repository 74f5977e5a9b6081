import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCacheStore } from '../../../src/client/cache/stores/redis/redis-store.js';
import { hasFillLocks } from '../../../src/client/contract/cache-store.js';
import { MemoryCacheStore } from '../../../src/client/index.js';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { type AppClient, clientKinds } from './redis-clients.js';

/** The fill locks of RedisCacheStore (FillLocks, src/client/contract/cache-store.ts), on a real server. */

let redis: RedisServer;
const cleanup: (() => void)[] = [];
beforeAll(async () => {
    redis = await startRedis();
}, 30_000);
afterAll(async () => {
    for (const step of cleanup) {
        step();
    }

    await redis?.stop();
});

let prefixes = 0;

async function instances(count: number, kind = clientKinds[0]!): Promise<RedisCacheStore[]> {
    const keyPrefix = `locks${++prefixes}:`;
    const made: RedisCacheStore[] = [];
    for (let i = 0; i < count; i++) {
        const client: AppClient = await kind.connect(redis.port);
        const store = new RedisCacheStore({ client, keyPrefix, timeout: 2_000 });
        cleanup.push(() => {
            store.close();
            client.disconnect();
        });
        made.push(store);
    }

    return made;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('RedisCacheStore offers fill locks; MemoryCacheStore does not (yet)', async () => {
    const [store] = await instances(1);
    expect(hasFillLocks(store!)).toBe(true);
    expect(hasFillLocks(new MemoryCacheStore())).toBe(false);
});

for (const kind of clientKinds) {
    describe(`fill locks on ${kind.name}`, () => {
        it('of contenders in several instances at once, exactly one takes the lock', async () => {
            const stores = await instances(4, kind);
            const attempts = await Promise.all(
                stores.flatMap((store) => Array.from({ length: 5 }, () => store.lockFill('k', 5_000)))
            );
            expect(attempts.filter((attempt) => attempt.acquired)).toHaveLength(1);
            expect(attempts.filter((attempt) => !attempt.acquired && attempt.reason === 'held')).toHaveLength(19);
        });

        it('a lock held expires on the server after its ttl, whatever its holder does', async () => {
            const [holder, other] = (await instances(2, kind)) as [RedisCacheStore, RedisCacheStore];
            const held = await holder.lockFill('k', 200);
            expect(held.acquired).toBe(true);
            expect(await other.lockFill('k', 200)).toStrictEqual({ acquired: false, reason: 'held' });
            await sleep(250);
            expect((await other.lockFill('k', 200)).acquired).toBe(true);
        });

        it('a release by a non-holder does nothing: a wrong token, or the holder whose lock expired and was taken', async () => {
            const [first, second] = (await instances(2, kind)) as [RedisCacheStore, RedisCacheStore];
            // Long enough that the two calls below come before it expires on a loaded machine (100 ms did not).
            const lock = await first.lockFill('k', 400);
            if (!lock.acquired) throw new Error('not acquired');
            expect(await second.unlockFill('k', 'not-the-token')).toBe(false);
            expect((await second.lockFill('k', 5_000)).acquired).toBe(false);

            await sleep(450);
            const taken = await second.lockFill('k', 5_000);
            expect(taken.acquired).toBe(true);
            expect(await first.unlockFill('k', lock.token)).toBe(false);
            expect(await first.lockFill('k', 5_000)).toStrictEqual({ acquired: false, reason: 'held' });
            if (taken.acquired) {
                expect(await second.unlockFill('k', taken.token)).toBe(true);
                expect(await second.unlockFill('k', taken.token)).toBe(false);
            }

            expect((await first.lockFill('k', 100)).acquired).toBe(true);
        });

        it("a waiter in another instance is woken by the holder's release at once, not at its next poll", async () => {
            const [holder, waiter] = (await instances(2, kind)) as [RedisCacheStore, RedisCacheStore];
            const lock = await holder.lockFill('k', 5_000);
            if (!lock.acquired) throw new Error('not acquired');
            // The waiter's polls have grown to their longest pause by now.
            const waited = waiter.awaitFill('k', 5_000);
            await sleep(600);
            const released = Date.now();
            await holder.unlockFill('k', lock.token);
            expect(await waited).toBe('released');
            const took = Date.now() - released;
            expect(took).toBeLessThan(150);
        });

        it('a waiter learns the lock expired, the key was marked pass, or that its timeout passed', async () => {
            const [holder, waiter] = (await instances(2, kind)) as [RedisCacheStore, RedisCacheStore];
            expect((await holder.lockFill('expiring', 150)).acquired).toBe(true);
            expect(await waiter.awaitFill('expiring', 5_000)).toBe('released');

            expect((await holder.lockFill('slow', 5_000)).acquired).toBe(true);
            const started = Date.now();
            expect(await waiter.awaitFill('slow', 120)).toBe('timeout');
            expect(Date.now() - started).toBeGreaterThanOrEqual(115);

            const lock = await holder.lockFill('uncacheable', 5_000);
            if (!lock.acquired) throw new Error('not acquired');
            const waited = waiter.awaitFill('uncacheable', 5_000);
            expect(await holder.unlockFill('uncacheable', lock.token, 300)).toBe(true);
            expect(await waited).toBe('pass');
            // Hit-for-pass: no lock is taken while the mark lasts, then the key coalesces again.
            expect(await waiter.lockFill('uncacheable', 5_000)).toStrictEqual({ acquired: false, reason: 'pass' });
            expect(await waiter.awaitFill('uncacheable', 5_000)).toBe('pass');
            await sleep(350);
            expect((await waiter.lockFill('uncacheable', 5_000)).acquired).toBe(true);
        });
    });
}

describe('fill locks: what a caller gets wrong, and a server out of reach', () => {
    it('a ttl, passFor or timeout that is not a count of ms rejects naming it', async () => {
        const [store] = (await instances(1)) as [RedisCacheStore];
        await expect(store.lockFill('k', 0)).rejects.toThrow(
            'RedisCacheStore lockFill ttl must be a positive integer (ms)'
        );
        await expect(store.unlockFill('k', 't', -1)).rejects.toThrow(
            'RedisCacheStore unlockFill passFor must be a non-negative integer (ms)'
        );
        await expect(store.awaitFill('k', Number.NaN)).rejects.toThrow(
            'RedisCacheStore awaitFill timeout must be a non-negative integer (ms)'
        );
    });

    it('while the server is down, the first call waits for the connection within the bound, the next ones reject at once', async () => {
        const server = await startRedis();
        const client = await clientKinds[0]!.connect(server.port);
        const store = new RedisCacheStore({ client, timeout: 100 });
        try {
            await server.kill();
            await sleep(50);
            let started = Date.now();
            await expect(store.lockFill('k', 100)).rejects.toThrow(
                /^RedisCacheStore lockFill not sent: the client is still connecting after 100 ms$/
            );
            expect(Date.now() - started).toBeGreaterThanOrEqual(95);
            expect(Date.now() - started).toBeLessThan(500);
            for (const call of [store.lockFill('k', 100), store.unlockFill('k', 't'), store.awaitFill('k', 5_000)]) {
                started = Date.now();
                await expect(call).rejects.toThrow(
                    /^RedisCacheStore (lockFill|unlockFill|awaitFill) not sent: the client is connecting$/
                );
                expect(Date.now() - started).toBeLessThan(50);
            }
        } finally {
            store.close();
            client.disconnect();
            await server.stop();
        }
    });
});
