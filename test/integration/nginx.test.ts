import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { isHttpError } from '../../src/errors/index.js';
import { selfSignedCertificate } from '../client/helpers.js';
import { seeded } from '../seeded.js';
import { type Nginx, startNginx } from './servers.js';

/**
 * The client against a real nginx origin (http, and https with the test certificate; gzip on):
 * what a production server does that our own test servers do not.
 */

// The idle connection timeout of the `idle` server: the race is provoked by pacing requests around it
// (15 ms either side). 40 ms paces the 120 GETs in 5 s; 100 ms took 12 s for the same mix: in four runs
// of each, about half the requests went on a fresh connection, and 0-4 were re-sent after nginx closed
// the connection they were sent on.
const idleMs = 40;
const text = 'tracewire against nginx\n'.repeat(200);
let nginx: Nginx;

beforeAll(async () => {
    nginx = await startNginx({
        tls: selfSignedCertificate(),
        idleMs,
        maxRequests: 3,
        files: {
            'text.txt': text,
            'static-gz/text.txt': 'not this one',
            'static-gz/text.txt.gz': gzipSync(text)
        }
    });
}, 300_000);

afterAll(() => nginx?.stop());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('nginx: idle keep-alive connections closed by the server', () => {
    it('120 sequential GETs paced around keepalive_timeout: no failure, no request sent twice on a fresh connection', async () => {
        const api = new Client();
        const base = `http://127.0.0.1:${nginx.ports.idle}`;
        const random = seeded(20);
        const failures: string[] = [];
        for (let i = 0; i < 120; i++) {
            // Around the timeout: some before it, some as nginx closes, some after.
            await pause(idleMs - 15 + random() * 30);
            try {
                const { res } = await api.get(`${base}/text.txt?n=${i}`);
                expect(res.statusCode).toBe(200);
            } catch (err) {
                failures.push(`${i}: ${(err as Error).message}`);
            }
        }

        expect(failures).toEqual([]);
        const idleLog = () => nginx.accessLog().filter((entry) => entry.uri.startsWith('/text.txt?n='));
        // nginx writes a line once it has sent the response: the last one may trail the client.
        await expect.poll(() => new Set(idleLog().map((entry) => entry.uri)).size).toBe(120);
        const log = idleLog();
        for (let i = 0; i < 120; i++) {
            const attempts = log.filter((entry) => entry.uri === `/text.txt?n=${i}`);
            expect(attempts.at(-1)?.status).toBe(200);
            // Any attempt before the last one was on a reused connection (the one nginx was closing).
            expect(attempts.slice(0, -1).filter((entry) => entry.order === 1)).toEqual([]);
        }

        api.agents.http.destroy();
    }, 60_000);
});

describe('nginx: keepalive_requests closes a connection after its last allowed request', () => {
    it('sequential and concurrent requests all succeed over connections of at most 3 requests', async () => {
        const api = new Client();
        const base = `http://127.0.0.1:${nginx.ports.limited}`;
        for (let i = 0; i < 10; i++) {
            const { res } = await api.get(`${base}/text.txt?limited=${i}`);
            expect(res.statusCode).toBe(200);
        }

        const results = await Promise.all(
            Array.from({ length: 20 }, (_, i) => api.get<Buffer>(`${base}/text.txt?limited=c${i}`, { gunzip: true }))
        );
        expect(results.every(({ payload }) => payload.toString() === text)).toBe(true);
        const limitedLog = () => nginx.accessLog().filter((entry) => entry.uri.startsWith('/text.txt?limited='));
        // nginx writes a line once it has sent the response: the last one may trail the client.
        await expect.poll(() => limitedLog().length).toBe(30);
        const log = limitedLog();
        expect(Math.max(...log.map((entry) => entry.order))).toBe(3);
        api.agents.http.destroy();
    });
});

describe('nginx: https origin with the test CA on a custom agent', () => {
    it('trusted through the agent CA, gzip decoded; refused without it', async () => {
        const trusting = new Client().defaults({
            agents: {
                http: new HttpAgent({ keepAlive: true }),
                https: new HttpsAgent({ keepAlive: true, ca: selfSignedCertificate().cert }),
                httpsAllowUnauthorized: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
            }
        });
        const url = `https://127.0.0.1:${nginx.ports.https}/text.txt`;
        const { res, payload } = await trusting.get<Buffer>(url, { gunzip: true });
        expect(res.headers['content-encoding']).toBe('gzip');
        expect(payload.toString()).toBe(text);
        const err = await new Client().get(url).catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        // Node 24+ appends a hint about --use-system-ca.
        expect((err as Error).message).toMatch(/^Client request error: self-signed certificate(;|$)/);
        trusting.agents.https.destroy();
    });

    it('a pre-compressed file (gzip_static) is decoded to the original', async () => {
        const api = new Client();
        const { res, payload } = await api.get<Buffer>(`http://127.0.0.1:${nginx.ports.http}/static-gz/text.txt`, {
            gunzip: true
        });
        expect(res.headers['content-encoding']).toBe('gzip');
        expect(payload.toString()).toBe(text);
        api.agents.http.destroy();
    });
});
