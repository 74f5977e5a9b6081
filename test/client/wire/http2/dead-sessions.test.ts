import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../../../src/client/index.js';
import { refusedUrl } from '../../helpers.js';
import { frameType, type RawHttp2Server, startRawHttp2 } from './raw-server.js';
import { clientSockets, expectReleased, openSockets, timersBefore } from './released.js';
import { type Http2Handler, type Http2TestServer, type Relay, startHttp2, startRelay } from './servers.js';
import { codeOf, rejection, settled } from './settling.js';

/**
 * Sessions that die or never live (README "HTTP/2"): a connection that stops carrying bytes (its
 * PING goes unanswered), a connection refused, a certificate not trusted, a server that closes the
 * connection before its SETTINGS or never sends them, a session that fails while streams wait for it
 * or carry it. Every stream settles, as a 502 naming what happened, retryable where a new connection
 * may do better; nothing of the dead session is left.
 */

const hello: Http2Handler = (req, res) => {
    if (req.url === '/slow') {
        setTimeout(() => res.end('slow but here'), 300);
    } else {
        res.end('hello');
    }
};

let timers = 0;
beforeEach(() => {
    timers = timersBefore();
});

describe('HTTP/2 dead sessions: a session that stops answering PINGs', () => {
    let server: Http2TestServer;
    let relay: Relay;
    beforeEach(async () => {
        server = await startHttp2(hello, { h2c: true });
        relay = await startRelay(server);
    });
    afterEach(async () => {
        await relay.close();
        await server.close();
    });

    it('is closed after pingTimeout; its streams fail as a retryable 502 ETIMEDOUT', async () => {
        const api = new Client().defaults({
            http2: { h2c: true, pingInterval: 50, pingTimeout: 300, idleTimeout: 100 }
        });
        const { res } = await api.get(`${relay.url}/`);
        expect(res.statusCode).toBe(200);
        const pending = [api.get(`${relay.url}/slow`), api.get(`${relay.url}/slow`)];
        await expect.poll(() => server.streams.length).toBe(3);
        relay.freeze();
        const started = Date.now();
        for (const one of pending) {
            const err = await rejection(one);
            expect(err.output.statusCode).toBe(502);
            expect(codeOf(err)).toBe('ETIMEDOUT');
            expect(err.message).toMatch(/did not answer a PING within 300 ms/);
            expect((err.data as { http2?: { session?: unknown } }).http2?.session).toEqual({
                event: 'ping-timeout',
                pingTimeout: 300
            });
        }

        expect(Date.now() - started).toBeLessThan(2000);
        await expectReleased(api, [relay], timers);
    });

    it('with retry, its streams succeed on a new session', async () => {
        const api = new Client().defaults({
            http2: { h2c: true, pingInterval: 50, pingTimeout: 300, idleTimeout: 100 },
            retry: { limit: 1, backoff: () => 0 }
        });
        const pending = api.get(`${relay.url}/slow`);
        await expect.poll(() => server.streams.length).toBe(1);
        relay.freeze();
        const { res, payload } = await pending;
        expect(res.statusCode).toBe(200);
        expect(String(payload)).toBe('slow but here');
        expect(relay.connections).toBe(2);
        await expectReleased(api, [relay], timers);
    });

    it('an answered PING keeps a long stream going', async () => {
        const api = new Client().defaults({
            http2: { h2c: true, pingInterval: 30, pingTimeout: 1000, idleTimeout: 100 }
        });
        let pings = 0;
        server.server.once('session', (session) => session.on('ping', () => pings++));
        const { payload } = await api.get(`${relay.url}/slow`);
        expect(String(payload)).toBe('slow but here');
        expect(pings).toBeGreaterThanOrEqual(1);
        expect(relay.connections).toBe(1);
        await expectReleased(api, [relay], timers);
    });
});

