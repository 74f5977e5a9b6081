import { createHash } from 'node:crypto';
import * as Fs from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, createServer, type Fixture, largeText } from './helpers.js';

let fixture: Fixture;

beforeAll(() => {
    fixture = createFixture();
});

afterAll(() => {
    fixture.remove();
});

async function serverWithFileRoute(
    handler: Hapi.HandlerDecorations['file'],
    options: Hapi.ServerOptions = {}
): Promise<Hapi.Server> {
    const server = await createServer({ routes: { files: { relativeTo: fixture.root } }, ...options });
    server.route({ method: 'GET', path: '/{p*}', handler: { file: handler } });
    return server;
}

function sha1(content: string | Buffer): string {
    return createHash('sha1').update(content).digest('hex');
}

describe('the file handler and h.file()', () => {
    it('serves a path string relative to the route files.relativeTo', async () => {
        const server = await serverWithFileRoute('hello.txt');
        const res = await server.inject('/');
        expect(res.statusCode).toBe(200);
        expect(res.payload).toBe('Hello, world!\n');
        expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(String(res.headers['content-length'])).toBe('14');
    });

    it('serves the path a function of the request returns', async () => {
        const server = await serverWithFileRoute((request) => `${request.params.p}`);
        const res = await server.inject('/page.html');
        expect(res.statusCode).toBe(200);
        expect(res.payload).toBe('<h1>page</h1>\n');
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    });

    it('sends the Error a path function returns', async () => {
        const server = await serverWithFileRoute(() => new Error('no path for you'));
        const res = await server.inject('/');
        expect(res.statusCode).toBe(500);
    });

    it('accepts the object form with a path and the 2.7 options', async () => {
        const server = await serverWithFileRoute({ path: 'hello.txt', mode: 'attachment' });
        const res = await server.inject('/');
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-disposition']).toBe('attachment; filename="hello.txt"');
    });

    it('serves an absolute path when confine is off', async () => {
        const server = await serverWithFileRoute({ path: join(fixture.outside, 'secret.txt'), confine: false });
        const res = await server.inject('/');
        expect(res.payload).toBe('outside secret');
    });

    it('h.file() replies with a file from a handler and the response chains code, header, vary and type', async () => {
        const server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
        server.route({
            method: 'GET',
            path: '/',
            handler: (_request, h) =>
                h.file('hello.txt').code(201).header('x-extra', 'yes').vary('x-test').type('text/x-custom')
        });
        const res = await server.inject('/');
        expect(res.statusCode).toBe(201);
        expect(res.payload).toBe('Hello, world!\n');
        expect(res.headers['x-extra']).toBe('yes');
        expect(res.headers.vary).toContain('x-test');
        expect(res.headers['content-type']).toMatch(/^text\/x-custom/);
    });

    it('h.file() works in a route of another method (no validators are checked for it)', async () => {
        const server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
        server.route({ method: 'POST', path: '/', handler: (_request, h) => h.file('hello.txt') });
        const res = await server.inject({ method: 'POST', url: '/', headers: { 'if-none-match': '*' } });
        expect(res.statusCode).toBe(200);
        expect(res.payload).toBe('Hello, world!\n');
    });

    it('resolves relative paths against a plugin realm files.relativeTo', async () => {
        const server = await createServer();
        await server.register({
            name: 'realm',
            register(inner) {
                inner.path(fixture.root);
                inner.route({ method: 'GET', path: '/realm', handler: (_request, h) => h.file('hello.txt') });
            }
        });
        const res = await server.inject('/realm');
        expect(res.payload).toBe('Hello, world!\n');
    });

    it('rejects handler configurations without a usable path when the route is added', async () => {
        const server = await createServer();
        expect(() => server.route({ method: 'GET', path: '/a', handler: { file: '' } })).toThrow(
            /file handler needs a path/
        );
        expect(() =>
            server.route({ method: 'GET', path: '/b', handler: { file: { path: 42 as unknown as string } } })
        ).toThrow(/file handler needs a path/);
    });

    it('h.file() with an empty path is a 500 naming the problem', async () => {
        const server = await createServer();
        server.route({ method: 'GET', path: '/', handler: (_request, h) => h.file('') });
        const res = await server.inject('/');
        expect(res.statusCode).toBe(500);
    });
});

