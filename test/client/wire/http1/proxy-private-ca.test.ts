import { Agent as HttpAgent } from 'node:http';
import { createServer, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../../../src/client/index.js';
import { isHttpError } from '../../../../src/errors/index.js';
import { selfSignedCertificate } from '../../helpers.js';
import { startProxy, type TestProxy } from '../../test-proxy.js';

/**
 * A private CA behind a proxy: the TLS settings of a custom https agent (its CA, client certificate,
 * server name, protocol versions) apply to the origin inside a CONNECT tunnel as on a direct connection.
 */

interface Greeting {
    servername: string | false | null;
    protocol: string | null;
    clientCertificate: boolean;
}

let originUrl: string;
let closeOrigin: () => Promise<void>;
let proxy: TestProxy;
const { key, cert } = selfSignedCertificate();

beforeAll(async () => {
    // Asks for a client certificate without requiring one: the answer says whether one came.
    const server = createServer({ key, cert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
        const socket = req.socket as TLSSocket;
        const greeting: Greeting = {
            servername: socket.servername,
            protocol: socket.getProtocol(),
            clientCertificate: Object.keys(socket.getPeerCertificate()).length > 0
        };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(greeting));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    originUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    closeOrigin = () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(() => resolve()));
    };
    proxy = await startProxy();
});

afterAll(async () => {
    await Promise.all([closeOrigin(), proxy.close()]);
});

function clientWith(httpsOptions: ConstructorParameters<typeof HttpsAgent>[0]): Client {
    const https = new HttpsAgent({ keepAlive: true, ...httpsOptions });
    return new Client().defaults({
        agents: { http: new HttpAgent(), https, httpsAllowUnauthorized: https }
    });
}

describe('proxy: the custom https agent TLS settings apply to the origin inside the tunnel', () => {
    it('the test CA on the agent: the origin is trusted directly and through the proxy alike', async () => {
        const api = clientWith({ ca: cert, servername: 'localhost', maxVersion: 'TLSv1.2', cert, key });
        const direct = await api.get<Greeting>(originUrl, { json: true });
        const tunnelled = await api.get<Greeting>(originUrl, { json: true, proxy: proxy.url });
        expect(direct.payload).toEqual({ servername: 'localhost', protocol: 'TLSv1.2', clientCertificate: true });
        expect(tunnelled.payload).toEqual(direct.payload);
        expect(proxy.tunnels.map((tunnel) => tunnel.target)).toEqual([new URL(originUrl).host]);
    });

    it('checkServerIdentity of the agent is called for the origin inside the tunnel', async () => {
        const names: string[] = [];
        const api = clientWith({
            ca: cert,
            checkServerIdentity: (host) => {
                names.push(host);
                return undefined;
            }
        });
        await api.get(originUrl, { proxy: proxy.url });
        expect(names).toEqual(['127.0.0.1']);
    });

    it('without the CA: refused with a 502 naming the cause, directly and through the proxy', async () => {
        const api = clientWith({});
        for (const proxyOption of [false, proxy.url]) {
            const err = await api.get(originUrl, { proxy: proxyOption }).catch((e: unknown) => e);
            expect(isHttpError(err, 502)).toBe(true);
            // Node 24+ appends a hint about --use-system-ca.
            expect((err as Error).message).toMatch(/^Client request error: self-signed certificate(;|$)/);
        }
    });

    it('a setting of the request wins over the agent: rejectUnauthorized false reaches an untrusted origin', async () => {
        const api = new Client();
        const { res } = await api.get(originUrl, { proxy: proxy.url, rejectUnauthorized: false });
        expect(res.statusCode).toBe(200);
    });
});
