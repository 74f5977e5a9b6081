import * as Fs from 'node:fs';
import { join } from 'node:path';
import * as Zlib from 'node:zlib';
import * as Hapi from '@hapi/hapi';
import Inert from '@hapi/inert';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticFiles } from '../../src/static/index.js';
import { createFixture, type Fixture } from './helpers.js';

let fixture: Fixture;

beforeAll(() => {
    fixture = createFixture();
});

afterAll(() => fixture.remove());

/** A plugin like hapi-swagger: it serves its pages with inert's handlers once inert is there, and says so by name. */
const dependsOnInert: Hapi.Plugin<void> = {
    name: 'depends-on-inert',
    register(server) {
        server.dependency('@hapi/inert', async (ready) => {
            ready.route({ method: 'GET', path: '/ui/hello.txt', handler: { file: 'hello.txt' } });
        });
    }
};

const newServer = (options: Hapi.ServerOptions = {}): Hapi.Server =>
    Hapi.server({ routes: { files: { relativeTo: fixture.root } }, ...options });

describe('plugins that depend on @hapi/inert by name (README, "Static files")', () => {
    it('start when staticFiles is registered before them', async () => {
        const server = newServer();
        await server.register(staticFiles);
        await server.register(dependsOnInert);
        await server.initialize();
        const res = await server.inject('/ui/hello.txt');
        expect(res.statusCode).toBe(200);
        expect(res.payload).toBe('Hello, world!\n');
    });

    it('start when staticFiles is registered after them', async () => {
        const server = newServer();
        await server.register(dependsOnInert);
        await server.register(staticFiles);
        await server.initialize();
        expect((await server.inject('/ui/hello.txt')).statusCode).toBe(200);
    });

    it('still do not start without staticFiles (nothing else claims the name)', async () => {
        const server = newServer();
        await server.register(dependsOnInert);
        await expect(server.initialize()).rejects.toThrow('missing dependency @hapi/inert');
    });

    it('staticFiles refuses a server where the real @hapi/inert is registered, naming the conflict', async () => {
        const before = newServer();
        await before.register(Inert);
        await expect(before.register(staticFiles)).rejects.toThrow(
            'static: @hapi/inert is already registered: staticFiles provides the same handlers and h.file()'
        );
    });

    it('the real @hapi/inert registered after staticFiles is skipped (inert registers once), so the handlers stay those of staticFiles', async () => {
        const server = newServer();
        await server.register(staticFiles);
        await server.register(Inert);
        expect(Object.keys(server.registrations)).toEqual(['static', '@hapi/inert']);
        server.route({ method: 'GET', path: '/', handler: { file: 'hello.txt' } });
        expect((await server.inject('/')).statusCode).toBe(200);
    });
});

describe('pre-compressed variants and the server compression setting', () => {
    it('a server created with compression: false is never sent a variant, as with inert', async () => {
        for (const plugin of [staticFiles, Inert]) {
            const server = newServer({ compression: false });
            await server.register(plugin as Hapi.Plugin<void>);
            server.route({
                method: 'GET',
                path: '/',
                handler: { file: { path: 'large.txt', lookupCompressed: true } }
            });
            for (const acceptEncoding of ['gzip', 'br, gzip', '*']) {
                const res = await server.inject({ url: '/', headers: { 'accept-encoding': acceptEncoding } });
                expect(res.statusCode).toBe(200);
                expect(res.headers['content-encoding']).toBeUndefined();
                expect(res.payload).toBe(Fs.readFileSync(join(fixture.root, 'large.txt'), 'utf8'));
            }
        }
    });
});