describe('file response options', () => {
    describe('confine', () => {
        it('true confines to files.relativeTo: a path resolving outside is 403', async () => {
            const server = await serverWithFileRoute((request) => `${request.query.f}`);
            const res = await server.inject(`/?f=${encodeURIComponent('../outside/secret.txt')}`);
            expect(res.statusCode).toBe(403);
            const absolute = await server.inject(`/?f=${encodeURIComponent(join(fixture.outside, 'secret.txt'))}`);
            expect(absolute.statusCode).toBe(403);
        });

        it('a string confines to that directory and relative paths resolve inside it', async () => {
            const server = await serverWithFileRoute((request) => `${request.query.f}`);
            server.route({
                method: 'GET',
                path: '/nested/{p*}',
                handler: { file: { path: (request) => `${request.params.p}`, confine: 'nested' } }
            });
            const inside = await server.inject('/nested/deep/file.txt');
            expect(inside.payload).toBe('deep');
            const sibling = await server.inject(`/nested/${encodeURIComponent('../hello.txt')}`);
            expect(sibling.statusCode).toBe(403);
        });

        it('false turns the check off', async () => {
            const server = await serverWithFileRoute({ path: '../outside/secret.txt', confine: false });
            const res = await server.inject('/');
            expect(res.statusCode).toBe(200);
            expect(res.payload).toBe('outside secret');
        });

        it('holds for the real path: a symlink inside the root pointing outside is 403', async () => {
            const server = await serverWithFileRoute((request) => `${request.params.p}`);
            expect((await server.inject('/link-outside.txt')).statusCode).toBe(403);
            expect((await server.inject('/dir-link-outside/secret.txt')).statusCode).toBe(403);
            const inside = await server.inject('/link-inside.txt');
            expect(inside.statusCode).toBe(200);
            expect(inside.payload).toBe('Hello, world!\n');
        });

        it('allows a confine root that is itself a symlink', async () => {
            const server = await createServer({ routes: { files: { relativeTo: fixture.rootLink } } });
            server.route({ method: 'GET', path: '/{p*}', handler: { file: (request) => `${request.params.p}` } });
            const res = await server.inject('/hello.txt');
            expect(res.statusCode).toBe(200);
            expect((await server.inject('/link-outside.txt')).statusCode).toBe(403);
        });

        it('a confine root that does not exist yields 404 and is looked up again later', async () => {
            const later = join(fixture.base, 'created-later');
            const server = await serverWithFileRoute({ path: 'x.txt', confine: later });
            expect((await server.inject('/')).statusCode).toBe(404);
            Fs.mkdirSync(later);
            Fs.writeFileSync(join(later, 'x.txt'), 'now here');
            expect((await server.inject('/')).payload).toBe('now here');
        });
    });

    describe('filename and mode', () => {
        it('mode false (default) sends no content-disposition', async () => {
            const server = await serverWithFileRoute('hello.txt');
            expect((await server.inject('/')).headers['content-disposition']).toBeUndefined();
        });

        it('inline and attachment use the base name of the path by default', async () => {
            const server = await serverWithFileRoute({ path: 'nested/deep/file.txt', mode: 'inline' });
            expect((await server.inject('/')).headers['content-disposition']).toBe('inline; filename="file.txt"');
        });

        it('filename overrides the name, quoted safely', async () => {
            const server = await serverWithFileRoute({
                path: 'hello.txt',
                mode: 'attachment',
                filename: 'a "b"\\c.txt'
            });
            expect((await server.inject('/')).headers['content-disposition']).toBe(
                'attachment; filename="a \\"b\\"\\\\c.txt"'
            );
        });

        it('a non-ASCII filename gets an ASCII fallback and an RFC 5987 filename*', async () => {
            const server = await serverWithFileRoute({
                path: 'hello.txt',
                mode: 'attachment',
                filename: "naïve 'résumé' (1).txt"
            });
            expect((await server.inject('/')).headers['content-disposition']).toBe(
                "attachment; filename=\"na_ve 'r_sum_' (1).txt\"; filename*=UTF-8''na%C3%AFve%20%27r%C3%A9sum%C3%A9%27%20%281%29.txt"
            );
        });

        it('control characters never reach the header', async () => {
            const server = await serverWithFileRoute({
                path: 'hello.txt',
                mode: 'inline',
                filename: 'a\r\nb\u0000.txt'
            });
            expect((await server.inject('/')).headers['content-disposition']).toBe('inline; filename="ab.txt"');
        });
    });

    describe('lookupCompressed and lookupMap', () => {
        it('serves the .gz sibling with content-encoding when gzip is accepted, and hapi does not compress again', async () => {
            const server = await serverWithFileRoute({ path: 'large.txt', lookupCompressed: true });
            const res = await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip' } });
            expect(res.statusCode).toBe(200);
            expect(res.headers['content-encoding']).toBe('gzip');
            expect(res.headers.vary).toContain('accept-encoding');
            expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
            expect(gunzipSync(res.rawPayload).toString()).toBe(largeText);
            expect(Number(String(res.headers['content-length']))).toBe(
                Fs.statSync(join(fixture.root, 'large.txt.gz')).size
            );
        });

        it('sends the file itself when the client accepts no listed encoding, still varying on accept-encoding', async () => {
            const server = await serverWithFileRoute({ path: 'large.txt', lookupCompressed: true });
            // An encoding hapi has no encoder for either, so nothing compresses the file on the way.
            const res = await server.inject({ url: '/', headers: { 'accept-encoding': 'compress' } });
            expect(res.headers['content-encoding']).toBeUndefined();
            expect(res.headers.vary).toContain('accept-encoding');
            expect(res.payload).toBe(largeText);
            const none = await server.inject('/');
            expect(none.payload).toBe(largeText);
        });

        it('picks the best accepted encoding present on disk, by q-value then lookupMap order', async () => {
            const lookupMap = { gzip: '.gz', br: '.br' };
            const server = await serverWithFileRoute({ path: 'large.txt', lookupCompressed: true, lookupMap });
            const preferBr = await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip;q=0.5, br' } });
            expect(preferBr.headers['content-encoding']).toBe('br');
            expect(preferBr.payload).toBe('pretend brotli');
            const tie = await server.inject({ url: '/', headers: { 'accept-encoding': 'br, gzip' } });
            expect(tie.headers['content-encoding']).toBe('gzip');
            const wildcard = await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip;q=0, *;q=0.3' } });
            expect(wildcard.headers['content-encoding']).toBe('br');
            const refused = await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip;q=0, br;q=bad' } });
            expect(refused.headers['content-encoding']).toBeUndefined();
        });

        it('skips an accepted encoding whose file is missing, and a variant that is a directory', async () => {
            const lookupMap = { gzip: '.gz', br: '.br' };
            const server = await serverWithFileRoute((request) => `${request.params.p}`);
            server.route({
                method: 'GET',
                path: '/lookup/{p*}',
                handler: { file: { path: (request) => `${request.params.p}`, lookupCompressed: true, lookupMap } }
            });
            const onlyBr = await server.inject({
                url: '/lookup/only-br.txt',
                headers: { 'accept-encoding': 'gzip, br' }
            });
            expect(onlyBr.headers['content-encoding']).toBe('br');
            expect(onlyBr.payload).toBe('brotli bytes');
            const dirVariant = await server.inject({
                url: '/lookup/gz-dir.txt',
                headers: { 'accept-encoding': 'gzip' }
            });
            expect(dirVariant.statusCode).toBe(200);
            expect(dirVariant.payload).toBe('identity beside a directory named like its variant');
            Fs.symlinkSync(join(fixture.root, 'no-such-target'), join(fixture.root, 'hello.txt.gz'));
            const dangling = await server.inject({ url: '/lookup/hello.txt', headers: { 'accept-encoding': 'gzip' } });
            expect(dangling.headers['content-encoding']).toBeUndefined();
            expect(dangling.payload).toBe('Hello, world!\n');
            Fs.rmSync(join(fixture.root, 'hello.txt.gz'));
            const throughFile = await server.inject({
                url: '/lookup/hello.txt/x',
                headers: { 'accept-encoding': 'gzip' }
            });
            expect(throughFile.statusCode).toBe(404);
        });

        it('gives a variant its own ETag so caches never mix representations', async () => {
            const server = await serverWithFileRoute({ path: 'large.txt', lookupCompressed: true });
            const identity = await server.inject('/');
            const gzip = await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip' } });
            expect(identity.headers.etag).toBe(`"${sha1(largeText)}"`);
            expect(gzip.headers.etag).toBe(`"${sha1(Fs.readFileSync(join(fixture.root, 'large.txt.gz')))}"`);
            const revalidated = await server.inject({
                url: '/',
                headers: { 'accept-encoding': 'gzip', 'if-none-match': gzip.headers.etag as string }
            });
            expect(revalidated.statusCode).toBe(304);
        });
    });

    describe('etagMethod', () => {
        it('hash (default) is the SHA-1 of the contents', async () => {
            const server = await serverWithFileRoute('hello.txt');
            expect((await server.inject('/')).headers.etag).toBe(`"${sha1('Hello, world!\n')}"`);
        });

        it('simple is the hex size and modification time', async () => {
            const server = await serverWithFileRoute({ path: 'hello.txt', etagMethod: 'simple' });
            const stats = Fs.statSync(join(fixture.root, 'hello.txt'));
            expect((await server.inject('/')).headers.etag).toBe(
                `"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`
            );
        });

        it('false sends no ETag', async () => {
            const server = await serverWithFileRoute({ path: 'hello.txt', etagMethod: false });
            const res = await server.inject('/');
            expect(res.headers.etag).toBeUndefined();
            expect(res.headers['last-modified']).toBeDefined();
        });

        it('a changed file gets a new hash tag', async () => {
            const path = join(fixture.root, 'changing.txt');
            Fs.writeFileSync(path, 'first');
            const server = await serverWithFileRoute('changing.txt');
            const first = await server.inject('/');
            expect(first.headers.etag).toBe(`"${sha1('first')}"`);
            Fs.writeFileSync(path, 'second version');
            const second = await server.inject('/');
            expect(second.headers.etag).toBe(`"${sha1('second version')}"`);
        });
    });

    describe('start and end', () => {
        it('sends the bytes from start to end inclusive', async () => {
            const server = await serverWithFileRoute({ path: 'hello.txt', start: 7, end: 11 });
            const res = await server.inject('/');
            expect(res.payload).toBe('world');
            expect(String(res.headers['content-length'])).toBe('5');
        });

        it('with lookupCompressed sends the identity bytes: a compressed variant stands in only for the whole file', async () => {
            for (const [start, end] of [
                [10, 29],
                [0, 99],
                [5, undefined]
            ] as const) {
                const server = await serverWithFileRoute(
                    { path: 'large.txt', lookupCompressed: true, start, end },
                    { compression: false }
                );
                const res = await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip' } });
                expect(res.statusCode).toBe(200);
                expect(res.headers['content-encoding']).toBeUndefined();
                // No variant is ever considered, so the response does not depend on accept-encoding.
                expect(res.headers.vary).toBeUndefined();
                expect(res.payload).toBe(largeText.slice(start, end === undefined ? undefined : end + 1));
            }
        });

        it('start alone reads to the end, end beyond the file stops at its end', async () => {
            const server = await serverWithFileRoute({ path: 'hello.txt', start: 7, end: 1000 });
            expect((await server.inject('/')).payload).toBe('world!\n');
        });

        it('rejects invalid offsets and other invalid options with a message naming the option', async () => {
            const server = await createServer();
            const bad: Array<[Record<string, unknown>, RegExp]> = [
                [{ start: -1 }, /"start"/],
                [{ start: 5, end: 2 }, /"end"/],
                [{ mode: 'download' }, /"mode"/],
                [{ confine: 3 }, /"confine"/],
                [{ filename: '' }, /"filename"/],
                [{ lookupCompressed: 'yes' }, /"lookupCompressed"/],
                [{ lookupMap: ['.gz'] }, /"lookupMap"/],
                [{ lookupMap: { gzip: '' } }, /"lookupMap.gzip"/],
                [{ etagMethod: 'md5' }, /"etagMethod"/]
            ];
            for (const [options, message] of bad) {
                expect(() =>
                    server.route({
                        method: 'GET',
                        path: `/${Math.random()}`,
                        handler: { file: { path: 'x', ...options } }
                    })
                ).toThrow(message);
            }
        });
    });
});

