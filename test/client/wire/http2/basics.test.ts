import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client, client } from '../../../../src/client/index.js';
import { expectReleased, timersBefore } from './released.js';
import { type Http2TestServer, startHttp2 } from './servers.js';

/** The first look at the `http2` option (README "HTTP/2"): a request on a session, many on one. */

describe('HTTP/2: a request on a session', () => {
    let server: Http2TestServer;
    let timers = 0;
    beforeAll(async () => {
        server = await startHttp2((req, res) => {
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify({ path: req.url, method: req.method, version: req.httpVersion }));
        });
    });
    afterAll(() => server.close());
    beforeEach(() => {
        timers = timersBefore();
    });

    it('gets a response over HTTP/2 negotiated by ALPN', async () => {
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false, json: true });
        const { res, payload } = await api.get<{ path: string; version: string }>(`${server.url}/a?b=1`);
        expect(res.statusCode).toBe(200);
        expect(res.httpVersion).toBe('2.0');
        expect(res.statusMessage).toBe('OK');
        expect(payload).toEqual({ path: '/a?b=1', method: 'GET', version: '2.0' });
        await expectReleased(api, [server], timers);
    });

    it('carries concurrent requests on one session', async () => {
        const before = server.sessions.length;
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const results = await Promise.all(
            Array.from({ length: 20 }, (_, i) => api.get(`${server.url}/${i}`, { json: true }))
        );
        expect(results.map(({ res }) => res.statusCode)).toEqual(Array(20).fill(200));
        expect(server.sessions.length - before).toBe(1);
        await expectReleased(api, [server], timers);
    });

    it('is off by default: the ready client speaks HTTP/1.1', async () => {
        const allowing = await startHttp2((_req, res) => res.end('ok'), { allowHTTP1: true });
        try {
            const { res } = await client.get(`${allowing.url}/`, { rejectUnauthorized: false });
            expect(res.httpVersion).toBe('1.1');
            expect(allowing.sessions).toHaveLength(0);
        } finally {
            client.agents.httpsAllowUnauthorized.destroy();
            await allowing.close();
        }
    });
});
