import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceKeys } from '../../../src/client/cache/stores/redis/redis-keys.js';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { fresh, type GatedOrigin, received, startGatedOrigin, uncacheable } from './gated-origin.js';
import { type AppClient, clientKinds, eventually } from './redis-clients.js';
import { type Answer, closeAll, type Instance, type MemberSettings, startFleet } from './redis-fleet.js';

/**
 * docs/cache.md "Request coalescing" across the instances of a service: four processes (ioredis 6 twice,
 * ioredis 5, iovalkey) on one Redis server through RedisCacheStore's fill locks. The origin holds each
 * answer a while (gated-origin.ts), long enough for every call to have joined the fill.
 */

const packages = ['ioredis', 'ioredis5', 'iovalkey', 'ioredis'];
// Long enough, on a loaded machine, for 100 calls sent over IPC to have looked the store up and joined.
const joinTime = 1_000;

let redis: RedisServer;
let admin: AppClient;
let origin: GatedOrigin;
beforeAll(async () => {
    redis = await startRedis();
    admin = await clientKinds[0]!.connect(redis.port);
    origin = await startGatedOrigin();
}, 30_000);
afterAll(async () => {
    admin?.disconnect();
    await origin?.close();
    await redis?.stop();
});

async function fleet(settings: MemberSettings = {}): Promise<{ instances: Instance[]; prefix: string }> {
    return startFleet(redis.port, packages, false, settings);
}

/** `perInstance` calls of `url` from each instance at once. */
function stampede(instances: Instance[], url: string, perInstance: number): Promise<Answer[]> {
    return Promise.all(
        instances.flatMap((instance) => Array.from({ length: perInstance }, () => instance.call('GET', url)))
    );
}

describe('Request coalescing across instances (RedisCacheStore fill locks)', () => {
    it('100 concurrent identical GETs over 4 processes reach the origin once; the others carry `collapsed`', async () => {
        // A store call slower than the 250 ms default lets its call go on without the store, to the origin: on a
        // loaded machine (load average 16) three of the 100 did. The bound is not what this test is about.
        const { instances } = await fleet({ storeTimeout: 4000 });
        try {
            const path = origin.serve(fresh());
            const answers = stampede(instances, path.url, 25);
            await received(path, 1);
            await sleep(joinTime);
            path.open();
            const settled = await answers;
            expect(path.requests).toHaveLength(1);
            expect(settled.map((answer) => answer.body)).toStrictEqual(Array(100).fill('shared body'));
            const statuses = settled.map((answer) => answer.cacheStatus!);
            expect(statuses.filter((status) => status.includes('; stored'))).toHaveLength(1);
            expect(statuses.filter((status) => /^tracewire; fwd=miss; collapsed; ttl=/.test(status))).toHaveLength(99);
        } finally {
            await closeAll(instances);
        }
    }, 30_000);

    it('an uncacheable answer is not shared: every waiter goes itself; the pass mark then lets the next calls go without waiting', async () => {
        const { instances, prefix } = await fleet({ coalesce: { passFor: 10_000 } });
        try {
            const path = origin.serve(uncacheable);
            const answers = stampede(instances, path.url, 5);
            await received(path, 1);
            await sleep(joinTime);
            expect(path.requests).toHaveLength(1);
            path.open();
            const settled = await answers;
            expect(path.requests).toHaveLength(20);
            expect(new Set(settled.map((answer) => answer.body)).size).toBe(20);
            const statuses = settled.map((answer) => answer.cacheStatus!);
            expect(
                statuses.filter((status) => status === 'tracewire; fwd=miss; collapsed=?0; fwd-status=200')
            ).toHaveLength(19);

            // The mark is on the server, for passFor.
            const pass = resourceKeys(prefix, path.url).pass;
            expect(await admin.pttl(pass)).toBeGreaterThan(5_000);

            // The next calls of every instance go at once, side by side: none waits for an origin fetch.
            path.close();
            path.mostAtOnce = 0;
            const next = stampede(instances, path.url, 5);
            await received(path, 40);
            expect(path.mostAtOnce).toBe(20);
            path.open();
            for (const answer of await next) {
                expect(answer.status).toBe(200);
            }
        } finally {
            await closeAll(instances);
        }
    }, 30_000);

    it('coalesce: false sends every call to the origin', async () => {
        const { instances } = await fleet({ coalesce: false });
        try {
            const path = origin.serve(fresh());
            const answers = stampede(instances, path.url, 5);
            await received(path, 20);
            expect(path.mostAtOnce).toBe(20);
            path.open();
            expect((await answers).map((answer) => answer.status)).toStrictEqual(Array(20).fill(200));
        } finally {
            await closeAll(instances);
        }
    }, 30_000);

    it('a lock holder slower than lockTimeout lets the waiters of every instance go to the origin themselves', async () => {
        const lockTimeout = 300;
        const { instances, prefix } = await fleet({ coalesce: { lockTimeout } });
        try {
            const path = origin.serve(fresh());
            const answers = stampede(instances, path.url, 3);
            await received(path, 1);
            // The first request is held; the lock expires on the server after lockTimeout, whatever its holder does.
            const lock = resourceKeys(prefix, path.url).lock;
            expect(await admin.pttl(lock)).toBeLessThanOrEqual(lockTimeout);
            await eventually(async () => (await admin.exists(lock)) === 0, 2_000);
            // The other instances' calls reach the origin while the first is still held.
            await eventually(() => path.requests.length >= 4, 5_000);
            path.open();
            const settled = await answers;
            expect(settled.map((answer) => answer.body)).toStrictEqual(Array(12).fill('shared body'));
            expect(
                settled.filter((answer) => answer.cacheStatus!.includes('collapsed=?0')).length
            ).toBeGreaterThanOrEqual(3);
        } finally {
            await closeAll(instances);
        }
    }, 30_000);

    it('the server killed mid-stampede loses nothing but the coalescing across instances; it comes back with the server', async () => {
        const { instances } = await fleet();
        try {
            const path = origin.serve(fresh());
            const answers = stampede(instances, path.url, 10);
            await received(path, 1);
            await sleep(joinTime);
            await redis.kill();
            path.open();
            const settled = await answers;
            // Every call answered; at most one fetch per instance (each still coalesces in its process).
            expect(settled.map((answer) => answer.body)).toStrictEqual(Array(40).fill('shared body'));
            expect(path.requests.length).toBeLessThanOrEqual(instances.length);

            // While the server is down: answered, coalesced within each instance.
            const down = origin.serve(fresh());
            const whileDown = stampede(instances, down.url, 10);
            await received(down, 1);
            await sleep(joinTime);
            down.open();
            expect((await whileDown).map((answer) => answer.body)).toStrictEqual(Array(40).fill('shared body'));
            expect(down.requests.length).toBeLessThanOrEqual(instances.length);

            // Back: coalesced across instances again, once every instance's client has reconnected.
            await redis.restart();
            const back = origin.serve(fresh(), true);
            await eventually(async () => {
                const probes = await Promise.all(
                    instances.map((instance) => instance.call('GET', `${back.url}?probe`))
                );
                return probes.every((answer) => answer.cacheStatus?.includes('; hit'));
            }, 10_000);
            const again = origin.serve(fresh());
            const afterRestart = stampede(instances, again.url, 10);
            await received(again, 1);
            await sleep(joinTime);
            again.open();
            expect((await afterRestart).map((answer) => answer.body)).toStrictEqual(Array(40).fill('shared body'));
            expect(again.requests).toHaveLength(1);
        } finally {
            await closeAll(instances);
        }
    }, 60_000);
});