describe('response headers: content-type, last-modified, etag, content-length, accept-ranges', () => {
    it('sets content-type, last-modified, etag, content-length and accept-ranges', async () => {
        const server = await serverWithFileRoute((request) => `${request.params.p}`);
        const res = await server.inject('/hello.txt');
        const stats = Fs.statSync(join(fixture.root, 'hello.txt'));
        expect(res.headers['last-modified']).toBe(stats.mtime.toUTCString());
        expect(res.headers['accept-ranges']).toBe('bytes');
        expect(String(res.headers['content-length'])).toBe(String(stats.size));
        expect(res.headers.etag).toMatch(/^"[0-9a-f]{40}"$/);
    });

    it('last-modified rounds a modification time within half a millisecond of a second up, as stats.mtime does', async () => {
        const path = join(fixture.root, 'rounded-mtime.txt');
        Fs.writeFileSync(path, 'rounded');
        try {
            Fs.utimesSync(path, 1700000000.9997, 1700000000.9997);
            const server = await serverWithFileRoute('rounded-mtime.txt');
            const res = await server.inject('/');
            expect(res.headers['last-modified']).toBe(Fs.statSync(path).mtime.toUTCString());
            expect(res.headers['last-modified']).toBe('Tue, 14 Nov 2023 22:13:21 GMT');
        } finally {
            Fs.rmSync(path);
        }
    });

    it('derives the content type from the extension, octet-stream when unknown', async () => {
        const server = await serverWithFileRoute((request) => `${request.params.p}`);
        expect((await server.inject('/data.json')).headers['content-type']).toBe('application/json; charset=utf-8');
        expect((await server.inject('/image.png')).headers['content-type']).toBe('image/png');
        expect((await server.inject('/no-extension')).headers['content-type']).toBe('application/octet-stream');
    });

    it('an empty file is an empty response (hapi answers 204 by default)', async () => {
        const server = await serverWithFileRoute('empty.txt');
        const res = await server.inject('/');
        expect(res.statusCode).toBe(204);
        expect(res.payload).toBe('');
    });

    it('omits accept-ranges when the route disables ranges', async () => {
        const server = await serverWithFileRoute('hello.txt', {
            routes: { files: { relativeTo: fixture.root }, response: { ranges: false } }
        });
        const res = await server.inject({ url: '/', headers: { range: 'bytes=0-1' } });
        expect(res.statusCode).toBe(200);
        expect(res.headers['accept-ranges']).toBeUndefined();
        expect(res.payload).toBe('Hello, world!\n');
    });

    it('streams a file above the buffered limit with the same headers', async () => {
        const server = await serverWithFileRoute('large.txt', { compression: false });
        const res = await server.inject('/');
        expect(res.payload).toBe(largeText);
        expect(String(res.headers['content-length'])).toBe(String(Buffer.byteLength(largeText)));
    });
});

