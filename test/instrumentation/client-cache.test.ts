import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
import { METRIC_HTTP_CLIENT_REQUEST_DURATION } from '@opentelemetry/semantic-conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTR_TRACEWIRE_CACHE, instrumentClient } from '../../instrumentation/index.js';
import { Client } from '../../src/client/surface/client.js';
import { setupOtel } from './otel.js';

/** README "Cache": a cached client's spans and metrics say how each call was answered. */

const otel = setupOtel();
let server: Server;
let origin: string;
let served = 0;

beforeAll(async () => {
    server = createServer((req, res) => {
        served++;
        if (req.headers['if-none-match'] === '"v"') {
            res.writeHead(304, { etag: '"v"', 'cache-control': 'max-age=0' });
            res.end();
            return;
        }

        res.writeHead(200, { etag: '"v"', 'cache-control': req.url === '/fresh' ? 'max-age=60' : 'max-age=0' });
        res.end('body');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('instrumentation of a cached client', () => {
    it('a miss, a hit and a revalidation each carry tracewire.cache on the span and the duration metric', async () => {
        const client = new Client().defaults({ events: true, cache: true });
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
});
