import { SpanKind } from '@opentelemetry/api';
import {
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_NETWORK_PROTOCOL_VERSION,
    METRIC_HTTP_CLIENT_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import { ATTR_HTTP_RESPONSE_BODY_SIZE } from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, describe, expect, it } from 'vitest';
import {
    ATTR_CACHE_STORE,
    ATTR_CACHE_STORE_FAILURE,
    ATTR_CACHE_STORE_OPERATION,
    ATTR_TRACEWIRE_CACHE,
    ATTR_TRACEWIRE_CACHE_STORED,
    instrumentClient,
    METRIC_CACHE_STORE_ERRORS
} from '../../instrumentation/index.js';
import type { CacheStore } from '../../src/client/contract/cache-store.js';
import { Client } from '../../src/client/surface/client.js';
import { MockNetwork } from '../../src/testing/index.js';
import { setupOtel } from './otel.js';

/** README "Cache": a cached client's spans and metrics say how each call was answered. */

const otel = setupOtel();
// The origin is a MockNetwork (docs/testing.md): the cache and the instrumentation work above the transport
// seam, on a mocked exchange as on one over the network (its protocol version as mocked, 1.1).
const origin = 'http://cached.test';
const mock = new MockNetwork();
let served = 0;
mock.intercept({ origin, path: '/slow' })
    .reply(() => {
        served++;
        return { status: 200, headers: { 'cache-control': 'max-age=60' }, body: 'slow body' };
    })
    .delay(100)
    .persist();
mock.intercept({ origin, method: () => true })
    .reply((request) => {
        served++;
        if (request.path === '/sized') {
            return { status: 200, headers: { 'cache-control': 'max-age=60', 'content-length': 4 }, body: 'body' };
        }

        if (request.path === '/swr') {
            const headers = { etag: '"w"', 'cache-control': 'max-age=0, stale-while-revalidate=60' };
            return request.headers['if-none-match'] === '"w"'
                ? { status: 304, headers }
                : { status: 200, headers, body: 'body' };
        }

        if (request.headers['if-none-match'] === '"v"') {
            return { status: 304, headers: { etag: '"v"', 'cache-control': 'max-age=0' } };
        }

        return {
            status: 200,
            headers: { etag: '"v"', 'cache-control': request.path === '/fresh' ? 'max-age=60' : 'max-age=0' },
            body: 'body'
        };
    })
    .persist();

afterAll(async () => {
    mock.close();
    await otel.shutdown();
});

