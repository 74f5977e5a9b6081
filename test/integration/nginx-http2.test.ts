import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { selfSignedCertificate } from '../client/helpers.js';
import { expectReleased, timersBefore } from '../client/wire/http2/released.js';
import { type NginxHttp2, startNginxHttp2 } from './servers.js';

/**
 * The client's HTTP/2 against a real nginx over TLS (README "HTTP/2"): requests multiplexed on one
 * connection (nginx's `$connection` in its access log), a large file read through the flow-control
 * windows, gzip, a PUT with a body, and nginx's own GOAWAY after `keepalive_requests` streams with at
 * most `http2_max_concurrent_streams` at once.
 */

const text = 'tracewire over HTTP/2 to nginx\n'.repeat(300);
const large = Buffer.alloc(24 * 1024 * 1024);
for (let i = 0; i < large.length; i += 4) {
    large.writeUInt32LE(i, i);
}

let nginx: NginxHttp2;

beforeAll(async () => {
    nginx = await startNginxHttp2({
        tls: selfSignedCertificate(),
        files: { 'text.txt': text, 'large.bin': large },
        maxRequests: 5,
        maxStreams: 3
    });
}, 300_000);

afterAll(() => nginx?.stop());

let timers = 0;
let api: Client;
beforeEach(() => {
    timers = timersBefore();
    api = new Client().defaults({ http2: { idleTimeout: 150 }, rejectUnauthorized: false });
});

/** The access log entries of `uri` prefix, once nginx wrote `count` of them (it writes each once the response is out). */
async function logged(prefix: string, count: number) {
    const entries = () => nginx.accessLog().filter((entry) => entry.uri.startsWith(prefix));
    await expect.poll(() => entries().length).toBe(count);
    return entries();
}

describe('nginx over HTTP/2: multiplexing', () => {
    it('carries concurrent GETs on one connection, as streams of one session', async () => {
        const base = `https://127.0.0.1:${nginx.port}`;
        const results = await Promise.all(Array.from({ length: 12 }, (_, i) => api.get(`${base}/text.txt?n=${i}`)));
        for (const { res, payload } of results) {
            expect(res.statusCode).toBe(200);
            expect(res.httpVersion).toBe('2.0');
            expect(String(payload)).toBe(text);
        }

        const entries = await logged('/text.txt?n=', 12);
        expect(new Set(entries.map((entry) => entry.connection)).size).toBe(1);
        expect(entries.every((entry) => entry.protocol === 'HTTP/2.0')).toBe(true);
        expect(entries.map((entry) => entry.order).sort((a, b) => a - b)).toEqual(
            Array.from({ length: 12 }, (_, i) => i + 1)
        );
        await expectReleased(api, [], timers);
    });

    it("follows nginx's GOAWAY after keepalive_requests, within its http2_max_concurrent_streams: with retry, every request succeeds once", async () => {
        // 17 at once on connections of 5 streams: a stream may be left unprocessed by two GOAWAYs in a
        // row, which the once-only re-send does not cover (README "HTTP/2"); retry does.
        const base = `https://127.0.0.1:${nginx.limitedPort}`;
        const results = await Promise.all(
            Array.from({ length: 17 }, (_, i) => api.get(`${base}/text.txt?limited=${i}`, { retry: true }))
        );
        expect(results.map(({ res }) => res.statusCode)).toEqual(Array(17).fill(200));
        const entries = await logged('/text.txt?limited=', 17);
        const perConnection = new Map<number, number>();
        for (const entry of entries) {
            perConnection.set(entry.connection, (perConnection.get(entry.connection) ?? 0) + 1);
            expect(entry.order).toBeLessThanOrEqual(5);
        }

        // Each request answered once: none processed and then sent again.
        expect(new Set(entries.map((entry) => entry.uri)).size).toBe(17);
        expect(perConnection.size).toBeGreaterThanOrEqual(4);
        await expectReleased(api, [], timers);
    });
});

describe('nginx over HTTP/2: bodies', () => {
    it('downloads a large file whole', async () => {
        const { res, payload } = await api.get(`https://127.0.0.1:${nginx.port}/large.bin`);
        expect(res.headers['content-length']).toBe(String(large.length));
        expect(Buffer.compare(payload as Buffer, large)).toBe(0);
        await expectReleased(api, [], timers);
    }, 60_000);

    it('decodes gzip with gunzip', async () => {
        const { res, payload } = await api.get(`https://127.0.0.1:${nginx.port}/text.txt`, { gunzip: true });
        expect(res.headers['content-encoding']).toBe('gzip');
        expect(String(payload)).toBe(text);
        await expectReleased(api, [], timers);
    });

    it('PUTs a body that nginx writes to disk, and a POST to a static file is its 405', async () => {
        const body = Buffer.alloc(3 * 1024 * 1024 + 17, 'p');
        const { res } = await api.put(`https://127.0.0.1:${nginx.port}/dav/uploaded.bin`, { payload: body });
        expect(res.statusCode).toBe(201);
        expect(res.httpVersion).toBe('2.0');
        expect(Buffer.compare(readFileSync(join(nginx.root, 'dav/uploaded.bin')), body)).toBe(0);
        const err = await api
            .post(`https://127.0.0.1:${nginx.port}/text.txt`, { payload: 'x' })
            .catch((e: unknown) => e);
        expect((err as { output?: { statusCode: number } }).output?.statusCode).toBe(405);
        await expectReleased(api, [], timers);
    });
});
