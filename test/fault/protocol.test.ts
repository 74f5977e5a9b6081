import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { isHttpError } from '../../src/errors/index.js';
import { body, socketCount } from '../client/helpers.js';

/**
 * What real servers do that a plain test server does not: HTTP/1.0 bodies without a length,
 * `Connection: close` on a pooled connection, `Expect: 100-continue`, trailers.
 */

let url: string;
let closeServer: () => Promise<void>;
let rawUrl: string;
let closeRaw: () => Promise<void>;

beforeAll(async () => {
    const server = createHttpServer(async (req: IncomingMessage, res: ServerResponse) => {
        switch (req.url) {
            case '/close':
                res.setHeader('connection', 'close');
                res.end(`closing ${req.socket.remotePort}`);
                return;
            case '/trailers':
                res.writeHead(200, { trailer: 'x-checksum' });
                res.write('part one, ');
                res.addTrailers({ 'x-checksum': 'abc123' });
                res.end('part two');
                return;
            default:
                res.end(`${req.method} ${await body(req)}`);
        }
    });
    // Expect: 100-continue: the body is accepted under /continue, refused with 417 elsewhere.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
        if (req.url === '/continue') {
            res.writeContinue();
            server.emit('request', req, res);
            return;
        }

        res.writeHead(417, { connection: 'close' }).end('not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    closeServer = () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(() => resolve()));
    };

    // An HTTP/1.0 server: no content-length, the body ends when the connection closes.
    const sockets = new Set<Socket>();
    const raw = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.once('data', () => {
            socket.end('HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the connection closes');
        });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    rawUrl = `http://127.0.0.1:${(raw.address() as { port: number }).port}`;
    closeRaw = () => {
        for (const socket of sockets) {
            socket.destroy();
        }

        return new Promise((resolve) => raw.close(() => resolve()));
    };
});

afterAll(async () => {
    await Promise.all([closeServer(), closeRaw()]);
});

describe('protocol: what production servers send', () => {
    it('an HTTP/1.0 response without content-length: the body runs until the close, the socket is not pooled', async () => {
        const api = new Client();
        for (let i = 0; i < 3; i++) {
            const { res, payload } = await api.get<Buffer>(rawUrl);
            expect(res.httpVersion).toBe('1.0');
            expect(payload.toString()).toBe('until the connection closes');
        }

        // A socket leaves its agent on its close, an I/O callback that a loaded machine can delay.
        await expect.poll(() => socketCount(api.agents.http)).toBe(0);
    });

    it('Connection: close on a pooled connection: the next request takes a new one, nothing fails', async () => {
        const api = new Client();
        const ports = new Set<string>();
        for (let i = 0; i < 5; i++) {
            const { payload } = await api.get<Buffer>(`${url}/close`);
            ports.add(payload.toString());
        }

        expect(ports.size).toBe(5);
        await expect.poll(() => socketCount(api.agents.http)).toBe(0);
    });

    it('Expect: 100-continue: the body follows the 100, and a 417 is the response', async () => {
        const api = new Client();
        const { payload } = await api.post<Buffer>(`${url}/continue`, {
            payload: 'the body',
            headers: { expect: '100-continue' }
        });
        expect(payload.toString()).toBe('POST the body');
        const err = await api
            .post(`${url}/elsewhere`, { payload: 'the body', headers: { expect: '100-continue' } })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 417)).toBe(true);
        api.agents.http.destroy();
    });

    it('trailers: the body is whole and the trailers are on the response once read', async () => {
        const api = new Client();
        const { res, payload } = await api.get<Buffer>(`${url}/trailers`);
        expect(payload.toString()).toBe('part one, part two');
        expect(res.trailers).toEqual({ 'x-checksum': 'abc123' });
        api.agents.http.destroy();
    });
});
