import { statSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { isHttpError } from '../../src/errors/index.js';
import { selfSignedCertificate } from '../client/helpers.js';
import { type Nginx, startNginx } from './servers.js';

/**
 * Decoding what a real nginx sends: bodiless responses (HEAD, 204, 304) that carry a
 * content-encoding, and content-encoding lists (nginx adds them with add_header).
 */

const text = 'tracewire decodes nginx\n'.repeat(200);
let nginx: Nginx;
let base: string;
const api = new Client();

beforeAll(async () => {
    nginx = await startNginx({
        tls: selfSignedCertificate(),
        idleMs: 1000,
        maxRequests: 100,
        files: {
            'text.txt': text,
            'not-modified/text.txt': text,
            'listed/gzip-identity.bin': gzipSync(text),
            'listed/deflate-gzip.bin': gzipSync(deflateSync(text)),
            'listed/unknown.bin': gzipSync(text)
        },
        codings: {
            '/listed/gzip-identity.bin': 'gzip, identity',
            '/listed/deflate-gzip.bin': 'deflate, gzip',
            '/listed/unknown.bin': 'gzip, x-unknown'
        }
    });
    base = `http://127.0.0.1:${nginx.ports.http}`;
}, 300_000);

afterAll(async () => {
    api.agents.http.destroy();
    await nginx?.stop();
});

describe('nginx: responses without a body that name a content-encoding', () => {
    it('HEAD answered with content-encoding: gzip reads as an empty body', async () => {
        const res = await api.request('HEAD', `${base}/text.txt`, { headers: { 'accept-encoding': 'gzip' } });
        expect(res.headers['content-encoding']).toBe('gzip');
        const payload = await api.read(res, { gunzip: true });
        expect(payload).toEqual(Buffer.alloc(0));
    });

    it('204 with content-encoding: gzip reads as an empty body', async () => {
        const { res, payload } = await api.get<Buffer>(`${base}/no-content`, { gunzip: true });
        expect([res.statusCode, res.headers['content-encoding']]).toEqual([204, 'gzip']);
        expect(payload).toEqual(Buffer.alloc(0));
    });

    it('304 with content-encoding: gzip reads as an empty body', async () => {
        const modified = statSync(join(nginx.root, 'not-modified/text.txt')).mtime.toUTCString();
        const { res, payload } = await api.get<Buffer>(`${base}/not-modified/text.txt`, {
            gunzip: true,
            headers: { 'if-modified-since': modified }
        });
        expect([res.statusCode, res.headers['content-encoding']]).toEqual([304, 'gzip']);
        expect(payload).toEqual(Buffer.alloc(0));
    });
});

describe('nginx: content-encoding lists', () => {
    it('every coding of the list is decoded, in order', async () => {
        for (const name of ['gzip-identity', 'deflate-gzip']) {
            const { payload } = await api.get<Buffer>(`${base}/listed/${name}.bin`, { gunzip: true });
            expect(payload.toString()).toBe(text);
        }
    });

    it('a list with an unknown coding fails naming it', async () => {
        const err = await api.get(`${base}/listed/unknown.bin`, { gunzip: true }).catch((e: unknown) => e);
        expect(isHttpError(err)).toBe(true);
        expect((err as Error).message).toContain('x-unknown');
    });
});
