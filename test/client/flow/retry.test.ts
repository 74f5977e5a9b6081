import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { ATTR_HTTP_REQUEST_RESEND_COUNT } from '@opentelemetry/semantic-conventions';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { instrumentClient } from '../../../instrumentation/index.js';
import { streamReplayLimit } from '../../../src/client/bodies/payload-replay.js';
import { fullJitter, parseRetryAfter } from '../../../src/client/flow/retry.js';
import { Client, type ClientEvents, type RequestUri } from '../../../src/client/index.js';
import { isHttpError } from '../../../src/errors/index.js';
import { setupOtel } from '../../instrumentation/otel.js';
import { body, type Echo, refusedUrl, startHttp, type TestServer } from '../helpers.js';

/**
 * The flaky origin: `/<mode>/<key>?fail=n` fails its first n attempts (counted per key, so every
 * test has its own), then answers 200 with an echo of the request. Modes:
 * - `status`: fails with `?status=` (default 503), `?retryAfter=` as Retry-After, `?size=` body bytes
 *   (`?chunked` to send it without content-length);
 * - `reset`: destroys the connection (ECONNRESET for the client);
 * - `hang`: never answers (the request `timeout` ends the attempt).
 */
const attempts = new Map<string, number>();
const received = new Map<string, string[]>();
let server: TestServer;
let connections = 0;
const hanging = new Set<ServerResponse>();

beforeAll(async () => {
    server = await startHttp(async (req: IncomingMessage, res: ServerResponse) => {
        const url = new URL(req.url ?? '/', 'http://x');
        const [, mode, key = ''] = url.pathname.split('/');
        const payload = await body(req).catch(() => '');
        const attempt = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, attempt);
        received.set(key, [...(received.get(key) ?? []), payload]);
        if (attempt <= Number(url.searchParams.get('fail') ?? 0)) {
            if (mode === 'reset') {
                req.socket.destroy();
                return;
            }

            if (mode === 'hang') {
                hanging.add(res);
                return;
            }

            const filler = 'x'.repeat(Number(url.searchParams.get('size') ?? 5));
            const headers: Record<string, string> = {};
            const retryAfter = url.searchParams.get('retryAfter');
            if (retryAfter !== null) {
                headers['retry-after'] = retryAfter;
            }

            if (!url.searchParams.has('chunked')) {
                headers['content-length'] = String(filler.length);
            }

            res.writeHead(Number(url.searchParams.get('status') ?? 503), headers);
            res.end(filler);
            return;
        }

        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, payload, attempt }));
    });
    server.server.on('connection', () => connections++);
});

afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    for (const res of hanging) {
        res.destroy();
    }

    hanging.clear();
});

afterAll(async () => {
    await server.close();
});

let keys = 0;
/** A fresh flaky URL: `mode`, failing `fail` times, with more query parameters. */
function flaky(mode: 'status' | 'reset' | 'hang', fail: number, query = ''): { url: string; key: string } {
    const key = `k${++keys}`;
    return { url: `${server.url}/${mode}/${key}?fail=${fail}${query}`, key };
}

