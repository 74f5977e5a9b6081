import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentClient } from '../../instrumentation/index.js';
import { Client } from '../../src/client/index.js';
import { keepAliveMarginMs, keepAliveTimeout } from '../../src/client/wire/http1/socket-release.js';
import { isHttpError } from '../../src/errors/index.js';
import { settle, socketCount, startHttp, type TestServer, timerCount } from '../client/helpers.js';
import { setupOtel } from '../instrumentation/otel.js';

/**
 * A server that closes a kept-alive connection as the next request arrives on it: the idle-close
 * race of a real server (nginx's keepalive_timeout), made deterministic. /close-reused answers the
 * first request of a connection and closes the connection on any later one; /close-reused-partial
 * sends the start of a status line first; /close-always never answers.
 */
interface Seen {
    method: string;
    url: string;
    connection: number;
    // 1 for the first request on its connection.
    order: number;
}

let server: TestServer;
const seen: Seen[] = [];
const connections = new WeakMap<Socket, { id: number; requests: number }>();
let nextConnection = 0;

beforeAll(async () => {
    server = await startHttp((req: IncomingMessage, res: ServerResponse) => {
        let connection = connections.get(req.socket);
        if (connection === undefined) {
            connection = { id: nextConnection++, requests: 0 };
            connections.set(req.socket, connection);
        }

        connection.requests++;
        seen.push({ method: req.method!, url: req.url!, connection: connection.id, order: connection.requests });
        const path = req.url!.split('?')[0];
        const hint = new URL(req.url!, 'http://x').searchParams.get('hint');
        req.resume();
        if (path === '/close-always' || (connection.requests > 1 && path === '/close-reused')) {
            req.socket.destroy();
            return;
        }

        if (connection.requests > 1 && path === '/close-reused-partial') {
            req.socket.end('HTTP/1.1 2');
            return;
        }

        // ?delay=ms holds the response back: the connection stays busy that long.
        const delay = Number(new URL(req.url!, 'http://x').searchParams.get('delay') ?? 0);
        setTimeout(() => {
            res.writeHead(200, hint === null ? {} : { 'keep-alive': hint });
            res.end('ok');
        }, delay);
    });
});

afterAll(() => server.close());

function countsFrom(start: number): { fresh: number; reused: number } {
    const slice = seen.slice(start);
    return {
        fresh: slice.filter((hop) => hop.order === 1).length,
        reused: slice.filter((hop) => hop.order > 1).length
    };
}

