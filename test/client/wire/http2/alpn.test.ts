import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { createServer as createTlsServer } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../../../src/client/index.js';
import type { Http2Request } from '../../../../src/client/wire/http2/request.js';
import { selfSignedCertificate } from '../../helpers.js';
import { clientSessions, expectReleased, timersBefore } from './released.js';
import { rejection } from './settling.js';

/**
 * What ALPN decides for an https origin with the `http2` option (README "HTTP/2"): a server that
 * offers only `http/1.1`, or no protocol at all, is spoken to in HTTP/1.1 — the first request on the
 * very connection whose handshake said so, the later ones through the agents — and the answer is
 * remembered per origin. (A server that picks h2: sessions.test.ts.)
 */

let timers = 0;
beforeEach(() => {
    timers = timersBefore();
});

describe('HTTP/2 ALPN: an origin whose server offers only http/1.1', () => {
    let server: HttpsServer;
    let url: string;
    const connections: Socket[] = [];
    const versions: string[] = [];
    beforeEach(async () => {
        connections.length = 0;
        versions.length = 0;
        server = createHttpsServer({ ...selfSignedCertificate(), ALPNProtocols: ['http/1.1'] }, (req, res) => {
            versions.push(req.httpVersion);
            setTimeout(() => res.end(`${req.url} on connection ${connections.indexOf(req.socket)}`), 20);
        });
        server.on('secureConnection', (socket: Socket) => connections.push(socket));
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterEach(async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
    });

    it('serves the first request over HTTP/1.1 on the very connection ALPN answered on, then the later ones through the agents', async () => {
        const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const first = await api.get(`${url}/first`);
        expect(first.res.httpVersion).toBe('1.1');
        expect(String(first.payload)).toBe('/first on connection 0');
        expect(connections).toHaveLength(1);
        // That connection carried the one exchange: it is not in the agents' pool.
        await expect.poll(() => connections[0]?.destroyed).toBe(true);

        // Remembered for the origin: no ALPN offer any more, the agents' keep-alive connections.
        const second = await api.get(`${url}/second`);
        const third = await api.get(`${url}/third`);
        expect(second.res.httpVersion).toBe('1.1');
        expect(String(second.payload)).toBe('/second on connection 1');
        expect(String(third.payload)).toBe('/third on connection 1');
        expect(connections).toHaveLength(2);
        expect(clientSessions(api.agents)).toBe(0);
        api.agents.httpsAllowUnauthorized.destroy();
        await expect.poll(() => connections.every((socket) => socket.destroyed)).toBe(true);
        await expectReleased(api, [], timers);
    });

    it('shows the HTTP/1.1 request through promise.req: its socket, its events, its abort', async () => {
        const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const promise = api.request('GET', `${url}/seen`);
        const req = promise.req as unknown as Http2Request;
        const events: string[] = [];
        for (const name of ['response', 'finish', 'close']) {
            req.on(name, () => events.push(name));
        }

        const res = await promise;
        expect(res.httpVersion).toBe('1.1');
        expect(req.socket?.remotePort).toBe((server.address() as AddressInfo).port);
        await api.read(res);
        await expect.poll(() => events).toEqual(['finish', 'response', 'close']);

        // Aborted through it once the HTTP/1.1 request is out, on a client that has yet to learn the origin's answer.
        const fresh = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const aborted = fresh.request('GET', `${url}/aborted`);
        aborted.req?.once('finish', () => aborted.req?.abort());
        await expect(aborted).rejects.toThrow('Client request aborted');
        await expectReleased(api, [], timers);
        await expectReleased(fresh, [], timers);
    });

    it('sends the requests that waited for that first connection through the agents', async () => {
        const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const results = await Promise.all([1, 2, 3].map((n) => api.get(`${url}/${n}`)));
        expect(results.map(({ res }) => res.httpVersion)).toEqual(['1.1', '1.1', '1.1']);
        expect(versions).toEqual(['1.1', '1.1', '1.1']);
        // The first on the negotiated connection, the two others on the agent's own.
        expect(String(results[0]?.payload)).toBe('/1 on connection 0');
        expect(connections).toHaveLength(3);
        await expectReleased(api, [], timers);
        await expect.poll(() => connections.every((socket) => socket.destroyed)).toBe(true);
    });
});

describe('HTTP/2 ALPN: edges of the HTTP/1.1 answer', () => {
    let server: HttpsServer;
    let url: string;
    let bodies: string[];
    let requests: number;
    let cut: boolean;
    beforeEach(async () => {
        bodies = [];
        requests = 0;
        cut = false;
        server = createHttpsServer({ ...selfSignedCertificate(), ALPNProtocols: ['http/1.1'] }, (req, res) => {
            requests++;
            if (cut) {
                req.socket.destroy();
                return;
            }

            let body = '';
            req.on('data', (chunk: Buffer) => {
                body += chunk;
            });
            req.on('end', () => {
                bodies.push(body);
                setTimeout(() => res.end(`${req.method} ${body}`), 20);
            });
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterEach(async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
    });

    it('sends a stream payload over the negotiated HTTP/1.1 connection', async () => {
        const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const { res, payload } = await api.post(`${url}/`, { payload: Readable.from(['stre', 'amed']) });
        expect(res.httpVersion).toBe('1.1');
        expect(String(payload)).toBe('POST streamed');
        await expectReleased(api, [], timers);
    });

    it('a first request aborted while others wait for the connection: they go through the agents, the connection is closed', async () => {
        const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const first = api.request('GET', `${url}/first`);
        const others = [api.get(`${url}/second`), api.get(`${url}/third`)];
        first.req?.abort();
        await expect(first).rejects.toThrow('Client request aborted');
        const results = await Promise.all(others);
        expect(results.map(({ res }) => res.httpVersion)).toEqual(['1.1', '1.1']);
        expect(requests).toBe(2);
        await expectReleased(api, [], timers);
    });

    it('a server that closes the negotiated connection before answering: a 502, as over HTTP/1.1', async () => {
        cut = true;
        const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const err = await rejection(api.get(`${url}/`));
        expect(err.output.statusCode).toBe(502);
        expect(err.message).toMatch(/^Client request error: socket hang up/);
        await expectReleased(api, [], timers);
    });

    it('req.destroy(err) through promise.req destroys the HTTP/1.1 request that carries it', async () => {
        const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
        const promise = api.request('POST', `${url}/`, { payload: 'x' });
        const req = promise.req as unknown as Http2Request;
        req.once('finish', () => req.destroy(new Error('gone')));
        const err = await rejection(promise);
        expect(err.message).toBe('Client request error: gone');
        expect(req.writableFinished).toBe(true);
        await expectReleased(api, [], timers);
    });
});

describe('HTTP/2 ALPN: a server that answers no protocol at all', () => {
    it('is spoken to in HTTP/1.1', async () => {
        // A TLS server without ALPN, answering HTTP/1.1 by hand.
        const sockets = new Set<Socket>();
        const server = createTlsServer(selfSignedCertificate(), (socket) => {
            sockets.add(socket);
            socket.on('error', () => {});
            socket.once('data', () =>
                socket.end('HTTP/1.1 200 OK\r\ncontent-length: 8\r\nconnection: close\r\n\r\nno alpn.')
            );
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
            const api = new Client().defaults({ http2: true, rejectUnauthorized: false });
            const { res, payload } = await api.get(`https://127.0.0.1:${(server.address() as AddressInfo).port}/`);
            expect(res.httpVersion).toBe('1.1');
            expect(String(payload)).toBe('no alpn.');
            expect(clientSessions(api.agents)).toBe(0);
            await expectReleased(api, [], timers);
        } finally {
            for (const socket of sockets) {
                socket.destroy();
            }

            await new Promise((resolve) => server.close(resolve));
        }
    });
});