describe('instrumentation of a cached client', () => {
    it('a miss, a hit and a revalidation each carry tracewire.cache on the span and the duration metric', async () => {
        const client = new Client().defaults({ mock, events: true, cache: true });
        const handle = instrumentClient(client, {
            tracerProvider: otel.tracerProvider,
            meterProvider: otel.meterProvider
        });
        try {
            await client.get(`${origin}/fresh`);
            await client.get(`${origin}/fresh`);
            await client.get(`${origin}/stale`);
            await client.get(`${origin}/stale`);
            await expect.poll(() => otel.spans().filter((span) => span.kind === SpanKind.CLIENT).length).toBe(4);
            const outcomes = otel
                .spans()
                .filter((span) => span.kind === SpanKind.CLIENT)
                .map((span) => span.attributes[ATTR_TRACEWIRE_CACHE]);
            expect(outcomes).toEqual(['miss', 'hit', 'miss', 'revalidated']);
            // The revalidation's span reads the 304 the cache completed once the update landed.
            const stored = otel
                .spans()
                .filter((span) => span.kind === SpanKind.CLIENT)
                .map((span) => span.attributes[ATTR_TRACEWIRE_CACHE_STORED]);
            expect(stored).toEqual([true, undefined, true, true]);
            const points = await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
            expect(points.map((point) => point.attributes[ATTR_TRACEWIRE_CACHE]).sort()).toEqual([
                'hit',
                'miss',
                'revalidated'
            ]);
            expect(served).toBe(3);
        } finally {
            handle.disable?.();
        }
    });

    it('a stale response served while it is revalidated: its span first, then the revalidation in a span of its own', async () => {
        otel.reset();
        const client = new Client().defaults({ mock, events: true, cache: true });
        const handle = instrumentClient(client, {
            tracerProvider: otel.tracerProvider,
            meterProvider: otel.meterProvider
        });
        try {
            await client.get(`${origin}/swr`);
            const { res } = await client.get(`${origin}/swr`);
            expect(res.headers['cache-status']).toMatch(/detail=stale-while-revalidate/);
            const clientSpans = () => otel.spans().filter((span) => span.kind === SpanKind.CLIENT);
            await expect.poll(() => clientSpans().length).toBe(3);
            const [miss, served, revalidation] = clientSpans();
            expect(miss!.attributes[ATTR_TRACEWIRE_CACHE]).toBe('miss');
            expect(served!.attributes[ATTR_TRACEWIRE_CACHE]).toBe('hit');
            expect(served!.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(200);
            // The revalidation nobody waits for: the origin's 304, in a span that starts after the served one's.
            expect(revalidation!.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(304);
            // What the cache made of it, as for a call's own revalidation: the stored response updated.
            expect(revalidation!.attributes[ATTR_TRACEWIRE_CACHE]).toBe('revalidated');
            expect(revalidation!.attributes[ATTR_TRACEWIRE_CACHE_STORED]).toBe(true);
            const startOf = (span: typeof served) => span!.startTime[0] * 1e9 + span!.startTime[1];
            expect(startOf(revalidation)).toBeGreaterThanOrEqual(startOf(served));
        } finally {
            handle.disable?.();
        }
    });

    it('a hit, answered without the network, names no network.protocol.version on its span or duration point; the miss before it does', async () => {
        const client = new Client().defaults({ mock, events: true, cache: true });
        const handle = instrumentClient(client, {
            tracerProvider: otel.tracerProvider,
            meterProvider: otel.meterProvider
        });
        otel.reset();
        try {
            const servedBefore = served;
            await client.get(`${origin}/fresh`);
            await client.get(`${origin}/fresh`);
            expect(served - servedBefore).toBe(1);
            await expect.poll(() => otel.spans().length).toBe(2);
            const [miss, hit] = otel.spans();
            expect(miss!.attributes).toMatchObject({
                [ATTR_TRACEWIRE_CACHE]: 'miss',
                [ATTR_NETWORK_PROTOCOL_VERSION]: '1.1',
                [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200
            });
            // What the caller got, and how it was answered, without a protocol nothing spoke.
            expect(hit!.attributes).toMatchObject({
                [ATTR_TRACEWIRE_CACHE]: 'hit',
                [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200
            });
            expect(hit!.attributes).not.toHaveProperty(ATTR_NETWORK_PROTOCOL_VERSION);
            const points = await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
            const versions = (outcome: string) =>
                points
                    .filter((point) => point.attributes[ATTR_TRACEWIRE_CACHE] === outcome)
                    .map((point) => point.attributes[ATTR_NETWORK_PROTOCOL_VERSION]);
            expect(versions('hit').length).toBeGreaterThan(0);
            expect(versions('hit').every((version) => version === undefined)).toBe(true);
            expect(versions('miss').every((version) => version === '1.1')).toBe(true);
        } finally {
            handle.disable?.();
        }
    });

    it('a HEAD answered from a stored GET has a body of 0 bytes on its span, whatever its content-length says', async () => {
        const client = new Client().defaults({ mock, events: true, cache: true });
        const handle = instrumentClient(client, { tracerProvider: otel.tracerProvider });
        otel.reset();
        try {
            await client.get(`${origin}/sized`);
            const head = await client.request('HEAD', `${origin}/sized`);
            expect(head.headers['content-length']).toBe('4');
            expect(await client.read(head)).toEqual(Buffer.alloc(0));
            await expect.poll(() => otel.spans().length).toBe(2);
            const [miss, hit] = otel.spans();
            expect(miss!.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(4);
            expect(hit!.attributes[ATTR_TRACEWIRE_CACHE]).toBe('hit');
            expect(hit!.attributes[ATTR_HTTP_RESPONSE_BODY_SIZE]).toBe(0);
        } finally {
            handle.disable?.();
        }
    });

    it("the calls that waited for another call's fetch (request coalescing) link their spans to the span that fetched", async () => {
        const client = new Client().defaults({ mock, events: true, cache: true });
        const handle = instrumentClient(client, {
            tracerProvider: otel.tracerProvider,
            meterProvider: otel.meterProvider
        });
        otel.reset();
        const servedBefore = served;
        try {
            await Promise.all([1, 2, 3].map(() => client.get(`${origin}/slow`)));
            expect(served - servedBefore).toBe(1);
            await expect.poll(() => otel.spans().length).toBe(3);
            const spans = otel.spans();
            const fetcher = spans.find((span) => span.attributes[ATTR_TRACEWIRE_CACHE] === 'miss')!;
            const waiters = spans.filter((span) => span !== fetcher);
            expect(waiters).toHaveLength(2);
            for (const waiter of waiters) {
                expect(waiter.links.map((link) => link.context.spanId)).toEqual([fetcher.spanContext().spanId]);
                // Answered from what the fetch stored: the waiter itself sent nothing over the network.
                expect(waiter.attributes).not.toHaveProperty(ATTR_NETWORK_PROTOCOL_VERSION);
            }

            expect(fetcher.links).toEqual([]);
            expect(fetcher.attributes[ATTR_NETWORK_PROTOCOL_VERSION]).toBe('1.1');
        } finally {
            handle.disable?.();
        }
    });

    it('a failing store is counted in tracewire.cache.store.errors, by operation and failure, once per failure', async () => {
        class BrokenStore implements CacheStore {
            async get(): Promise<never> {
                throw new Error('store down');
            }

            async set(): Promise<void> {
                throw new Error('store down');
            }

            async delete(): Promise<void> {}
        }

        const client = new Client().defaults({ mock, events: true, cache: { store: new BrokenStore() } });
        // Two instrumentations (of two clients) hear the same failures: each is counted once.
        const handles = [client, new Client().defaults({ mock, events: true })].map((instrumented) =>
            instrumentClient(instrumented, { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider })
        );
        try {
            const { payload } = await client.get(`${origin}/fresh`);
            expect(String(payload)).toBe('body');
            const metric = (await otel.metrics()).get(METRIC_CACHE_STORE_ERRORS);
            const points = metric!.points.map((point) => ({
                operation: point.attributes[ATTR_CACHE_STORE_OPERATION],
                failure: point.attributes[ATTR_CACHE_STORE_FAILURE],
                store: point.attributes[ATTR_CACHE_STORE],
                value: point.value
            }));
            expect(points.sort((a, b) => String(a.operation).localeCompare(String(b.operation)))).toEqual([
                { operation: 'get', failure: 'error', store: 'BrokenStore', value: 1 },
                { operation: 'set', failure: 'error', store: 'BrokenStore', value: 1 }
            ]);
        } finally {
            for (const handle of handles) {
                handle.disable?.();
            }
        }
    });
});
