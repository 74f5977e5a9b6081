import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { isHttpError } from '../../src/errors/index.js';
import { selfSignedCertificate } from '../client/helpers.js';
import { type Nginx, type Squid, startNginx, startSquid } from './servers.js';

/**
 * The client through a real squid forward proxy (basic auth by its basic_ncsa_auth helper against an
 * htpasswd file made here) to a real nginx origin: absolute-form requests for http targets, CONNECT
 * tunnels for https ones, and the proxy's 407 with its HTML body.
 */

const text = 'tracewire through squid\n'.repeat(100);
let nginx: Nginx;
let squid: Squid;
let proxy: string;

beforeAll(async () => {
    [nginx, squid] = await Promise.all([
        startNginx({
            tls: selfSignedCertificate(),
            idleMs: 1000,
            maxRequests: 100,
            files: { 'text.txt': text },
            codings: {}
        }),
        startSquid('tracewire', 'squ1d-pa55')
    ]);
    proxy = `http://tracewire:squ1d-pa55@127.0.0.1:${squid.port}`;
}, 300_000);

afterAll(async () => {
    await Promise.all([nginx?.stop(), squid?.stop()]);
});

function trustingClient(): Client {
    return new Client().defaults({
        agents: {
            http: new HttpAgent({ keepAlive: true }),
            https: new HttpsAgent({ keepAlive: true, ca: selfSignedCertificate().cert }),
            httpsAllowUnauthorized: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
        }
    });
}

describe('squid: a forward proxy with basic auth', () => {
    it('carries an http target in absolute form, gzip decoded, connections reused', async () => {
        const api = new Client();
        for (let i = 0; i < 3; i++) {
            const { res, payload } = await api.get<Buffer>(`http://127.0.0.1:${nginx.ports.http}/text.txt`, {
                proxy,
                gunzip: true
            });
            expect(res.statusCode).toBe(200);
            expect(payload.toString()).toBe(text);
        }

        // Squid logs a transaction once it has sent the response, which the client may have read first.
        await expect
            .poll(
                () => squid.accessLog().filter((line) => line.includes(`127.0.0.1:${nginx.ports.http}/text.txt`)).length
            )
            .toBe(3);
    });

    it('tunnels to the https origin with the custom agent CA (CONNECT), as directly', async () => {
        const api = trustingClient();
        const url = `https://127.0.0.1:${nginx.ports.https}/text.txt`;
        for (let i = 0; i < 2; i++) {
            const { res, payload } = await api.get<Buffer>(url, { proxy, gunzip: true });
            expect(res.statusCode).toBe(200);
            expect(payload.toString()).toBe(text);
        }

        // Inside the tunnel: squid never sees the path (it logs the CONNECT once the tunnel closes).
        expect(squid.accessLog().filter((line) => line.includes(`${nginx.ports.https}/text.txt`))).toEqual([]);
    });

    it('refuses the tunnelled origin with a 502 naming the cause when the agent lacks the CA', async () => {
        const err = await new Client()
            .get(`https://127.0.0.1:${nginx.ports.https}/text.txt`, { proxy })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        // Node 24+ appends a hint about --use-system-ca.
        expect((err as Error).message).toMatch(/^Client request error: self-signed certificate(;|$)/);
    });

    it('407 without credentials or with a wrong password: a 502 naming the proxy, its body not waited for', async () => {
        const api = new Client();
        const anonymous = `http://127.0.0.1:${squid.port}`;
        const wrong = `http://tracewire:wrong@127.0.0.1:${squid.port}`;
        const cases = [
            [anonymous, `http://127.0.0.1:${nginx.ports.http}/text.txt`, 'request'],
            [anonymous, `https://127.0.0.1:${nginx.ports.https}/text.txt`, 'tunnel'],
            [wrong, `http://127.0.0.1:${nginx.ports.http}/text.txt`, 'request'],
            [wrong, `https://127.0.0.1:${nginx.ports.https}/text.txt`, 'tunnel']
        ] as const;
        for (const [via, target, what] of cases) {
            const err = await api.get(target, { proxy: via }).catch((e: unknown) => e);
            expect(isHttpError(err, 502)).toBe(true);
            const name = via === wrong ? `http://***@127.0.0.1:${squid.port}` : anonymous;
            expect((err as Error).message).toBe(
                `Proxy ${name} refused the ${what} with 407 Proxy Authentication Required`
            );
            const data = (err as { data: { headers: Record<string, string> } }).data;
            expect(data.headers['proxy-authenticate']).toContain('Basic realm="tracewire"');
        }
    });
});
