import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceKeys } from '../../../src/client/cache/stores/redis/redis-keys.js';
import { RedisCacheStore } from '../../../src/client/cache/stores/redis/redis-store.js';
import { Client } from '../../../src/client/surface/client.js';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { type AppClient, clientKinds } from './redis-clients.js';

/**
 * docs/cache.md "Fill locks": a lock does not outlive its holder. A process that shuts down as the docs
 * say (`store.close(); await redis.quit();`) right after a miss, or in the middle of one, leaves no fill
 * lock on the server: another instance's call for that URL would wait on it until it expired.
 */

let redis: RedisServer;
let admin: AppClient;
let origin: Server;
let base: string;
const unfinished: (() => void)[] = [];
beforeAll(async () => {
    redis = await startRedis();
    admin = await clientKinds[0]!.connect(redis.port);
    origin = createServer((req, res) => {
        res.setHeader('Cache-Control', 'max-age=600');
        if (req.url === '/mid-fill') {
            // The head and part of the body now, the rest when the test lets it go.
            res.writeHead(200, { 'Content-Length': '20' });
            res.write('0123456789');
            unfinished.push(() => res.end('0123456789'));
            return;
        }

        res.end(`body of ${req.url}`);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
}, 30_000);
afterAll(async () => {
    admin?.disconnect();
    await new Promise((resolve) => origin?.close(resolve));
    await redis?.stop();
});

let prefixes = 0;

for (const kind of clientKinds) {
    describe(`RedisCacheStore on ${kind.name}: shutting down leaves no fill lock`, () => {
        it('close() then quit() right after a miss: the lock of the fill is gone from the server', async () => {
            const keyPrefix = `shutdown${++prefixes}:`;
            for (let round = 0; round < 5; round++) {
                const client = await kind.connect(redis.port);
                const store = new RedisCacheStore({ client, keyPrefix });
                const cached = new Client().defaults({ cache: { store, shared: true } });
                const url = `${base}/after-miss/${round}`;
                const { res } = await cached.get(url);
                expect(res.headers['cache-status']).toMatch(/^tracewire; fwd=miss; fwd-status=200; stored; ttl=/);
                store.close();
                await client.quit();
                expect(await admin.exists(resourceKeys(keyPrefix, url).entries)).toBe(1);
                expect(await admin.keys(`${keyPrefix}*:lock`)).toStrictEqual([]);
            }
        });

        it('close() then quit() while the fill is under way (its body still coming): the lock is released, not left to expire', async () => {
            const keyPrefix = `shutdown${++prefixes}:`;
            const client = await kind.connect(redis.port);
            const store = new RedisCacheStore({ client, keyPrefix });
            const cached = new Client().defaults({ cache: { store, shared: true } });
            const url = `${base}/mid-fill`;
            const res = await cached.request('GET', url);
            // The fill lasts until the whole body has come and is stored: the lock is held meanwhile.
            const lock = resourceKeys(keyPrefix, url).lock;
            expect(await admin.exists(lock)).toBe(1);
            store.close();
            await client.quit();
            expect(await admin.exists(lock)).toBe(0);
            res.destroy();
            unfinished.shift()!();
        });
    });
}
