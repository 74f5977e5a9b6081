import * as dns from 'node:dns';
import { once } from 'node:events';
import type { ClientHttp2Stream } from 'node:http2';
import type { LookupFunction } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, type Timings } from '../../../../src/client/index.js';
import type { Http2Request } from '../../../../src/client/wire/http2/request.js';
import { clientSessions, expectReleased, timersBefore } from './released.js';
import { type Http2Handler, type Http2TestServer, type Relay, startHttp2, startRelay } from './servers.js';

/**
 * The sessions of the `http2` option (README "HTTP/2"): what ALPN picks, h2c, one connection per
 * origin carrying many streams, another only when the server's limit (or `maxConcurrentStreams`) is
 * reached, idle sessions unref'd and closed after `idleTimeout`.
 */

const answer: Http2Handler = (req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, version: req.httpVersion }));
};

// Answers after `ms` milliseconds, so that requests overlap.
const slowly =
    (ms: number): Http2Handler =>
    (req, res) => {
        setTimeout(() => answer(req, res), ms);
    };

let timers = 0;
beforeEach(() => {
    timers = timersBefore();
});

describe('HTTP/2 sessions: ALPN decides the protocol of an https origin', () => {
    let server: Http2TestServer;
    afterEach(() => server.close());

    it('speaks HTTP/2 when the server picks h2, on one TLS connection', async () => {
        server = await startHttp2(answer);
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const { res, payload } = await api.get(`${server.url}/a?b=1`, { json: true });
        expect(res.httpVersion).toBe('2.0');
        expect(payload).toEqual({ path: '/a?b=1', version: '2.0' });
        expect((server.connections[0] as TLSSocket).alpnProtocol).toBe('h2');
        expect(server.connections).toHaveLength(1);
        await expectReleased(api, [server], timers);
    });

    it('speaks HTTP/2 to an IPv6 literal origin', async () => {
        server = await startHttp2(answer, { host: '::1' });
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const { res, payload } = await api.get(`${server.url}/six`, { json: true });
        expect(server.url).toMatch(/^https:\/\/\[::1\]:\d+$/);
        expect(res.httpVersion).toBe('2.0');
        expect(payload).toEqual({ path: '/six', version: '2.0' });
        await expectReleased(api, [server], timers);
    });

    it('speaks HTTP/1.1 when http2 is not on, as by default', async () => {
        server = await startHttp2(answer, { allowHTTP1: true });
        const api = new Client().defaults({ rejectUnauthorized: false });
        const { res } = await api.get(`${server.url}/`);
        expect(res.httpVersion).toBe('1.1');
        expect(server.sessions).toHaveLength(0);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 sessions: h2c, cleartext HTTP/2 with prior knowledge', () => {
    let server: Http2TestServer;
    afterEach(() => server.close());

    it('speaks HTTP/2 to an http URL with h2c: true', async () => {
        server = await startHttp2(answer, { h2c: true });
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const { res, payload } = await api.get(`${server.url}/clear`, { json: true });
        expect(res.httpVersion).toBe('2.0');
        expect(payload).toEqual({ path: '/clear', version: '2.0' });
        expect(server.sessions).toHaveLength(1);
        await expectReleased(api, [server], timers);
    });

    it('speaks HTTP/2 over socketPath with h2c: true', async () => {
        server = await startHttp2(answer, { h2c: true, unix: true });
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const { res, payload } = await api.get('http://localhost/over-unix', {
            json: true,
            socketPath: server.socketPath
        });
        expect(res.httpVersion).toBe('2.0');
        expect(payload).toEqual({ path: '/over-unix', version: '2.0' });
        await expectReleased(api, [server], timers);
    });

    it('keeps HTTP/1.1 for http URLs without h2c', async () => {
        server = await startHttp2(answer, { h2c: true });
        const api = new Client().defaults({ http2: true });
        // An h2c server does not speak HTTP/1.1: the request fails rather than being sent as h2.
        await expect(api.get(`${server.url}/`, { timeout: 2000 })).rejects.toThrow();
        expect(server.sessions.length).toBeLessThanOrEqual(1);
        expect(clientSessions(api.agents)).toBe(0);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 sessions: one connection per origin carries many streams', () => {
    let server: Http2TestServer;
    afterEach(() => server.close());

    it('opens ONE connection for concurrent first requests to a new origin', async () => {
        server = await startHttp2(slowly(20));
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api.get(`${server.url}/${i}`)));
        expect(results.map(({ res }) => res.httpVersion)).toEqual(Array(20).fill('2.0'));
        expect(server.connections).toHaveLength(1);
        expect(server.streams).toHaveLength(20);
        // Only the first hop opened the connection (its moments are its timings); the others waited for it.
        expect(
            results.filter(({ res }) => (res as { timings?: { connect?: number } }).timings?.connect !== undefined)
        ).toHaveLength(1);
        await expectReleased(api, [server], timers);
    });

    it('shows the sharing to the caller (docs/client.md "Seeing that streams share a session")', async () => {
        server = await startHttp2(slowly(20));
        const traced = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false, events: true });
        const seen: {
            req: Http2Request;
            session: unknown;
            timings: Timings;
        }[] = [];
        traced.events?.on('response', (_err, details) => {
            const req = details.req as unknown as Http2Request;
            // (A stream's `session` is unset once the stream is closed: read it while it is open.)
            seen.push({ req, session: req.stream?.session, timings: details.timings });
        });
        await Promise.all([0, 1, 2].map((i) => traced.get(`${server.url}/${i}`)));
        await traced.get(`${server.url}/later`);
        const [first] = seen;
        expect(first?.session).toBeDefined();
        for (const { req, session } of seen) {
            expect(req.socket).toBe(first?.req.socket);
            expect(session).toBe(first?.session);
        }

        expect(seen.map(({ req }) => req.stream?.id).sort()).toEqual([1, 3, 5, 7]);
        // One stream opened the session: it alone is not on a reused connection, and has the connection's phases.
        const opener = seen.filter(({ req }) => !req.reusedSocket);
        expect(opener).toHaveLength(1);
        expect(opener[0]?.timings.phases.tcp).toBeDefined();
        expect(opener[0]?.timings.phases.tls).toBeDefined();
        for (const { req, timings } of seen) {
            if (req.reusedSocket) {
                expect(timings.connect).toBeUndefined();
                expect(timings.phases.tls).toBeUndefined();
            }
        }

        expect(server.connections).toHaveLength(1);
        await expectReleased(traced, [server], timers);
    });

    it('lets requests that come while the connection waits for the server SETTINGS wait for it too', async () => {
        server = await startHttp2(answer, { h2c: true });
        // The server's bytes (its SETTINGS first) reach the client 150 ms late: the connection is up, the session not ready.
        const relay = await startRelay(server, 150);
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const first = api.get(`${relay.url}/1`);
        await expect.poll(() => relay.connections).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 40));
        const second = api.get(`${relay.url}/2`);
        const results = await Promise.all([first, second]);
        expect(results.map(({ res }) => res.statusCode)).toEqual([200, 200]);
        expect(relay.connections).toBe(1);
        await expectReleased(api, [server, relay], timers);
        await relay.close();
    });

    it('shares a session between requests that each give an http2 object of the same settings', async () => {
        server = await startHttp2(answer);
        const api = new Client().defaults({ rejectUnauthorized: false });
        for (let i = 0; i < 3; i++) {
            const { res } = await api.get(`${server.url}/${i}`, { http2: { idleTimeout: 100 } });
            expect(res.httpVersion).toBe('2.0');
        }

        expect(server.connections).toHaveLength(1);
        await expectReleased(api, [server], timers);
    });

    it("parts sessions by the request's TLS options, family and hints, not by its lookup (as Node's agents)", async () => {
        server = await startHttp2(answer);
        // Idle sessions must outlive the steps below on a loaded machine (100 ms did not), and each
        // `lookup` step comes right after the session it should share.
        const api = new Client().defaults({ http2: { idleTimeout: 500 }, rejectUnauthorized: false });
        const lookup = (): LookupFunction =>
            ((hostname: string, options: object, callback: never) =>
                dns.lookup(hostname, options, callback)) as unknown as LookupFunction;
        const connectionsFor = async (options: object): Promise<number> => {
            const { res } = await api.get(`${server.url}/`, options);
            expect(res.httpVersion).toBe('2.0');
            return server.connections.length;
        };
        expect(await connectionsFor({})).toBe(1);
        expect(await connectionsFor({ lookup: lookup() })).toBe(1);
        expect(await connectionsFor({ lookup: lookup() })).toBe(1);
        expect(await connectionsFor({ ciphers: 'DEFAULT' })).toBe(2);
        expect(await connectionsFor({ ciphers: 'DEFAULT', lookup: lookup() })).toBe(2);
        expect(await connectionsFor({ secureProtocol: 'TLS_method' })).toBe(3);
        expect(await connectionsFor({ family: 4 })).toBe(4);
        expect(await connectionsFor({ hints: dns.ADDRCONFIG })).toBe(5);
        await expectReleased(api, [server], timers);
    });

    it('carries sequential requests on the same session', async () => {
        server = await startHttp2(answer);
        const api = new Client().defaults({ http2: { idleTimeout: 200 }, rejectUnauthorized: false });
        for (let i = 0; i < 5; i++) {
            await api.get(`${server.url}/${i}`);
        }

        expect(server.connections).toHaveLength(1);
        expect(server.streams.map((stream) => stream.id)).toEqual([1, 3, 5, 7, 9]);
        await expectReleased(api, [server], timers);
    });

    it('opens a second session only when the first is full (SETTINGS_MAX_CONCURRENT_STREAMS 1)', async () => {
        server = await startHttp2(slowly(50), { settings: { maxConcurrentStreams: 1 } });
        const api = new Client().defaults({ http2: { idleTimeout: 300 }, rejectUnauthorized: false });
        await api.get(`${server.url}/alone`);
        await api.get(`${server.url}/alone-again`);
        expect(server.connections).toHaveLength(1);

        const results = await Promise.all([1, 2].map((n) => api.get(`${server.url}/pair-${n}`)));
        expect(results.map(({ res }) => res.statusCode)).toEqual([200, 200]);
        expect(server.connections).toHaveLength(2);
        await expectReleased(api, [server], timers);
    });

    it('never puts more streams on a session than the server allows, however many wait', async () => {
        server = await startHttp2(slowly(30), { settings: { maxConcurrentStreams: 2 } });
        const api = new Client().defaults({ http2: { idleTimeout: 200 }, rejectUnauthorized: false });
        const busiest = trackConcurrency(server);
        const results = await Promise.all(Array.from({ length: 9 }, (_, i) => api.get(`${server.url}/${i}`)));
        expect(results.map(({ res }) => res.statusCode)).toEqual(Array(9).fill(200));
        expect(busiest()).toBe(2);
        expect(server.connections.length).toBeGreaterThanOrEqual(2);
        expect(server.connections.length).toBeLessThanOrEqual(5);
        await expectReleased(api, [server], timers);
    });

    it('hands a request that opened a connection a stream freed meanwhile; its connection becomes a session for the next ones', async () => {
        const held: (() => void)[] = [];
        server = await startHttp2(
            (req, res) => {
                if (req.url === '/held') {
                    held.push(() => answer(req, res));
                } else {
                    answer(req, res);
                }
            },
            { h2c: true, settings: { maxConcurrentStreams: 1 } }
        );
        // The second connection's SETTINGS come late: the first session frees its stream before.
        const relay: Relay = await startRelay(server, (n) => (n === 1 ? 300 : 0));
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 500 } });
        const first = api.get(`${relay.url}/held`);
        await expect.poll(() => held.length).toBe(1);
        const second = api.get(`${relay.url}/second`);
        await expect.poll(() => server.sessions.length).toBe(2);
        held[0]?.();
        const [a, b] = await Promise.all([first, second]);
        expect([a.res.statusCode, b.res.statusCode]).toEqual([200, 200]);
        // The second went out on the first session, as soon as that had room.
        expect(server.streams.map((stream) => server.sessionOf(stream))).toEqual([0, 0]);
        expect(b.res.timings.phases.total).toBeLessThan(300);

        // The second connection is a session all the same: with both, two requests run at once.
        const pair = await Promise.all([api.get(`${relay.url}/3`), api.get(`${relay.url}/4`)]);
        expect(pair.map(({ res }) => res.statusCode)).toEqual([200, 200]);
        expect(relay.connections).toBe(2);
        await expectReleased(api, [server, relay], timers);
        await relay.close();
    });

    it('keeps to maxConcurrentStreams below the server limit', async () => {
        server = await startHttp2(slowly(50));
        const api = new Client().defaults({
            http2: { maxConcurrentStreams: 2, idleTimeout: 200 },
            rejectUnauthorized: false
        });
        const busiest = trackConcurrency(server);
        const results = await Promise.all(Array.from({ length: 6 }, (_, i) => api.get(`${server.url}/${i}`)));
        expect(results.map(({ res }) => res.statusCode)).toEqual(Array(6).fill(200));
        expect(busiest()).toBe(2);
        expect(server.connections).toHaveLength(3);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 sessions: idle sessions', () => {
    let server: Http2TestServer;
    afterEach(() => server.close());

    it('does not keep the process alive while idle, and does while a stream is open', async () => {
        let release: () => void = () => {};
        server = await startHttp2((req, res) => {
            release = () => answer(req, res);
        });
        const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const sockets = () => process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length;
        const baseline = sockets();
        const pending = api.get(`${server.url}/held`);
        await expect.poll(() => server.streams.length).toBe(1);
        expect(sockets()).toBeGreaterThan(baseline);
        release();
        await pending;
        // Only the server's side of the connection is left keeping the loop alive.
        await expect.poll(() => sockets()).toBe(baseline + 1);
        expect(clientSessions(api.agents)).toBe(1);
        await server.close();
        await expectReleased(api, [server], timers);
    });

    it('closes a session after idleTimeout without a stream, and opens a new one for the next request', async () => {
        server = await startHttp2(answer);
        const api = new Client().defaults({ http2: { idleTimeout: 80 }, rejectUnauthorized: false });
        await api.get(`${server.url}/1`);
        await api.get(`${server.url}/2`);
        expect(server.connections).toHaveLength(1);
        await expect.poll(() => server.openSessions()).toBe(0);
        expect(clientSessions(api.agents)).toBe(0);
        const { res } = await api.get(`${server.url}/3`);
        expect(res.httpVersion).toBe('2.0');
        expect(server.connections).toHaveLength(2);
        await expectReleased(api, [server], timers);
    });

    it('gives up a session whose server closed it while idle, and opens a new one', async () => {
        server = await startHttp2(answer);
        const api = new Client().defaults({ http2: { idleTimeout: 200 }, rejectUnauthorized: false });
        await api.get(`${server.url}/1`);
        server.sessions[0]?.close();
        await expect.poll(() => clientSessions(api.agents)).toBe(0);
        const { res } = await api.get(`${server.url}/2`);
        expect(res.statusCode).toBe(200);
        expect(server.connections).toHaveLength(2);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 sessions: a closed stream lets go of its call', () => {
    let server: Http2TestServer;
    afterEach(() => server.close());

    // Node keeps closed streams reachable for a while (often past a young-generation collection): one
    // still pointing at its call would keep the call's objects alive with it (docs/performance.md).
    it('once closed, the stream refers to none of the request, the exchange, the response or the body', async () => {
        server = await startHttp2(answer);
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        // The first call of a process loads the HTTP/2 code first, and has no promise.req (docs/client.md).
        await api.get(`${server.url}/first`);
        for (const read of ['read', 'destroyed'] as const) {
            const promise = api.request('GET', `${server.url}/${read}`);
            const req = promise.req as unknown as Http2Request;
            // The open stream points at its exchange (exchange.ts): taken from it as the response arrives.
            let exchange: unknown;
            req.once('response', () => {
                const stream = req.stream as unknown as Record<symbol, unknown>;
                const key = Object.getOwnPropertySymbols(stream).find(
                    (symbol) => symbol.description === 'tracewire.http2Exchange'
                );
                exchange = key === undefined ? undefined : stream[key];
            });
            const res = await promise;
            expect(exchange).toBeInstanceOf(Object);
            const payload = read === 'read' ? await api.read(res) : res.destroy();
            if (!req.destroyed) {
                await once(req, 'close');
            }

            const stream = req.stream as ClientHttp2Stream;
            expect(stream.closed).toBe(true);
            const held = Reflect.ownKeys(stream).map((key) => (stream as unknown as Record<PropertyKey, unknown>)[key]);
            for (const part of [req, exchange, res, payload]) {
                expect(held, read).not.toContain(part);
            }
        }

        await expectReleased(api, [server], timers);
    });
});

/** The most streams the server had open at once on any one session. */
function trackConcurrency(server: Http2TestServer): () => number {
    const open = new Map<unknown, number>();
    let busiest = 0;
    server.server.on('stream', (stream) => {
        const session = stream.session;
        open.set(session, (open.get(session) ?? 0) + 1);
        busiest = Math.max(busiest, open.get(session) ?? 0);
        stream.once('close', () => open.set(session, (open.get(session) ?? 1) - 1));
    });
    return () => busiest;
}