/** Lets pending I/O callbacks run without timers (fake timers may be on): until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
    while (!done()) {
        await new Promise((resolve) => setImmediate(resolve));
    }
}

const noWait = { backoff: () => 0 };
const client = new Client();

describe('retry: a flaky origin succeeds after its failures', () => {
    it('fails twice then 200: three attempts, waits of full-jitter exponential backoff (base 100 ms)', async () => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        // Full jitter draws in [0, min(cap, base * 2^(n-1))): with random() = 0.5 the waits are 50 then 100.
        vi.spyOn(Math, 'random').mockReturnValue(0.5);
        const { url, key } = flaky('status', 2);
        const promise = client.get<Echo & { attempt: number }>(url, { retry: true, json: true });
        for (const [attempt, wait] of [
            [1, 50],
            [2, 100]
        ] as const) {
            await until(() => attempts.get(key) === attempt && vi.getTimerCount() === 1);
            vi.advanceTimersByTime(wait - 1);
            expect(vi.getTimerCount()).toBe(1);
            vi.advanceTimersByTime(1);
            expect(vi.getTimerCount()).toBe(0);
        }

        const { res, payload } = await promise;
        expect(res.statusCode).toBe(200);
        expect(payload.attempt).toBe(3);
        expect(attempts.get(key)).toBe(3);
    });

    it('retries connection resets', async () => {
        const { url, key } = flaky('reset', 2);
        const { payload } = await client.get<{ attempt: number }>(url, { retry: noWait, json: true });
        expect(payload.attempt).toBe(3);
        expect(attempts.get(key)).toBe(3);
    });

    it('the request timeout bounds each attempt, and a timed-out attempt is retried', async () => {
        const { url, key } = flaky('hang', 1);
        const { payload } = await client.get<{ attempt: number }>(url, { retry: noWait, timeout: 2000, json: true });
        expect(payload.attempt).toBe(2);
        expect(attempts.get(key)).toBe(2);
    });

    it('re-sends a string, Buffer or object payload whole at each attempt', async () => {
        for (const payload of ['text', Buffer.from('bytes'), { json: true }]) {
            const { url, key } = flaky('status', 1);
            await client.put(url, { retry: noWait, payload });
            const expected =
                typeof payload === 'object' && !Buffer.isBuffer(payload) ? '{"json":true}' : String(payload);
            expect(received.get(key)).toEqual([expected, expected]);
        }
    });

    it('re-sends a stream payload from the copy kept of it', async () => {
        const { url, key } = flaky('status', 2);
        const { payload } = await client.put<Echo>(url, {
            retry: noWait,
            payload: Readable.from(['a stream ', 'in parts']),
            json: true
        });
        expect(payload.payload).toBe('a stream in parts');
        expect(received.get(key)).toEqual(['a stream in parts', 'a stream in parts', 'a stream in parts']);
    });

    it('does not retry a stream payload larger than the copy kept: the response is returned as it is', async () => {
        const { url, key } = flaky('status', 1);
        const big = Buffer.alloc(streamReplayLimit + 1, 'y');
        const res = await client.request('PUT', url, { retry: noWait, payload: Readable.from([big]) });
        expect(res.statusCode).toBe(503);
        res.resume();
        expect(attempts.get(key)).toBe(1);
    });
});

describe('retry: what is retried', () => {
    it('not a POST or a PATCH (not idempotent) by default', async () => {
        for (const method of ['POST', 'PATCH']) {
            const { url, key } = flaky('status', 1);
            const res = await client.request(method, url, { retry: noWait, payload: 'once' });
            expect(res.statusCode).toBe(503);
            res.resume();
            expect(attempts.get(key)).toBe(1);
        }
    });

    it('a POST when methods lists it (in any case)', async () => {
        const { url, key } = flaky('status', 1);
        await client.post(url, { retry: { methods: ['post'], backoff: () => 0 } });
        expect(attempts.get(key)).toBe(2);
    });

    it('every idempotent method by default', async () => {
        for (const method of ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']) {
            const { url, key } = flaky('status', 1);
            const res = await client.request(method, url, { retry: noWait });
            expect(res.statusCode).toBe(200);
            res.resume();
            expect(attempts.get(key)).toBe(2);
        }
    });

    it('the default statuses 408, 429, 500, 502, 503, 504, and no other', async () => {
        for (const [status, retried] of [
            [408, true],
            [429, true],
            [500, true],
            [502, true],
            [503, true],
            [504, true],
            [404, false],
            [501, false]
        ] as const) {
            const { url, key } = flaky('status', 1, `&status=${status}`);
            const res = await client.request('GET', url, { retry: noWait });
            res.resume();
            expect([status, attempts.get(key)]).toEqual([status, retried ? 2 : 1]);
        }
    });

    it('the statuses of statusCodes instead', async () => {
        const { url, key } = flaky('status', 1, '&status=418');
        await client.get(url, { retry: { statusCodes: [418], backoff: () => 0 } });
        expect(attempts.get(key)).toBe(2);
    });

    it('only the error codes of errorCodes', async () => {
        const { url, key } = flaky('reset', 1);
        // A fresh connection: a reset on a reused one is a stale-connection re-send, whatever errorCodes says.
        const err = await client
            .get(url, { agent: false, retry: { errorCodes: ['ECONNREFUSED'] } })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect(attempts.get(key)).toBe(1);
    });

    it('at most limit times; the last response is returned as it is', async () => {
        const { url, key } = flaky('status', 5);
        const res = await client.request('GET', url, { retry: { limit: 1, backoff: () => 0 } });
        expect(res.statusCode).toBe(503);
        res.resume();
        expect(attempts.get(key)).toBe(2);
    });

    for (const off of [false, null, undefined]) {
        it(`retry: ${off} makes one attempt`, async () => {
            const { url, key } = flaky('status', 1);
            const res = await client.request('GET', url, { retry: off as boolean });
            expect(res.statusCode).toBe(503);
            res.resume();
            expect(attempts.get(key)).toBe(1);
        });
    }

    it('is also taken from defaults()', async () => {
        const { url, key } = flaky('status', 1);
        await client.defaults({ retry: noWait }).get(url);
        expect(attempts.get(key)).toBe(2);
    });
});

describe('retry: the final failure is the last attempt error, with data.attempts', () => {
    it('a refused connection, attempted limit + 1 times', async () => {
        const err = await client.get(refusedUrl, { retry: noWait }).catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect((err as { data: { code: string; attempts: number } }).data).toMatchObject({
            code: 'ECONNREFUSED',
            attempts: 3
        });
    });

    it('a helper throws the status of the last attempt, with data.attempts', async () => {
        const { url } = flaky('status', 5, '&status=500');
        const err = await client.get(url, { retry: noWait }).catch((e: unknown) => e);
        expect(isHttpError(err, 500)).toBe(true);
        expect((err as { data: { attempts: number } }).data.attempts).toBe(3);
        const plain = await client.get(flaky('status', 1, '&status=500').url).catch((e: unknown) => e);
        expect((plain as { data: object }).data).not.toHaveProperty('attempts');
    });

    it('the request timeout of the last attempt', async () => {
        const { url, key } = flaky('hang', 5);
        const err = await client
            .get(url, { retry: { limit: 1, backoff: () => 0 }, timeout: 100 })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 504)).toBe(true);
        expect((err as { data: { code: string; attempts: number } }).data).toMatchObject({
            code: 'ETIMEDOUT',
            attempts: 2
        });
        // The server counts an attempt once it has read the request: the timeout of the last one can fire
        // first on a loaded machine. Wait for the count, then make sure no third attempt follows.
        await expect.poll(() => attempts.get(key)).toBe(2);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(attempts.get(key)).toBe(2);
    });
});

describe('retry: Retry-After', () => {
    it('delta-seconds: waits exactly that long', async () => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        const { url, key } = flaky('status', 1, '&retryAfter=2');
        const promise = client.get(url, { retry: true });
        await until(() => attempts.get(key) === 1 && vi.getTimerCount() === 1);
        vi.advanceTimersByTime(1999);
        expect(vi.getTimerCount()).toBe(1);
        vi.advanceTimersByTime(1);
        expect((await promise).res.statusCode).toBe(200);
        expect(attempts.get(key)).toBe(2);
    });

    it('an HTTP-date: waits until then', async () => {
        // Date is faked too, from a whole second: the wait is computed from a clock that stands still
        // during the first round trip, however long it takes, and is exactly the 3 s to the date.
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
        vi.setSystemTime(Math.ceil(Date.now() / 1000) * 1000);
        const date = new Date(Date.now() + 3000).toUTCString();
        const { url, key } = flaky('status', 1, `&retryAfter=${encodeURIComponent(date)}`);
        const promise = client.get(url, { retry: true });
        await until(() => attempts.get(key) === 1 && vi.getTimerCount() === 1);
        vi.advanceTimersByTime(2999);
        expect(vi.getTimerCount()).toBe(1);
        vi.advanceTimersByTime(1);
        expect((await promise).res.statusCode).toBe(200);
        expect(attempts.get(key)).toBe(2);
    });

    it('longer than maxRetryAfter: no retry, the response is returned as it is', async () => {
        for (const [retryAfter, maxRetryAfter] of [
            ['61', undefined],
            ['1', 999]
        ] as const) {
            const { url, key } = flaky('status', 1, `&retryAfter=${retryAfter}`);
            const res = await client.request('GET', url, {
                retry: maxRetryAfter === undefined ? true : { maxRetryAfter }
            });
            expect(res.statusCode).toBe(503);
            expect(res.headers['retry-after']).toBe(retryAfter);
            res.resume();
            expect(attempts.get(key)).toBe(1);
        }
    });

    it('a malformed value falls back to the backoff', async () => {
        const { url, key } = flaky('status', 1, '&retryAfter=soon');
        await client.get(url, { retry: noWait });
        expect(attempts.get(key)).toBe(2);
    });

    it('parses both forms; a past date is no wait', () => {
        const now = Date.parse('Sun, 22 Nov 2026 19:00:00 GMT');
        expect(parseRetryAfter('120', now)).toBe(120_000);
        expect(parseRetryAfter(' 0 ', now)).toBe(0);
        expect(parseRetryAfter('Sun, 22 Nov 2026 19:00:30 GMT', now)).toBe(30_000);
        expect(parseRetryAfter('Sun, 22 Nov 2026 18:00:00 GMT', now)).toBe(0);
        expect(parseRetryAfter('-1', now)).toBeUndefined();
        expect(parseRetryAfter('tomorrow', now)).toBeUndefined();
        expect(parseRetryAfter(undefined, now)).toBeUndefined();
    });
});

describe('retry: backoff', () => {
    it('full jitter: random in [0, min(cap, base * 2^(n-1)))', () => {
        const top = () => 0.999_999;
        expect([1, 2, 3, 4].map((n) => fullJitter(n, 100, 10_000, top))).toEqual([99, 199, 399, 799]);
        expect(fullJitter(20, 100, 10_000, top)).toBe(9999);
        expect(fullJitter(3, 100, 10_000, () => 0)).toBe(0);
    });

    it('backoff { base, cap } sets the curve', async () => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        vi.spyOn(Math, 'random').mockReturnValue(0.5);
        const { url, key } = flaky('status', 2);
        const promise = client.get(url, { retry: { backoff: { base: 10, cap: 12 } } });
        for (const [attempt, wait] of [
            [1, 5],
            [2, 6]
        ] as const) {
            await until(() => attempts.get(key) === attempt && vi.getTimerCount() === 1);
            vi.advanceTimersByTime(wait - 1);
            expect(vi.getTimerCount()).toBe(1);
            vi.advanceTimersByTime(1);
        }

        await promise;
        expect(attempts.get(key)).toBe(3);
    });

    it('a backoff function gets the retry number', async () => {
        const asked: number[] = [];
        const { url } = flaky('status', 2);
        await client.get(url, {
            retry: {
                backoff: (n) => {
                    asked.push(n);
                    return 0;
                }
            }
        });
        expect(asked).toEqual([1, 2]);
    });
});

describe('retry: the wait ends with the signal', () => {
    it('an abort during a wait rejects at once, no timer left', async () => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        const controller = new AbortController();
        const { url, key } = flaky('status', 1, '&retryAfter=30');
        const promise = client.get(url, { retry: true, signal: controller.signal });
        await until(() => attempts.get(key) === 1 && vi.getTimerCount() === 1);
        controller.abort();
        expect(vi.getTimerCount()).toBe(0);
        const err = await promise.catch((e: unknown) => e);
        expect(isHttpError(err, 500)).toBe(true);
        expect((err as Error).message).toBe('Client request aborted');
        expect((err as { data: { attempts: number } }).data.attempts).toBe(1);
        expect(attempts.get(key)).toBe(1);
    });

    it('an abort during an attempt is not retried', async () => {
        const controller = new AbortController();
        const { url, key } = flaky('hang', 5);
        const promise = client.get(url, { retry: noWait, signal: controller.signal });
        await until(() => attempts.get(key) === 1);
        controller.abort();
        expect(isHttpError(await promise.catch((e: unknown) => e), 500)).toBe(true);
        expect(attempts.get(key)).toBe(1);
    });
});

describe('retry: the responses of discarded attempts', () => {
    it('a small body is drained: its keep-alive connection serves the next attempt', async () => {
        const fresh = new Client();
        const before = connections;
        const res = await fresh.request('GET', flaky('status', 2).url, { retry: noWait });
        expect(res.statusCode).toBe(200);
        res.resume();
        expect(connections - before).toBe(1);
        fresh.agents.http.destroy();
    });

    it('a large or unsized body is destroyed rather than read', async () => {
        for (const query of ['&size=100000', '&chunked']) {
            const fresh = new Client();
            const before = connections;
            const res = await fresh.request('GET', flaky('status', 2, query).url, { retry: noWait });
            expect(res.statusCode).toBe(200);
            res.resume();
            expect(connections - before).toBe(3);
            fresh.agents.http.destroy();
        }
    });
});

describe('retry: every attempt is a hop of the event pipeline', () => {
    it('preRequest, request and response for each attempt; uri.retryCount tells which', async () => {
        const observed = new Client().defaults({ events: true });
        const seen: string[] = [];
        const uris: RequestUri[] = [];
        observed.events!.on('preRequest', (uri) => {
            uris.push(uri);
            seen.push(`preRequest ${uri.retryCount}`);
        });
        observed.events!.on('request', () => seen.push('request'));
        observed.events!.on('response', ((err, details) =>
            seen.push(
                `response ${details.res?.statusCode ?? (err?.data as { code: string } | undefined)?.code}`
            )) as ClientEvents['response']);
        await observed.get(`${flaky('reset', 1).url}&status=500`, { retry: { backoff: () => 0 } });
        await observed.get(flaky('status', 1, '&status=500').url, { retry: noWait });
        expect(seen).toEqual([
            'preRequest 0',
            'request',
            'response ECONNRESET',
            'preRequest 1',
            'request',
            'response 200',
            'preRequest 0',
            'request',
            'response 500',
            'preRequest 1',
            'request',
            'response 200'
        ]);
        expect(new Set(uris).size).toBe(4);
        expect(uris.map((uri) => uri.redirectCount)).toEqual([0, 0, 0, 0]);
    });

    it('an instrumented client makes a span per attempt; resend_count counts retries and redirects', async () => {
        const otel = setupOtel();
        const traced = new Client().defaults({ events: true });
        const instrumentation = instrumentClient(traced, {
            tracerProvider: otel.tracerProvider,
            meterProvider: otel.meterProvider
        });
        try {
            const redirect = await startHttp((_req, res) => {
                res.writeHead(302, { location: flaky('status', 2).url }).end();
            });
            await traced.get(redirect.url, { retry: noWait, redirects: 1 });
            await redirect.close();
            const spans = otel.spans();
            expect(spans.map((span) => span.attributes['http.response.status_code'])).toEqual([302, 503, 503, 200]);
            expect(spans.map((span) => span.attributes[ATTR_HTTP_REQUEST_RESEND_COUNT])).toEqual([undefined, 1, 2, 3]);
            expect(new Set(spans.map((span) => span.spanContext().spanId)).size).toBe(4);
        } finally {
            instrumentation.disable();
            await otel.shutdown();
        }
    });
});

describe('retry: option checks', () => {
    const bad: [unknown, string][] = [
        [
            1,
            'Option retry must be true, false or an object of limit, methods, statusCodes, errorCodes, backoff, maxRetryAfter'
        ],
        [
            ['GET'],
            'Option retry must be true, false or an object of limit, methods, statusCodes, errorCodes, backoff, maxRetryAfter'
        ],
        [
            { limits: 2 },
            'Option retry has an unknown field "limits" (known: limit, methods, statusCodes, errorCodes, backoff, maxRetryAfter)'
        ],
        [{ limit: -1 }, 'Option retry.limit must be a non-negative integer'],
        [{ limit: 1.5 }, 'Option retry.limit must be a non-negative integer'],
        [{ methods: 'GET' }, 'Option retry.methods must be an array of HTTP method names'],
        [{ methods: ['GET', 'BAD METHOD'] }, 'Option retry.methods must be an array of HTTP method names'],
        [{ statusCodes: [503, 700] }, 'Option retry.statusCodes must be an array of HTTP status codes (100-599)'],
        [{ errorCodes: [42] }, 'Option retry.errorCodes must be an array of error codes such as ECONNRESET'],
        [{ maxRetryAfter: '60s' }, 'Option retry.maxRetryAfter must be a non-negative integer of milliseconds'],
        [
            { backoff: 100 },
            'Option retry.backoff must be an object { base, cap } of milliseconds or a function (retryCount) => milliseconds'
        ],
        [{ backoff: { base: -1 } }, 'Option retry.backoff .base must be a non-negative integer of milliseconds'],
        [{ backoff: { factor: 2 } }, 'Option retry.backoff has an unknown field "factor" (known: base, cap)']
    ];
    for (const [value, message] of bad) {
        it(`refuses ${JSON.stringify(value)}, naming the field`, async () => {
            const err = await client.request('GET', server.url, { retry: value as boolean }).catch((e: unknown) => e);
            expect(isHttpError(err, 500)).toBe(true);
            expect((err as Error).message).toBe(message);
            expect(() => client.defaults({ retry: value as boolean })).toThrow(message);
        });
    }

    it('accepts null and undefined fields as not set', async () => {
        const { url, key } = flaky('status', 1);
        await client.get(url, { retry: { limit: null, methods: undefined, backoff: () => 0 } });
        expect(attempts.get(key)).toBe(2);
    });
});
