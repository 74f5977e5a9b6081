import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { type AppClient, clientKinds, eventually } from './redis-clients.js';
import { closeAll, type Instance, startFleet } from './redis-fleet.js';

/**
 * Several processes sharing one Redis server through RedisCacheStore, as the instances of a service
 * (docs/cache.md "Running as a fleet"): each a process of its own with its own client package
 * (ioredis 6, ioredis 5, iovalkey), driven over IPC (redis-fleet.ts).
 */

let redis: RedisServer;
let origin: Server;
let base: string;
const requests = new Map<string, number>();
beforeAll(async () => {
    redis = await startRedis();
    origin = createServer((req, res) => {
        const path = new URL(req.url ?? '/', 'http://origin').pathname;
        requests.set(path, (requests.get(path) ?? 0) + 1);
        if (req.method === 'POST') {
            res.end('changed');
        } else if (path.startsWith('/versioned')) {
            // Stale at once; its validator answered by a 304 that makes it fresh and says so.
            res.setHeader('ETag', '"v1"');
            if (req.headers['if-none-match'] === '"v1"') {
                res.writeHead(304, { 'Cache-Control': 'max-age=600', 'X-Revalidated': 'yes' });
                res.end();
            } else {
                res.setHeader('Cache-Control', 'max-age=0');
                res.end(`version of ${path}`);
            }
        } else {
            res.setHeader('Cache-Control', 'max-age=600');
            res.end(`body of ${path}`);
        }
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
}, 30_000);
afterAll(async () => {
    await new Promise((resolve) => origin?.close(resolve));
    await redis?.stop();
});

/** Three instances on one server under one prefix, one per client package; `timeout`: their stores'. */
async function fleet(tier: boolean, timeout?: number): Promise<Instance[]> {
    const packages = ['ioredis', 'ioredis5', 'iovalkey'];
    return (await startFleet(redis.port, packages, tier, { timeout })).instances;
}

const onlyIfCached = { 'cache-control': 'only-if-cached' };

for (const tier of [false, true]) {
    describe(`three processes sharing one server${tier ? ', each with its local tier' : ''}`, () => {
        it('a response one fetched is a hit in the others; a POST in one invalidates it in all', async () => {
            const instances = await fleet(tier);
            const [a, b, c] = instances as [Instance, Instance, Instance];
            try {
                const path = `/shared/${tier}`;
                const fetched = await a.call('GET', base + path);
                expect(fetched).toMatchObject({ status: 200, body: `body of ${path}` });
                expect(fetched.cacheStatus).toMatch(/fwd=miss; fwd-status=200; stored/);
                for (const other of [b, c, a]) {
                    const hit = await other.call('GET', base + path);
                    expect(hit).toMatchObject({ status: 200, body: `body of ${path}` });
                    expect(hit.cacheStatus).toMatch(/^tracewire; hit/);
                }

                expect(requests.get(path)).toBe(1);

                // Every instance has read it (and, with a tier, holds it): a POST in one must reach them all.
                expect((await b.call('POST', base + path)).body).toBe('changed');
                for (const other of [a, c, b]) {
                    // Without a tier the next lookup misses; with one, the notice lands within milliseconds.
                    const took = await eventually(
                        async () => (await other.call('GET', base + path, onlyIfCached)).status === 504,
                        tier ? 1_000 : 0
                    );
                    expect(took).toBeLessThan(tier ? 1_000 : 50);
                }

                expect(requests.get(path)).toBe(2);
            } finally {
                await closeAll(instances);
            }
        }, 30_000);

        it("a 304's update in one is what the others answer from next", async () => {
            const instances = await fleet(tier);
            const [a, b, c] = instances as [Instance, Instance, Instance];
            try {
                const path = `/versioned/${tier}`;
                expect((await a.call('GET', base + path)).cacheStatus).toMatch(/fwd=miss; fwd-status=200; stored/);
                const revalidated = await b.call('GET', base + path);
                expect(revalidated.cacheStatus).toMatch(/fwd=stale; fwd-status=304/);
                expect(revalidated.revalidated).toBe('yes');
                for (const other of [c, a]) {
                    const hit = await other.call('GET', base + path, onlyIfCached);
                    expect(hit).toMatchObject({ status: 200, revalidated: 'yes', body: `version of ${path}` });
                    expect(hit.cacheStatus).toMatch(/^tracewire; hit/);
                }
            } finally {
                await closeAll(instances);
            }
        }, 30_000);
    });
}

describe('a write lands before the call that made it settles (docs/cache.md, "What is consistent, and when")', () => {
    // The server holds every write for a while (CLIENT PAUSE ... WRITE lets reads through): a call that settled
    // before its write landed would leave the others' lookups, made the moment it settles, missing it.
    const held = 150;
    let admin: AppClient;
    beforeAll(async () => {
        admin = await clientKinds[0]!.connect(redis.port);
    });
    afterAll(() => admin?.disconnect());

    it("a helper's call, and request() with read(): the others' next lookup finds what it stored", async () => {
        // The stores wait longer than the writes are held; the cache's own bound on a store call is 250 ms.
        const instances = await fleet(false, 1_000);
        const [a, b, c] = instances as [Instance, Instance, Instance];
        try {
            for (const via of ['helper', 'read'] as const) {
                for (let i = 0; i < 3; i++) {
                    const path = `/landed/${via}/${i}`;
                    await admin.call('CLIENT', 'PAUSE', String(held), 'WRITE');
                    const fetched = await a.call('GET', base + path, {}, via);
                    expect(fetched).toMatchObject({ status: 200, body: `body of ${path}` });
                    const [fromB, fromC] = await Promise.all([
                        b.call('GET', base + path, onlyIfCached),
                        c.call('GET', base + path, onlyIfCached)
                    ]);
                    expect(fromB).toMatchObject({ status: 200, body: `body of ${path}` });
                    expect(fromC.cacheStatus).toMatch(/^tracewire; hit/);
                }
            }
        } finally {
            await closeAll(instances);
        }
    }, 30_000);

    it("a 304's update: the others' next lookup answers from the updated response", async () => {
        const instances = await fleet(false, 1_000);
        const [a, b, c] = instances as [Instance, Instance, Instance];
        try {
            for (const via of ['helper', 'read'] as const) {
                const path = `/versioned/landed/${via}`;
                expect((await a.call('GET', base + path, {}, via)).status).toBe(200);
                await admin.call('CLIENT', 'PAUSE', String(held), 'WRITE');
                const revalidated = await b.call('GET', base + path, {}, via);
                expect(revalidated.cacheStatus).toMatch(/fwd=stale; fwd-status=304/);
                const hit = await c.call('GET', base + path, onlyIfCached);
                expect(hit).toMatchObject({ status: 200, revalidated: 'yes' });
                expect(hit.cacheStatus).toMatch(/^tracewire; hit/);
            }
        } finally {
            await closeAll(instances);
        }
    }, 30_000);
});