describe('stale connections: a request that fails on a reused connection the server closed', () => {
    it('is sent again at once on another connection, as a hop of its own with resendReason', async () => {
        const api = new Client().defaults({ events: true });
        const hops: { resendReason: string | undefined; staleResends: number; failed: boolean }[] = [];
        api.events!.on('response', (err, { uri }) => {
            hops.push({ resendReason: uri.resendReason, staleResends: uri.staleResends, failed: err !== undefined });
        });
        const start = seen.length;
        const first = await api.get<Buffer>(`${server.url}/close-reused`);
        expect(first.payload.toString()).toBe('ok');
        const second = await api.get<Buffer>(`${server.url}/close-reused`);
        expect(second.payload.toString()).toBe('ok');
        // Three requests: the first, the one the server dropped on the reused connection, the re-send on a fresh one.
        expect(seen.slice(start).map((hop) => hop.order)).toEqual([1, 2, 1]);
        expect(hops).toEqual([
            { resendReason: undefined, staleResends: 0, failed: false },
            { resendReason: undefined, staleResends: 0, failed: true },
            { resendReason: 'stale-connection', staleResends: 1, failed: false }
        ]);
    });

    it('retires the idle connections of the same pool that are older, so the re-send is not made on one of them', async () => {
        const api = new Client();
        const start = seen.length;
        // Two connections in the pool, both of which the server will drop on their next request.
        await Promise.all([api.get(`${server.url}/close-reused`), api.get(`${server.url}/close-reused`)]);
        await settle();
        expect(Object.values(api.agents.http.freeSockets)[0]).toHaveLength(2);
        const { payload } = await api.get<Buffer>(`${server.url}/close-reused`);
        expect(payload.toString()).toBe('ok');
        // The dropped request on the newest idle connection, then the re-send on a new one, not on the other idle one.
        expect(seen.slice(start).map((hop) => hop.order)).toEqual([1, 1, 2, 1]);
        api.agents.http.destroy();
    });

    it('a request on a fresh connection is never sent twice', async () => {
        const api = new Client();
        const start = seen.length;
        const err = await api.get(`${server.url}/close-always`).catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect((err as { data: { code: string } }).data.code).toBe('ECONNRESET');
        expect(seen.length - start).toBe(1);
    });

    it('is not sent again once a byte of the response arrived', async () => {
        const api = new Client();
        const start = seen.length;
        await api.get(`${server.url}/close-reused-partial`);
        const err = await api.get(`${server.url}/close-reused-partial`).catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect(countsFrom(start)).toEqual({ fresh: 1, reused: 1 });
    });

    it('a POST is sent again only when it carries an Idempotency-Key', async () => {
        const api = new Client();
        const start = seen.length;
        await api.post(`${server.url}/close-reused`, { payload: 'a' });
        const err = await api.post(`${server.url}/close-reused`, { payload: 'b' }).catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect(countsFrom(start)).toEqual({ fresh: 1, reused: 1 });

        await api.post(`${server.url}/close-reused`, { payload: 'c' });
        const keyed = await api.post<Buffer>(`${server.url}/close-reused`, {
            payload: 'd',
            headers: { 'idempotency-key': 'k-1' }
        });
        expect(keyed.payload.toString()).toBe('ok');
        expect(countsFrom(start)).toEqual({ fresh: 3, reused: 2 });
    });

    it('a stream payload is sent again only from the copy kept for redirects or retries', async () => {
        const api = new Client();
        const keyed = { 'idempotency-key': 'k-2' };
        const start = seen.length;
        await api.put(`${server.url}/close-reused`, { payload: 'first' });
        const err = await api
            .put(`${server.url}/close-reused`, { payload: Readable.from(['not', ' kept']), headers: keyed })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect(countsFrom(start)).toEqual({ fresh: 1, reused: 1 });

        await api.put(`${server.url}/close-reused`, { payload: 'again' });
        const { res } = await api.put(`${server.url}/close-reused`, {
            payload: Readable.from(['kept', ' copy']),
            headers: keyed,
            redirects: 1
        });
        expect(res.statusCode).toBe(200);
        expect(countsFrom(start)).toEqual({ fresh: 3, reused: 2 });
    });

    it('keeps no copy for an http2 option a preRequest listener set to null: null is "not set", HTTP/1.1', async () => {
        const api = new Client().defaults({ events: true });
        api.events.on('preRequest', (_uri, options) => {
            // What a listener in JavaScript may do; the types allow no null there.
            options.http2 = null as never;
        });
        const start = seen.length;
        await api.put(`${server.url}/close-reused`, { payload: 'first' });
        const err = await api
            .put(`${server.url}/close-reused`, {
                payload: Readable.from(['not', ' kept']),
                headers: { 'idempotency-key': 'k-3' }
            })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect(countsFrom(start)).toEqual({ fresh: 1, reused: 1 });
    });

    it('does not use the retry budget, and is made once per hop', async () => {
        const api = new Client().defaults({ retry: { limit: 0 } });
        await api.get(`${server.url}/close-reused`);
        const { res } = await api.get(`${server.url}/close-reused`);
        expect(res.statusCode).toBe(200);
    });

    it('counts in the span as a re-send (http.request.resend_count), and says why (tracewire.resend.reason)', async () => {
        const otel = setupOtel();
        const api = new Client().defaults({ events: true });
        const instrumentation = instrumentClient(api, otel);
        await api.get(`${server.url}/close-reused`);
        await api.get(`${server.url}/close-reused`);
        const spans = otel.spans();
        expect(spans.map((span) => span.attributes['http.request.resend_count'])).toEqual([undefined, undefined, 1]);
        // Why it is a re-send, beside the count the conventions define.
        expect(spans.map((span) => span.attributes['tracewire.resend.reason'])).toEqual([
            undefined,
            undefined,
            'stale-connection'
        ]);
        expect(spans[1]?.attributes['error.type']).toBe('ECONNRESET');
        // Sent again, and said so on the hop that failed; still an error: a reset the server did not
        // announce, which also looks so when a request crashed it (docs/observability.md, "Re-sent hops").
        expect(spans.map((span) => span.attributes['tracewire.resent'])).toEqual([
            undefined,
            'stale-connection',
            undefined
        ]);
        expect(spans[1]?.status.code).toBe(SpanStatusCode.ERROR);
        instrumentation.disable();
        await otel.shutdown();
    });
});

