import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
import { METRIC_HTTP_CLIENT_REQUEST_DURATION } from '@opentelemetry/semantic-conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTR_TRACEWIRE_CACHE, ATTR_TRACEWIRE_CACHE_STORED, instrumentClient } from '../../instrumentation/index.js';
import { RedisCacheStore } from '../../src/client/cache/stores/redis/redis-store.js';
import { Client } from '../../src/client/surface/client.js';
import { clientKinds, eventually } from '../client/cache/redis-clients.js';
import { type RedisServer, startRedis } from '../integration/servers.js';
import { setupOtel } from './otel.js';

/**
 * docs/cache.md "Cache-Status", docs/observability.md: during a Redis outage no call says it was stored —
 * not its Cache-Status, not its span, not its duration point — and once the server is back the first
 * call that stores says so, and the next is a hit.
 */

const otel = setupOtel();
let redis: RedisServer;
let origin: Server;
let base: string;
let served = 0;
beforeAll(async () => {
    redis = await startRedis();
    origin = createServer((req, res) => {
        served++;
        res.writeHead(200, { 'cache-control': 'max-age=60' });
        res.end(`body of ${req.url}`);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
}, 30_000);
afterAll(async () => {
    await new Promise((resolve) => origin?.close(resolve));
    await redis?.stop();
    await otel.shutdown();
});

describe('a cached client on RedisCacheStore while its server is down', () => {
    it('no Cache-Status, span or duration point says stored; back up, the first call stores and says so, the next is a hit', async () => {
        const client = await clientKinds[0]!.connect(redis.port);
        const store = new RedisCacheStore({ client });
        const cached = new Client().defaults({ events: true, cache: { store, shared: true } });
        const handle = instrumentClient(cached, {
            tracerProvider: otel.tracerProvider,
            meterProvider: otel.meterProvider
        });
        try {
            await redis.kill();
            const url = `${base}/outage`;
            for (let call = 1; call <= 6; call++) {
                const { res, payload } = await cached.get(url);
                expect(String(payload)).toBe('body of /outage');
                const status = String(res.headers['cache-status']);
                expect(status).not.toMatch(/stored/);
                expect(status).toMatch(/^tracewire; fwd=miss; fwd-status=200; ttl=(59|60); detail=store-error$/);
            }

            // Each call went to the origin, as each header said.
            expect(served).toBe(6);
            await expect.poll(() => otel.spans().length).toBe(6);
            for (const span of otel.spans()) {
                expect(span.kind).toBe(SpanKind.CLIENT);
                expect(span.attributes[ATTR_TRACEWIRE_CACHE]).toBe('miss');
                expect(span.attributes[ATTR_TRACEWIRE_CACHE_STORED]).toBe(false);
            }

            const down = await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
            expect(down.map((point) => [point.attributes[ATTR_TRACEWIRE_CACHE_STORED], point.count])).toEqual([
                [false, 6]
            ]);

            await redis.restart();
            otel.reset();
            const back = `${base}/back`;
            // The client reconnects on its own: until it has, calls go on as during the outage.
            await eventually(
                async () => /; stored;/.test(String((await cached.get(back)).res.headers['cache-status'])),
                10_000
            );
            const hit = await cached.get(back);
            expect(hit.res.headers['cache-status']).toMatch(/^tracewire; hit; ttl=(59|60)$/);
            const spans = otel.spans();
            const [stored, hitSpan] = spans.slice(-2);
            expect(stored!.attributes[ATTR_TRACEWIRE_CACHE_STORED]).toBe(true);
            expect(hitSpan!.attributes[ATTR_TRACEWIRE_CACHE]).toBe('hit');
            expect(hitSpan!.attributes[ATTR_TRACEWIRE_CACHE_STORED]).toBeUndefined();
            const points = await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
            const storedPoints = points.filter((point) => point.attributes[ATTR_TRACEWIRE_CACHE_STORED] === true);
            expect(storedPoints.map((point) => point.count)).toEqual([1]);
        } finally {
            handle.disable?.();
            store.close();
            client.disconnect();
        }
    }, 30_000);
});