describe('an empty file', () => {
    it('announces accept-ranges and answers a Range with the whole (empty) body, not a 416', async () => {
        const server = await serverWithFileRoute('empty.txt');
        for (const headers of [{}, { range: 'bytes=0-1' }]) {
            const res = await server.inject({ url: '/', headers });
            // hapi sends an empty 200 as its emptyStatusCode, 204.
            expect(res.statusCode).toBe(204);
            expect(res.headers['accept-ranges']).toBe('bytes');
            expect(res.payload).toBe('');
        }
    });
});

describe('conditional requests on etag and last-modified', () => {
    async function tagged(): Promise<{ server: Hapi.Server; etag: string; lastModified: string }> {
        const server = await serverWithFileRoute('hello.txt');
        const res = await server.inject('/');
        return { server, etag: res.headers.etag as string, lastModified: res.headers['last-modified'] as string };
    }

    it('if-none-match with the current tag is a 304 without a body', async () => {
        const { server, etag } = await tagged();
        const res = await server.inject({ url: '/', headers: { 'if-none-match': etag } });
        expect(res.statusCode).toBe(304);
        expect(res.payload).toBe('');
        expect(res.headers.etag).toBe(etag);
        expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    });

    it('if-none-match compares weakly and accepts lists and *', async () => {
        const { server, etag } = await tagged();
        expect((await server.inject({ url: '/', headers: { 'if-none-match': `W/${etag}` } })).statusCode).toBe(304);
        expect((await server.inject({ url: '/', headers: { 'if-none-match': `"other", ${etag}` } })).statusCode).toBe(
            304
        );
        expect((await server.inject({ url: '/', headers: { 'if-none-match': '*' } })).statusCode).toBe(304);
    });

    it('if-none-match with another tag sends the file', async () => {
        const { server } = await tagged();
        const res = await server.inject({ url: '/', headers: { 'if-none-match': '"other"' } });
        expect(res.statusCode).toBe(200);
        expect(res.payload).toBe('Hello, world!\n');
    });

    it('if-none-match without an ETag never matches a tag', async () => {
        const server = await serverWithFileRoute({ path: 'hello.txt', etagMethod: false });
        const res = await server.inject({ url: '/', headers: { 'if-none-match': '"x"' } });
        expect(res.statusCode).toBe(200);
    });

    it('if-modified-since at or after the modification is a 304, before it sends the file', async () => {
        const { server, lastModified } = await tagged();
        expect((await server.inject({ url: '/', headers: { 'if-modified-since': lastModified } })).statusCode).toBe(
            304
        );
        const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
        expect((await server.inject({ url: '/', headers: { 'if-modified-since': earlier } })).statusCode).toBe(200);
        expect((await server.inject({ url: '/', headers: { 'if-modified-since': 'not a date' } })).statusCode).toBe(
            200
        );
    });

    it('if-none-match takes precedence over if-modified-since', async () => {
        const { server, lastModified } = await tagged();
        const res = await server.inject({
            url: '/',
            headers: { 'if-none-match': '"other"', 'if-modified-since': lastModified }
        });
        expect(res.statusCode).toBe(200);
    });

    it('if-match with another tag is a 412; with the current tag or * it sends the file', async () => {
        const { server, etag } = await tagged();
        const failed = await server.inject({ url: '/', headers: { 'if-match': '"other"' } });
        expect(failed.statusCode).toBe(412);
        expect(failed.result).toMatchObject({ statusCode: 412, error: 'Precondition Failed' });
        expect((await server.inject({ url: '/', headers: { 'if-match': etag } })).statusCode).toBe(200);
        expect((await server.inject({ url: '/', headers: { 'if-match': '*' } })).statusCode).toBe(200);
        expect((await server.inject({ url: '/', headers: { 'if-match': `W/${etag}` } })).statusCode).toBe(412);
    });

    it('if-unmodified-since before the modification is a 412, after it sends the file', async () => {
        const { server, lastModified } = await tagged();
        const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
        expect((await server.inject({ url: '/', headers: { 'if-unmodified-since': earlier } })).statusCode).toBe(412);
        expect((await server.inject({ url: '/', headers: { 'if-unmodified-since': lastModified } })).statusCode).toBe(
            200
        );
        expect((await server.inject({ url: '/', headers: { 'if-unmodified-since': 'garbage' } })).statusCode).toBe(200);
    });

    it('a passing if-match still lets if-none-match answer 304', async () => {
        const { server, etag } = await tagged();
        const res = await server.inject({ url: '/', headers: { 'if-match': etag, 'if-none-match': etag } });
        expect(res.statusCode).toBe(304);
    });

    it('HEAD answers conditionals too', async () => {
        const { server, etag } = await tagged();
        const res = await server.inject({ method: 'HEAD', url: '/', headers: { 'if-none-match': etag } });
        expect(res.statusCode).toBe(304);
    });

    it('a tag hapi suffixed when it compressed the file itself revalidates to 304', async () => {
        const server = await serverWithFileRoute('large.txt');
        const first = await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip' } });
        expect(first.headers['content-encoding']).toBe('gzip');
        expect(first.headers.etag).toMatch(/-gzip"$/);
        const res = await server.inject({
            url: '/',
            headers: { 'accept-encoding': 'gzip', 'if-none-match': first.headers.etag as string }
        });
        expect(res.statusCode).toBe(304);
    });

    it('a 304 from a pre-compressed variant names its encoding in vary', async () => {
        const server = await serverWithFileRoute({ path: 'large.txt', lookupCompressed: true });
        const first = await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip' } });
        const res = await server.inject({
            url: '/',
            headers: { 'accept-encoding': 'gzip', 'if-none-match': first.headers.etag as string }
        });
        expect(res.statusCode).toBe(304);
        expect(res.headers.vary).toContain('accept-encoding');
    });
});

describe('range requests and HEAD', () => {
    it('a single range is a 206 with content-range and exactly those bytes', async () => {
        const server = await serverWithFileRoute('hello.txt');
        const res = await server.inject({ url: '/', headers: { range: 'bytes=0-4' } });
        expect(res.statusCode).toBe(206);
        expect(res.payload).toBe('Hello');
        expect(res.headers['content-range']).toBe('bytes 0-4/14');
        expect(String(res.headers['content-length'])).toBe('5');
    });

    it('supports open-ended and suffix ranges, clamping past the end', async () => {
        const server = await serverWithFileRoute('hello.txt');
        const open = await server.inject({ url: '/', headers: { range: 'bytes=7-' } });
        expect(open.payload).toBe('world!\n');
        expect(open.headers['content-range']).toBe('bytes 7-13/14');
        const suffix = await server.inject({ url: '/', headers: { range: 'bytes=-7' } });
        expect(suffix.payload).toBe('world!\n');
        const whole = await server.inject({ url: '/', headers: { range: 'bytes=-100' } });
        expect(whole.statusCode).toBe(206);
        expect(whole.headers['content-range']).toBe('bytes 0-13/14');
        const clamped = await server.inject({ url: '/', headers: { range: 'bytes=10-100' } });
        expect(clamped.headers['content-range']).toBe('bytes 10-13/14');
    });

    it('serves a range of a streamed file', async () => {
        const server = await serverWithFileRoute('large.txt', { compression: false });
        const from = 70_000;
        const res = await server.inject({ url: '/', headers: { range: `bytes=${from}-${from + 99_999}` } });
        expect(res.statusCode).toBe(206);
        expect(res.payload).toBe(largeText.slice(from, from + 100_000));
    });

    it('an unsatisfiable range is a 416 with content-range bytes */size', async () => {
        const server = await serverWithFileRoute('hello.txt');
        for (const range of ['bytes=14-', 'bytes=20-30', 'bytes=-0', 'bytes=5-2', 'items=0-1', 'bytes=x']) {
            const res = await server.inject({ url: '/', headers: { range } });
            expect(res.statusCode, range).toBe(416);
            expect(res.headers['content-range'], range).toBe('bytes */14');
        }
    });

    it('merges overlapping or adjacent ranges, and ranges closer than a part header, into one 206', async () => {
        const server = await serverWithFileRoute('hello.txt');
        const merged = await server.inject({ url: '/', headers: { range: 'bytes=2-4, 0-1, 3-6' } });
        expect(merged.statusCode).toBe(206);
        expect(merged.payload).toBe('Hello, ');
        // Several ranges are a multipart 206 (test/static/multi-range.test.ts) unless a gap is shorter than a part header.
        const close = await server.inject({ url: '/', headers: { range: 'bytes=0-1, 5-6' } });
        expect(close.statusCode).toBe(206);
        expect(close.headers['content-range']).toBe('bytes 0-6/14');
        expect(close.payload).toBe('Hello, ');
    });

    it('applies ranges to the start/end slice', async () => {
        const server = await serverWithFileRoute({ path: 'hello.txt', start: 7, end: 11 });
        const res = await server.inject({ url: '/', headers: { range: 'bytes=1-2' } });
        expect(res.payload).toBe('or');
        expect(res.headers['content-range']).toBe('bytes 1-2/5');
    });

    it('if-range with the current ETag or date honours the range, otherwise sends the whole file', async () => {
        const server = await serverWithFileRoute('hello.txt');
        const first = await server.inject('/');
        const etag = first.headers.etag as string;
        const lastModified = first.headers['last-modified'] as string;
        const byTag = await server.inject({ url: '/', headers: { range: 'bytes=0-4', 'if-range': etag } });
        expect(byTag.statusCode).toBe(206);
        const byDate = await server.inject({ url: '/', headers: { range: 'bytes=0-4', 'if-range': lastModified } });
        expect(byDate.statusCode).toBe(206);
        const staleTag = await server.inject({ url: '/', headers: { range: 'bytes=0-4', 'if-range': '"old"' } });
        expect(staleTag.statusCode).toBe(200);
        expect(staleTag.payload).toBe('Hello, world!\n');
        const weak = await server.inject({ url: '/', headers: { range: 'bytes=0-4', 'if-range': `W/${etag}` } });
        expect(weak.statusCode).toBe(200);
        const staleDate = await server.inject({
            url: '/',
            headers: { range: 'bytes=0-4', 'if-range': 'Thu, 01 Jan 2004 00:00:00 GMT' }
        });
        expect(staleDate.statusCode).toBe(200);
    });

    it('if-range by tag never matches when there is no ETag', async () => {
        const server = await serverWithFileRoute({ path: 'hello.txt', etagMethod: false });
        const res = await server.inject({ url: '/', headers: { range: 'bytes=0-4', 'if-range': '"x"' } });
        expect(res.statusCode).toBe(200);
    });

    it('HEAD sends the headers of the whole file and no body, ignoring range', async () => {
        const server = await serverWithFileRoute('hello.txt');
        const res = await server.inject({ method: 'HEAD', url: '/', headers: { range: 'bytes=0-4' } });
        expect(res.statusCode).toBe(200);
        expect(res.payload).toBe('');
        expect(String(res.headers['content-length'])).toBe('14');
        expect(res.headers.etag).toBeDefined();
        expect(res.headers['accept-ranges']).toBe('bytes');
    });

    it('HEAD of a streamed file sends headers only', async () => {
        const server = await serverWithFileRoute('large.txt', { compression: false });
        const res = await server.inject({ method: 'HEAD', url: '/' });
        expect(res.payload).toBe('');
        expect(String(res.headers['content-length'])).toBe(String(Buffer.byteLength(largeText)));
    });
});