// Each test has a client of its own and spends its time waiting for connections to idle out: they run
// at once, but for the one that counts the process's timers, which runs alone first.
describe.concurrent('stale connections: idle connections retired before the server closes them', () => {
    it.sequential('a pooled connection waiting for its limit keeps nothing alive: no timer of the process is held', async () => {
        const api = new Client();
        // vitest reports a test's progress through a 100 ms throttle whose timer is ref'd: let it fire
        // first, so the counts before and after are of the process's own timers.
        await settle(150);
        const timers = timerCount();
        await api.get(`${server.url}/ok?hint=timeout%3D60`);
        const socket = await freeSocket(api);
        // Retired in 59 s by then; an unref'd timer, like the pooled socket, lets the process exit before.
        expect(timerCount()).toBe(timers);
        expect(socket.destroyed).toBe(false);
        api.agents.http.destroy();
    });

    it('reads the timeout of a Keep-Alive header', () => {
        expect(keepAliveTimeout('timeout=5, max=100')).toBe(5);
        expect(keepAliveTimeout('max=100, Timeout = "7"')).toBe(7);
        expect(keepAliveTimeout('max=100')).toBeUndefined();
        expect(keepAliveTimeout(undefined)).toBeUndefined();
        expect(keepAliveTimeout(['timeout=5'])).toBeUndefined();
    });

    it('a connection whose server keeps it idle for a second or less is not kept', async () => {
        // Node's agent reads only a header that starts with timeout=; the client reads it anywhere in the list.
        for (const hint of ['timeout=1', 'max=5, timeout=1']) {
            const api = new Client();
            await api.get(`${server.url}/ok?hint=${encodeURIComponent(hint)}`);
            // A socket leaves its agent on its close, an I/O callback that a loaded machine can delay.
            await expect.poll(() => socketCount(api.agents.http)).toBe(0);
        }
    });

    it('an idle connection is closed the margin before the announced timeout, with a custom agent too', async () => {
        const custom = new Client().defaults({
            agents: {
                http: new (await import('node:http')).Agent({ keepAlive: true }),
                https: new (await import('node:https')).Agent({ keepAlive: true }),
                httpsAllowUnauthorized: new (await import('node:https')).Agent({ keepAlive: true })
            }
        });
        await Promise.all(
            [new Client(), custom].map(async (api) => {
                // The server says 2 s (and keeps it 5 s, Node's default): the client retires it after 1 s idle.
                const sent = performance.now();
                await api.get(`${server.url}/ok?hint=timeout%3D2`);
                const released = performance.now();
                const closed = await closeOf(await freeSocket(api), 4000);
                expect(closed - sent).toBeGreaterThanOrEqual(2000 - keepAliveMarginMs - 20);
                expect(closed - released).toBeLessThan(2000);
                api.agents.http.destroy();
            })
        );
    });

    it('the latest response speaks for the connection: one without a timeout lets it idle', async () => {
        const api = new Client();
        await api.get(`${server.url}/ok?hint=timeout%3D2`);
        const socket = await freeSocket(api);
        // A Keep-Alive header without a timeout (Node's server then adds none): nothing to retire it by.
        await api.get(`${server.url}/ok?hint=max%3D100`);
        expect(await freeSocket(api)).toBe(socket);
        await settle(1500);
        expect(socket.destroyed).toBe(false);
        expect(await freeSocket(api)).toBe(socket);
        api.agents.http.destroy();
    });

    it('a connection in use when its idle limit passes is retired only after idling again, from its latest release', async () => {
        const api = new Client();
        const start = seen.length;
        // Tagged: the tests beside this one send theirs meanwhile.
        await api.get(`${server.url}/ok?hint=timeout%3D2&test=in-use`);
        const socket = await freeSocket(api);
        // Busy on the same connection across the limit of its first release (1 s after it).
        const sent = performance.now();
        await api.get(`${server.url}/ok?hint=timeout%3D2&delay=1300&test=in-use`);
        const released = performance.now();
        const mine = seen.slice(start).filter((hop) => hop.url.endsWith('test=in-use'));
        expect(mine.map((hop) => hop.order)).toEqual([1, 2]);
        expect(await freeSocket(api)).toBe(socket);
        const closed = await closeOf(socket, 4000);
        // Released after the server's 1.3 s, then idle 1 s.
        expect(closed - sent).toBeGreaterThanOrEqual(1300 + 2000 - keepAliveMarginMs - 20);
        expect(closed - released).toBeLessThan(2000);
    });

    it('one agent, two servers: each connection retired at its own limit, the shorter one although announced later', async () => {
        const other = await startHttp((_req, res) => res.writeHead(200, { 'keep-alive': 'timeout=2' }).end('ok'));
        try {
            const api = new Client();
            const longSent = performance.now();
            await api.get(`${server.url}/ok?hint=timeout%3D4`);
            const longReleased = performance.now();
            const long = await freeSocket(api);
            await api.get(`${other.url}/`);
            const shortReleased = performance.now();
            const sockets = Object.values(api.agents.http.freeSockets).flat();
            expect(sockets).toHaveLength(2);
            const short = sockets.find((socket) => socket !== long)!;
            // Idle 1 s allowed, not the 3 s of the connection pooled before it.
            expect(await closeOf(short, 4000)).toBeLessThan(shortReleased + 2000);
            expect(long.destroyed).toBe(false);
            const longClosed = await closeOf(long, 6000);
            expect(longClosed - longSent).toBeGreaterThanOrEqual(4000 - keepAliveMarginMs - 20);
            expect(longClosed - longReleased).toBeLessThan(4000);
        } finally {
            await other.close();
        }
    });
});

/** When `socket` closed (performance.now()); fails the test if it stays open `limit` ms. */
async function closeOf(socket: Socket, limit: number): Promise<number> {
    const timer = setTimeout(() => socket.emit('error', new Error(`still open after ${limit} ms`)), limit);
    try {
        await once(socket, 'close');
        return performance.now();
    } finally {
        clearTimeout(timer);
    }
}

/** The one idle connection of the client's http pool, once it is back in the pool. */
async function freeSocket(api: Client): Promise<Socket> {
    await settle();
    const sockets = Object.values(api.agents.http.freeSockets).flat();
    expect(sockets).toHaveLength(1);
    return sockets[0] as Socket;
}