describe('a zstd twin (lookupMap { zstd: ".zst", br: ".br", gzip: ".gz" })', () => {
    const lookupMap = { zstd: '.zst', br: '.br', gzip: '.gz' };
    const text = 'zstd twin '.repeat(500);
    const zstdCompress = (Zlib as { zstdCompressSync?: (data: Buffer | string) => Buffer }).zstdCompressSync;
    const zstdDecompress = (Zlib as { zstdDecompressSync?: (data: Buffer) => Buffer }).zstdDecompressSync;
    let server: Hapi.Server;

    beforeAll(async () => {
        const dir = join(fixture.base, 'zstd');
        Fs.mkdirSync(dir, { recursive: true });
        Fs.writeFileSync(join(dir, 'page.txt'), text);
        Fs.writeFileSync(join(dir, 'page.txt.gz'), Zlib.gzipSync(text));
        Fs.writeFileSync(join(dir, 'page.txt.br'), Zlib.brotliCompressSync(text));
        // A runtime without zstd (Node 20) gets stand-in bytes: the negotiation is the same.
        Fs.writeFileSync(join(dir, 'page.txt.zst'), zstdCompress === undefined ? 'zstd bytes' : zstdCompress(text));
        Fs.writeFileSync(join(dir, 'gz-only.txt'), text);
        Fs.writeFileSync(join(dir, 'gz-only.txt.gz'), Zlib.gzipSync(text));
        server = newServer();
        await server.register(staticFiles);
        server.route({
            method: 'GET',
            path: '/{name}',
            handler: { directory: { path: dir, lookupCompressed: true, lookupMap } }
        });
    });

    const get = (name: string, acceptEncoding: string) =>
        server.inject({ url: `/${name}`, headers: { 'accept-encoding': acceptEncoding } });

    it('picks the best twin on disk by the client q-values, then lookupMap order', async () => {
        const cases: Array<[string, string, string | undefined]> = [
            ['zstd, br, gzip', 'page.txt', 'zstd'],
            ['gzip, br, zstd', 'page.txt', 'zstd'],
            ['zstd;q=0.5, br;q=0.9, gzip', 'page.txt', 'gzip'],
            ['zstd;q=0.5, br, gzip;q=0.8', 'page.txt', 'br'],
            ['zstd;q=0, br;q=0, gzip;q=0.1', 'page.txt', 'gzip'],
            ['zstd', 'gz-only.txt', undefined],
            ['zstd, gzip;q=0.2', 'gz-only.txt', 'gzip'],
            ['*;q=0.5, zstd;q=0', 'page.txt', 'br']
        ];
        for (const [acceptEncoding, name, encoding] of cases) {
            const res = await get(name, acceptEncoding);
            expect(res.statusCode, acceptEncoding).toBe(200);
            expect(res.headers['content-encoding'], `${acceptEncoding} for ${name}`).toBe(encoding);
            expect(res.headers.vary).toContain('accept-encoding');
        }
    });

    it('the zstd twin round-trips to the file itself where the runtime has zstd; elsewhere the bytes on disk are sent as they are', async () => {
        const res = await get('page.txt', 'zstd');
        expect(res.headers['content-encoding']).toBe('zstd');
        if (zstdDecompress !== undefined) {
            expect(zstdDecompress(res.rawPayload).toString()).toBe(text);
        } else {
            expect(res.payload).toBe('zstd bytes');
        }
    });
});

describe('the data of directory handler errors: data.path is the last path tested, no path without a lookup', () => {
    /** The `data` of the error each request ends in, from staticFiles and from @hapi/inert. */
    async function dataOf(plugin: Hapi.Plugin<void>, options: Record<string, unknown>, url: string): Promise<unknown> {
        const server = newServer();
        await server.register(plugin);
        server.route({ method: 'GET', path: '/{p*}', handler: { directory: options as never } });
        let data: unknown = 'no error';
        server.ext('onPreResponse', (request, h) => {
            const response = request.response as { isBoom?: boolean; data?: unknown };
            if (response.isBoom) {
                data = response.data;
            }

            return h.continue;
        });
        await server.inject(url);
        return data;
    }

    it('matches @hapi/inert for misses with and without a file-system lookup', async () => {
        const cases: Array<[Record<string, unknown>, string]> = [
            [{ path: fixture.root }, '/.env'],
            [{ path: fixture.root }, '/a/.hidden/file.txt'],
            [{ path: () => [] }, '/hello.txt'],
            [{ path: fixture.root }, '/missing.txt'],
            [{ path: fixture.root, defaultExtension: 'html' }, '/missing']
        ];
        for (const [options, url] of cases) {
            const ours = await dataOf(staticFiles, options, url);
            const theirs = await dataOf(Inert as unknown as Hapi.Plugin<void>, options, url);
            expect(ours, url).toEqual(theirs);
            expect(typeof ours, url).toBe('object');
        }
    });

    it('carries an object without a path for a NUL byte, refused before any lookup (inert tries the path)', async () => {
        expect(await dataOf(staticFiles, { path: fixture.root }, '/hello%00.txt')).toEqual({});
    });
});
