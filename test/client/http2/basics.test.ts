import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../../src/client/index.js';
import { type Http2TestServer, startHttp2 } from './servers.js';

describe('HTTP/2: a request on a session', () => {
    let server: Http2TestServer;
    beforeAll(async () => {
        server = await startHttp2((req, res) => {
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify({ path: req.url, method: req.method, version: req.httpVersion }));
        });
    });
    afterAll(() => server.close());

    it('gets a response over HTTP/2 negotiated by ALPN', async () => {
        const api = client.defaults({ http2: true, rejectUnauthorized: false, json: true });
        const { res, payload } = await api.get<{ path: string; version: string }>(`${server.url}/a?b=1`);
        expect(res.statusCode).toBe(200);
        expect(res.httpVersion).toBe('2.0');
        expect(res.statusMessage).toBe('OK');
        expect(payload).toEqual({ path: '/a?b=1', method: 'GET', version: '2.0' });
    });

    it('carries concurrent requests on one session', async () => {
        const before = server.sessions.length;
        const api = client.defaults({ http2: true, rejectUnauthorized: false, agents: undefined });
        const results = await Promise.all(
            Array.from({ length: 20 }, (_, i) => api.get(`${server.url}/${i}`, { json: true }))
        );
        expect(results.map(({ res }) => res.statusCode)).toEqual(Array(20).fill(200));
        expect(server.sessions.length - before).toBeLessThanOrEqual(1);
    });
});
