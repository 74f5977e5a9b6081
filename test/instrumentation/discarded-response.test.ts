import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanStatusCode } from '@opentelemetry/api';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_REQUEST_RESEND_COUNT,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    METRIC_HTTP_CLIENT_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ClientInstrumentation, instrumentClient } from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
const traced = client.defaults({ events: true });
const answered = new Set<string>();
let server: Server;
let base: string;
let instrumentation: ClientInstrumentation;

beforeAll(async () => {
    // `/<how>/<id>`: a 503 the first time an id is asked for, then a 200.
    server = createServer((req, res) => {
        const [, how, id] = (req.url ?? '/').split('/') as [string, string, string];
        if (how === 'slow') {
            // A 200 whose body is still to come.
            res.writeHead(200);
            res.write('partial');
            const timer = setTimeout(() => res.end(), 2000);
            res.on('close', () => clearTimeout(timer));
            return;
        }

        if (answered.has(id)) {
            res.end('ok');
            return;
        }

        answered.add(id);
        if (how === 'chunked') {
            // No content-length: the retry policy cannot drain it, it destroys the response.
            res.writeHead(503, { 'retry-after': '0' });
            res.write('busy, ');
            setTimeout(() => res.end('try again'), 20);
        } else {
            // Over the 64 KiB a retry drains to keep its socket: destroyed as well.
            const body = Buffer.alloc(100 * 1024, 'x');
            res.writeHead(503, { 'retry-after': '0', 'content-length': body.length }).end(body);
        }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    instrumentation = instrumentClient(traced, {
        tracerProvider: otel.tracerProvider,
        meterProvider: otel.meterProvider
    });
});

afterEach(() => otel.reset());

afterAll(async () => {
    instrumentation.disable();
    server.closeAllConnections();
    server.close();
    await otel.shutdown();
});

describe('a 4xx/5xx response discarded before its end (README "When a client span ends")', () => {
    for (const [how, id] of [
        ['chunked', 'a'],
        ['large', 'b']
    ] as const) {
        it(`a retried 503 (${how === 'chunked' ? 'chunked' : 'over 64 KiB'}) keeps error.type 503 on its span and duration point`, async () => {
            const { payload } = await traced.get<Buffer>(`${base}/${how}/${id}`, {
                retry: { limit: 1, backoff: () => 0 }
            });
            expect(payload.toString()).toBe('ok');

            const spans = otel.spans();
            expect(spans).toHaveLength(2);
            const [first, retry] = spans.sort(
                (a, b) =>
                    Number(a.attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] ?? 0) -
                    Number(b.attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] ?? 0)
            );
            expect(first!.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(503);
            expect(first!.attributes[ATTR_ERROR_TYPE]).toBe('503');
            expect(first!.status.code).toBe(SpanStatusCode.ERROR);
            expect(retry!.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(200);
            expect(retry!.attributes[ATTR_ERROR_TYPE]).toBeUndefined();

            const points = await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
            const unavailable = points.filter((point) => point.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] === 503);
            expect(unavailable.map((point) => point.attributes[ATTR_ERROR_TYPE])).toEqual(['503']);
        });
    }

    it('a 200 response destroyed before its body arrived is still _OTHER', async () => {
        const res = await traced.request('GET', `${base}/slow/c`);
        res.destroy();
        await expect.poll(() => otel.spans().length).toBe(1);
        const span = otel.spans()[0]!;
        expect(span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(200);
        expect(span.attributes[ATTR_ERROR_TYPE]).toBe('_OTHER');
    });
});
