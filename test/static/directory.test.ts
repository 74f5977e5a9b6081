import { join } from 'node:path';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DirectoryHandlerOptions, ListingEntry } from '../../src/static/index.js';
import { createFixture, createServer, type Fixture, oddNames } from './helpers.js';

let fixture: Fixture;

beforeAll(() => {
    fixture = createFixture();
});

afterAll(() => {
    fixture.remove();
});

async function serverWithDirectory(
    options: Partial<DirectoryHandlerOptions> = {},
    serverOptions: Hapi.ServerOptions = {},
    routePath = '/{p*}'
): Promise<Hapi.Server> {
    const server = await createServer({ routes: { files: { relativeTo: fixture.base } }, ...serverOptions });
    server.route({ method: 'GET', path: routePath, handler: { directory: { path: 'root', ...options } } });
    return server;
}

describe('directory handler options (README, "Static files")', () => {
    describe('path', () => {
        it('a function returning no root at all is a 404, as a missing file', async () => {
            const server = await serverWithDirectory({ path: () => [] });
            const res = await server.inject('/hello.txt');
            expect(res.statusCode).toBe(404);
        });

        it('a string root resolves against the route files.relativeTo', async () => {
            const server = await serverWithDirectory();
            const res = await server.inject('/hello.txt');
            expect(res.statusCode).toBe(200);
            expect(res.payload).toBe('Hello, world!\n');
        });

        it('an absolute root is used as it is', async () => {
            const server = await serverWithDirectory({ path: fixture.root });
            expect((await server.inject('/nested/deep/file.txt')).payload).toBe('deep');
        });

        it('an array of roots: the first root that has the file wins', async () => {
            const server = await serverWithDirectory({ path: ['root/second', 'root'] });
            expect((await server.inject('/only-in-second.txt')).payload).toBe('second root');
            expect((await server.inject('/hello.txt')).payload).toBe('Hello, world!\n');
            const missing = await server.inject('/nowhere.txt');
            expect(missing.statusCode).toBe(404);
        });

        it('a function returns the root(s) for the request', async () => {
            const server = await serverWithDirectory({
                path: (request) => (request.query.second ? [join(fixture.root, 'second')] : 'root')
            });
            expect((await server.inject('/hello.txt')).statusCode).toBe(200);
            expect((await server.inject('/only-in-second.txt?second=1')).statusCode).toBe(200);
            expect((await server.inject('/hello.txt?second=1')).statusCode).toBe(404);
        });

        it('a function that returns an Error sends that error', async () => {
            const { forbidden } = await import('../../src/errors/index.js');
            const server = await serverWithDirectory({ path: () => forbidden('not today') });
            const res = await server.inject('/hello.txt');
            expect(res.statusCode).toBe(403);
            expect(res.result).toMatchObject({ message: 'not today' });
        });

        it('a function that returns something else is a 500', async () => {
            const server = await serverWithDirectory({ path: () => 42 as unknown as string }, { debug: false });
            expect((await server.inject('/hello.txt')).statusCode).toBe(500);
        });
    });

    describe('route path parameter', () => {
        it('{p} selects one level', async () => {
            const server = await serverWithDirectory({}, {}, '/one/{p}');
            expect((await server.inject('/one/hello.txt')).statusCode).toBe(200);
            expect((await server.inject('/one/nested/deep')).statusCode).toBe(404);
        });

        it('{p?} serves the root directory when absent', async () => {
            const server = await serverWithDirectory({ path: 'root/dir' }, {}, '/opt/{p?}');
            expect((await server.inject('/opt/')).payload).toBe('<h1>dir index</h1>');
            expect((await server.inject('/opt/other.html')).payload).toBe('<h1>other</h1>');
        });

        it('{p*3} selects a fixed depth', async () => {
            const server = await serverWithDirectory({}, {}, '/three/{p*3}');
            expect((await server.inject('/three/nested/deep/file.txt')).payload).toBe('deep');
        });

        it('other path parameters are ignored; only the last one selects the resource', async () => {
            const server = await serverWithDirectory({}, {}, '/{tenant}/files/{p*}');
            expect((await server.inject('/acme/files/hello.txt')).payload).toBe('Hello, world!\n');
        });

        it('a plain path and the spellings of it that need normalising are answered alike', async () => {
            // Plain paths (no empty, dot-led or backslashed segment) skip normalisation: they must
            // still meet the symlink check, and every other spelling must still be normalised.
            const server = await serverWithDirectory();
            const answer = async (url: string) => {
                const res = await server.inject(url);
                return res.statusCode === 200 ? res.payload : res.statusCode;
            };
            for (const url of ['/nested/deep/file.txt', '/nested/deep%2Ffile.txt', '/nested/x/..%2Fdeep/file.txt']) {
                expect(await answer(url), url).toBe('deep');
            }

            for (const url of ['/a/.env', '/a%2F.env', '/a%5C.env', '/a/%2Eenv', '/.git/config']) {
                expect(await answer(url), url).toBe(404);
            }

            for (const url of ['/link-outside.txt', '/dir-link-outside/secret.txt', '/..%2Foutside/secret.txt']) {
                expect(await answer(url), url).toBe(403);
            }

            expect(await answer('/link-inside.txt')).toBe('Hello, world!\n');
        });

        it('a route path that does not end with a parameter is refused when the route is added', async () => {
            const server = await createServer();
            expect(() =>
                server.route({ method: 'GET', path: '/static', handler: { directory: { path: '.' } } })
            ).toThrow(/must end with a path parameter/);
        });
    });

    describe('index', () => {
        it('true (default) serves index.html of a directory', async () => {
            const server = await serverWithDirectory();
            const res = await server.inject('/dir/');
            expect(res.payload).toBe('<h1>dir index</h1>');
            expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
            expect((await server.inject('/dir')).payload).toBe('<h1>dir index</h1>');
        });

        it('a string names the index file', async () => {
            const server = await serverWithDirectory({ index: 'custom.htm' });
            expect((await server.inject('/dir/')).payload).toBe('<h1>custom index</h1>');
        });

        it('an array is tried in order', async () => {
            const server = await serverWithDirectory({ index: ['missing.html', 'custom.htm', 'index.html'] });
            expect((await server.inject('/dir/')).payload).toBe('<h1>custom index</h1>');
        });

        it('falsy turns the lookup off: a directory is 403 without listing', async () => {
            const server = await serverWithDirectory({ index: false });
            const res = await server.inject('/dir/');
            expect(res.statusCode).toBe(403);
        });

        it('a directory without index file and without listing is 403', async () => {
            const server = await serverWithDirectory();
            expect((await server.inject('/nested/')).statusCode).toBe(403);
        });

        it('with redirectToSlash, a directory URL without its slash is redirected first, then 403', async () => {
            const server = await serverWithDirectory({ index: false, redirectToSlash: true });
            const res = await server.inject('/nested');
            expect(res.statusCode).toBe(302);
            expect(res.headers.location).toBe('/nested/');
            expect((await server.inject('/nested/')).statusCode).toBe(403);
        });

        it('an index name that is a directory is skipped', async () => {
            const server = await serverWithDirectory({ listing: true });
            const res = await server.inject({ url: '/index-is-dir/', headers: { accept: 'application/json' } });
            expect(res.statusCode).toBe(200);
            expect((res.result as ListingEntry[]).map((entry) => entry.name)).toEqual(['index.html']);
        });

        it('an index file is served with the full response path: conditionals, HEAD and ranges', async () => {
            const server = await serverWithDirectory();
            const first = await server.inject('/dir/');
            const notModified = await server.inject({
                url: '/dir/',
                headers: { 'if-none-match': first.headers.etag as string }
            });
            expect(notModified.statusCode).toBe(304);
            const range = await server.inject({ url: '/dir/', headers: { range: 'bytes=4-6' } });
            expect(range.payload).toBe('dir');
            const head = await server.inject({ method: 'HEAD', url: '/dir/' });
            expect(head.payload).toBe('');
            expect(String(head.headers['content-length'])).toBe('18');
        });

        it('rejects an invalid index option', async () => {
            const server = await createServer();
            expect(() =>
                server.route({
                    method: 'GET',
                    path: '/{p*}',
                    handler: { directory: { path: '.', index: [''] } }
                })
            ).toThrow(/"index"/);
        });
    });

    describe('listing', () => {
        it('lists a directory without index as HTML, hidden names left out', async () => {
            const server = await serverWithDirectory({ listing: true });
            const res = await server.inject('/listed/');
            expect(res.statusCode).toBe(200);
            expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
            expect(res.headers.vary).toContain('accept');
            expect(res.payload).toContain('<a href="/listed/sub/">sub/</a>');
            expect(res.payload).toContain('<a href="/listed/a.txt">a.txt</a>');
            expect(res.payload).toContain('<a href="/listed/../">../</a>');
            expect(res.payload).not.toContain('.secret');
            expect(res.payload.indexOf('another/')).toBeLessThan(res.payload.indexOf('sub/'));
            expect(res.payload.indexOf('sub/')).toBeLessThan(res.payload.indexOf('a.txt'));
            expect(res.payload.indexOf('a.txt')).toBeLessThan(res.payload.indexOf('b.txt'));
        });

        it('links work without a trailing slash too', async () => {
            const server = await serverWithDirectory({ listing: true });
            const res = await server.inject('/listed');
            expect(res.payload).toContain('<a href="/listed/a.txt">a.txt</a>');
        });

        it('lists the root without a parent link', async () => {
            const server = await serverWithDirectory({ path: 'root/listed', listing: true });
            const res = await server.inject('/');
            expect(res.payload).not.toContain('../');
            expect(res.payload).toContain('<a href="/a.txt">a.txt</a>');
        });

        it('escapes every name and encodes links so odd names work', async () => {
            const server = await serverWithDirectory({ listing: true });
            const res = await server.inject('/odd/');
            expect(res.payload).not.toContain('<script>');
            expect(res.payload).toContain('&lt;script&gt;alert(1)&lt;\\script&gt;.txt');
            expect(res.payload).toContain('quote&quot;and&#39;apostrophe.txt');
            for (const name of oddNames) {
                const href = `/odd/${encodeURIComponent(name)}`;
                expect(res.payload).toContain(`href="${href.replace(/'/g, '&#39;')}"`);
                const followed = await server.inject(href);
                expect(followed.statusCode, name).toBe(200);
                expect(followed.payload).toBe(`content of ${name}`);
            }
        });

        it('sends JSON with name, type, size and mtime when the client prefers application/json', async () => {
            const server = await serverWithDirectory({ listing: true });
            const res = await server.inject({ url: '/listed/', headers: { accept: 'application/json' } });
            expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
            const entries = res.result as ListingEntry[];
            expect(entries.map((entry) => [entry.name, entry.type, entry.size])).toEqual([
                ['another', 'directory', expect.any(Number)],
                ['sub', 'directory', expect.any(Number)],
                ['a.txt', 'file', 1],
                ['b.txt', 'file', 3]
            ]);
            expect(Number.isNaN(Date.parse(entries[2]!.mtime))).toBe(false);
        });

        it('chooses JSON or HTML by the accept header ranking', async () => {
            const server = await serverWithDirectory({ listing: true });
            const isJson = async (accept: string) =>
                (
                    (await server.inject({ url: '/listed/', headers: { accept } })).headers['content-type'] as string
                ).startsWith('application/json');
            expect(await isJson('application/json, text/plain, */*')).toBe(true);
            expect(await isJson('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(false);
            expect(await isJson('text/html;q=0.5, application/json')).toBe(true);
            expect(await isJson('application/*')).toBe(true);
            expect(await isJson('*/*')).toBe(false);
            expect(await isJson('application/json;q=0, */*')).toBe(false);
            expect(await isJson('image/png')).toBe(false);
            expect(await isJson('application/json, text/html')).toBe(true);
            expect(await isJson('text/html, application/json')).toBe(false);
            expect(await isJson('application/json;q=abc, text/html;q=0')).toBe(false);
        });

        it('showHidden lists hidden names too', async () => {
            const server = await serverWithDirectory({ listing: true, showHidden: true });
            const res = await server.inject({ url: '/listed/', headers: { accept: 'application/json' } });
            expect((res.result as ListingEntry[]).map((entry) => entry.name)).toContain('.secret');
        });

        it('is used after index lookup fails', async () => {
            const server = await serverWithDirectory({ listing: true, index: ['nothing.html'] });
            const res = await server.inject('/dir/');
            expect(res.payload).toContain('other.html');
        });
    });

    describe('showHidden', () => {
        it('serves hidden files when true', async () => {
            const server = await serverWithDirectory({ showHidden: true });
            expect((await server.inject('/.env')).payload).toBe('SECRET=1');
            expect((await server.inject('/a/.env')).payload).toBe('SECRET=2');
        });
    });

    describe('redirectToSlash', () => {
        it('redirects a directory request without a trailing slash, keeping the query', async () => {
            const server = await serverWithDirectory({ redirectToSlash: true });
            const res = await server.inject('/dir?x=1');
            expect(res.statusCode).toBe(302);
            expect(res.headers.location).toBe('/dir/?x=1');
            expect((await server.inject('/dir/')).statusCode).toBe(200);
        });

        it('is off when the router strips trailing slashes', async () => {
            const server = await serverWithDirectory(
                { redirectToSlash: true },
                { router: { stripTrailingSlash: true } }
            );
            const res = await server.inject('/dir');
            expect(res.statusCode).toBe(200);
            expect(res.payload).toBe('<h1>dir index</h1>');
        });

        it('does not redirect files', async () => {
            const server = await serverWithDirectory({ redirectToSlash: true });
            expect((await server.inject('/hello.txt')).statusCode).toBe(200);
        });
    });

    describe('lookupCompressed, lookupMap and etagMethod', () => {
        it('serve pre-compressed files and tags as for a file', async () => {
            const server = await serverWithDirectory({
                lookupCompressed: true,
                lookupMap: { br: '.br' },
                etagMethod: 'simple'
            });
            const res = await server.inject({ url: '/large.txt', headers: { 'accept-encoding': 'br' } });
            expect(res.headers['content-encoding']).toBe('br');
            expect(res.payload).toBe('pretend brotli');
            expect(res.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
        });

        it('rejects an invalid etagMethod naming the directory handler', async () => {
            const server = await createServer();
            expect(() =>
                server.route({
                    method: 'GET',
                    path: '/{p*}',
                    handler: { directory: { path: '.', etagMethod: 'md5' as 'hash' } }
                })
            ).toThrow(/directory handler option "etagMethod"/);
        });
    });

    describe('defaultExtension', () => {
        it('is appended when the requested file is not found', async () => {
            const server = await serverWithDirectory({ defaultExtension: 'html' });
            expect((await server.inject('/about')).payload).toBe('<h1>about</h1>');
            expect((await server.inject('/hello.txt')).payload).toBe('Hello, world!\n');
        });

        it('accepts a leading dot and still 404s when neither exists, naming the last tested path', async () => {
            const server = await serverWithDirectory({ defaultExtension: '.html' });
            const res = await server.inject('/nothing');
            expect(res.statusCode).toBe(404);
            const error = res.request.response as unknown as { _error: { data: { path: string } } };
            expect(error._error.data.path).toBe(join(fixture.root, 'nothing.html'));
        });
    });

    describe('option validation', () => {
        it('names the offending option', async () => {
            const server = await createServer();
            const bad: Array<[Record<string, unknown>, RegExp]> = [
                [{ path: 3 }, /"path"/],
                [{ path: [] }, /"path"/],
                [{ path: [''] }, /"path"/],
                [{ path: '.', listing: 'yes' }, /"listing"/],
                [{ path: '.', showHidden: 1 }, /"showHidden"/],
                [{ path: '.', redirectToSlash: 'no' }, /"redirectToSlash"/],
                [{ path: '.', defaultExtension: '' }, /"defaultExtension"/],
                [{ path: '.', index: 5 }, /"index"/]
            ];
            for (const [options, message] of bad) {
                expect(() =>
                    server.route({
                        method: 'GET',
                        path: `/${Math.random().toString(36).slice(2)}/{p*}`,
                        handler: { directory: options as unknown as DirectoryHandlerOptions }
                    })
                ).toThrow(message);
            }

            expect(() =>
                server.route({
                    method: 'GET',
                    path: '/x/{p*}',
                    handler: { directory: null as unknown as DirectoryHandlerOptions }
                })
            ).toThrow(/directory handler options must be an object/);
        });
    });
});