describe('HTTP/2 dead sessions: connections that fail', () => {
    let raw: RawHttp2Server | undefined;
    afterEach(async () => {
        await raw?.close();
        raw = undefined;
    });

    it('a connection refused: a 502 ECONNREFUSED for the first request and those waiting for it', async () => {
        const api = new Client().defaults({ http2: { h2c: true } });
        const errs = await Promise.all([1, 2, 3].map(() => rejection(api.get(refusedUrl))));
        for (const err of errs) {
            expect(err.output.statusCode).toBe(502);
            expect(codeOf(err)).toBe('ECONNREFUSED');
        }

        await expectReleased(api, [], timers);
    });

    it('a certificate not trusted: a 502 naming it, unless rejectUnauthorized is false', async () => {
        const server = await startHttp2(hello);
        try {
            const api = new Client().defaults({ http2: { idleTimeout: 100 } });
            const err = await rejection(api.get(`${server.url}/`));
            expect(err.output.statusCode).toBe(502);
            expect(codeOf(err)).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
            expect(err.message).toMatch(/self[- ]signed certificate/);
            const { res } = await api.get(`${server.url}/`, { rejectUnauthorized: false });
            expect(res.httpVersion).toBe('2.0');
            await expectReleased(api, [server], timers);
        } finally {
            await server.close();
        }
    });

    it('a server that closes the connection right after TLS, before its SETTINGS: a 502 for every waiting request', async () => {
        raw = await startRawHttp2((connection) => connection.socket.destroy());
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const errs = await Promise.all([1, 2, 3].map(() => rejection(api.get(`${raw?.url}/`))));
        for (const err of errs) {
            expect(err.output.statusCode).toBe(502);
            expect(codeOf(err)).toMatch(/^ECONNRESET$|^ERR_HTTP2_/);
        }

        expect(raw.connections).toHaveLength(1);
        await expectReleased(api, [raw], timers);
    });

    it('a server that never sends its SETTINGS: the waiting requests fail after pingTimeout as a retryable 502 ETIMEDOUT', async () => {
        raw = await startRawHttp2(() => {}, { ackSettings: false });
        const api = new Client().defaults({ http2: { idleTimeout: 100, pingTimeout: 150 }, rejectUnauthorized: false });
        const errs = await Promise.all([1, 2].map(() => rejection(api.get(`${raw?.url}/`))));
        for (const err of errs) {
            expect(err.output.statusCode).toBe(502);
            expect(codeOf(err)).toBe('ETIMEDOUT');
            expect(err.message).toMatch(/did not send its SETTINGS within 150 ms/);
        }

        await expectReleased(api, [raw], timers);
    });

    it('a server that never sends its SETTINGS: a request timeout lets go of the connection', async () => {
        raw = await startRawHttp2(() => {}, { ackSettings: false });
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const err = await rejection(api.get(`${raw.url}/`, { timeout: 100 }));
        expect(err.output.statusCode).toBe(504);
        expect(openSockets()).toBe(0);
        await expectReleased(api, [raw], timers);
    });

    it('keeps the process alive while the first requests wait for the server SETTINGS', async () => {
        // h2c through a relay that holds the server's bytes: the connection is up, its session not ready.
        const server = await startHttp2(hello, { h2c: true });
        const relay = await startRelay(server, 200);
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const pending = api.get(`${relay.url}/`);
        await expect.poll(() => relay.connections).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 50));
        const [client] = clientSockets();
        expect(client?.connecting).toBe(false);
        expect((client as unknown as { _handle?: { hasRef(): boolean } })?._handle?.hasRef()).toBe(true);
        await pending;
        await expectReleased(api, [server, relay], timers);
        await relay.close();
        await server.close();
    });

    it('a session that fails while streams wait for it, and one that fails under its streams: every stream settles', async () => {
        raw = await startRawHttp2((connection) => {
            // A frame of a type that must come on stream 0 sent on stream 1 (a PROTOCOL_ERROR of the connection).
            connection.frame(frameType.settings, 0, 1, Buffer.alloc(0));
        });
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const waiting = await Promise.all([1, 2].map(() => rejection(api.get(`${raw?.url}/`))));
        for (const err of waiting) {
            expect(err.output.statusCode).toBe(502);
        }

        await raw.close();
        // nghttp2 ends this session with GOAWAY PROTOCOL_ERROR but Node tells nothing of it until the
        // server closes the connection, which this one does not: the unanswered PING finds it dead.
        const watched = api.defaults({ http2: { idleTimeout: 100, pingInterval: 50, pingTimeout: 100 } });
        raw = await startRawHttp2((connection) => {
            connection.settings();
            connection.on('request', (id: number) => {
                connection.headers(id, 200);
                if (connection.streams.length === 3) {
                    // A DATA frame on stream 0 (a PROTOCOL_ERROR of the connection) while three streams are open.
                    connection.frame(frameType.data, 0, 0, Buffer.from('x'));
                }
            });
        });
        const carried = await Promise.all([1, 2, 3].map(() => settled(watched.get(`${raw?.url}/`))));
        for (const { value, err } of carried) {
            expect(value).toBeUndefined();
            expect(err?.message).toBe('Payload stream closed prematurely');
        }

        await expectReleased(api, [raw], timers);
    });
});
