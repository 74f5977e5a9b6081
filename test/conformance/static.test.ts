import * as Fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as Hapi from '@hapi/hapi';
import Inert from '@hapi/inert';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticFiles } from '../../src/static/index.js';

/*
 * Differential conformance with @hapi/inert, which runs here as a black-box oracle: the same routes
 * on two real hapi servers, one with inert and one with `staticFiles`, the same requests to both,
 * and status, headers (less the date-like ones that depend on the clock) and body compared. Every
 * intended difference is asserted as a difference in the last block, each listed with its reason
 * in docs/migrating-from-inert-and-boom.md.
 */

const largeText = 'abcdefghij'.repeat(10_000);
const files: Record<string, string | Buffer> = {
    'hello.txt': 'Hello, world!\n',
    'page.html': '<h1>page</h1>',
    'data.json': '{"a":1}',
    'no-extension': 'plain bytes',
    'empty.txt': '',
    'large.txt': largeText,
    'large.txt.gz': gzipSync(largeText),
    'large.txt.br': 'pretend brotli',
    'about.html': '<h1>about</h1>',
    '.env': 'SECRET=1',
    'a/.hidden/file.txt': 'hidden inside',
    'a/visible.txt': 'visible',
    'dir/index.html': '<h1>dir index</h1>',
    'dir/other.html': '<h1>other</h1>',
    'custom/main.htm': '<h1>custom index</h1>',
    'listed/a.txt': 'a',
    'listed/b.txt': 'bb',
    'listed/.secret': 'hidden',
    'listed/sub/x.txt': 'x',
    'odd/with space.txt': 'space',
    'odd/ünï.txt': 'unicode',
    'second/only-in-second.txt': 'second root',
    // A directory named like a file with the default extension, with an index inside.
    'ext-dir.html/index.html': '<h1>not a page</h1>'
};

let base: string;
let root: string;
const mtime = new Date('2024-01-02T03:04:05Z');

beforeAll(() => {
    base = Fs.realpathSync(Fs.mkdtempSync(join(tmpdir(), 'tracewire-conformance-')));
    root = join(base, 'public');
    for (const [name, content] of Object.entries(files)) {
        const path = join(root, name);
        Fs.mkdirSync(join(path, '..'), { recursive: true });
        Fs.writeFileSync(path, content);
        Fs.utimesSync(path, mtime, mtime);
    }

    // A sibling whose name starts with the root's, and a directory outside it.
    Fs.mkdirSync(join(root, 'bare-dir.html'));
    Fs.mkdirSync(join(base, 'public-sibling'));
    Fs.writeFileSync(join(base, 'public-sibling', 'sibling.txt'), 'sibling secret');
    Fs.mkdirSync(join(base, 'outside'));
    Fs.writeFileSync(join(base, 'outside', 'secret.txt'), 'outside secret');
    Fs.symlinkSync(join(root, 'hello.txt'), join(root, 'link-inside.txt'));
    Fs.symlinkSync(join(base, 'outside', 'secret.txt'), join(root, 'link-outside.txt'));
});

afterAll(() => {
    Fs.rmSync(base, { recursive: true, force: true });
});

type Route = (isInert: boolean) => Hapi.ServerRoute;
type Request = Hapi.ServerInjectOptions;

interface Setup {
    routes: Route[];
    server?: Hapi.ServerOptions;
    /** Extra configuration of each server, e.g. an onPreResponse extension. */
    configure?: (server: Hapi.Server) => void;
    /** Headers left out of the comparison, each because of a numbered intended difference. */
    ignoreHeaders?: string[];
}

interface Pair {
    inert: Hapi.Server;
    ours: Hapi.Server;
    ignoreHeaders: string[];
}

async function pair(setup: Setup): Promise<Pair> {
    const make = async (plugin: Hapi.Plugin<unknown>, isInert: boolean) => {
        const server = Hapi.server({ debug: false, routes: { files: { relativeTo: root } }, ...setup.server });
        await server.register(plugin);
        for (const route of setup.routes) {
            server.route(route(isInert));
        }

        setup.configure?.(server);
        return server;
    };
    return {
        inert: await make(Inert as unknown as Hapi.Plugin<unknown>, true),
        ours: await make(staticFiles as Hapi.Plugin<unknown>, false),
        ignoreHeaders: setup.ignoreHeaders ?? []
    };
}

/** Headers that depend on the clock or the connection rather than on the plugin. */
const ignoredHeaders = new Set(['date', 'connection', 'keep-alive']);

interface Observed {
    status: number;
    headers: Record<string, string>;
    body: string;
}

/**
 * What a client observes. Error bodies set aside intended difference 9 (an error made without a
 * message has no payload message; inert's says the status text again), so the rest compares.
 */
function observe(res: Hapi.ServerInjectResponse, ignore: string[] = []): Observed {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) {
        if (!ignoredHeaders.has(name) && !ignore.includes(name)) {
            headers[name] = String(value);
        }
    }

    let body = res.rawPayload.toString('latin1');
    if (res.statusCode >= 400 && headers['content-type']?.startsWith('application/json')) {
        delete headers['content-length'];
        if (body !== '') {
            const payload = JSON.parse(body) as { error: string; message?: string };
            if (payload.message === payload.error) {
                delete payload.message;
            }

            body = JSON.stringify(payload);
        }
    }

    return { status: res.statusCode, headers, body };
}

async function expectSame(servers: Pair, request: Request | string): Promise<Observed> {
    const [theirs, ours] = await Promise.all([servers.inert.inject(request), servers.ours.inject(request)]);
    const expected = observe(theirs, servers.ignoreHeaders);
    expect(observe(ours, servers.ignoreHeaders), JSON.stringify(request)).toStrictEqual(expected);
    return expected;
}

async function sameForAll(setup: Setup, requests: Array<Request | string>): Promise<Observed[]> {
    const servers = await pair(setup);
    const observed: Observed[] = [];
    for (const request of requests) {
        observed.push(await expectSame(servers, request));
    }

    return observed;
}

const fileRoute =
    (handler: Hapi.HandlerDecorations['file'], path = '/file'): Route =>
    () => ({ method: 'GET', path, handler: { file: handler } });

/** `redirectToSlash` is always given: its default is itself a difference (number 1). */
const directoryRoute =
    (options: Record<string, unknown>, path = '/{p*}'): Route =>
    () => ({
        method: 'GET',
        path,
        handler: { directory: { path: '.', redirectToSlash: false, ...options } as never }
    });

const get = (url: string, headers: Record<string, string> = {}): Request => ({ method: 'GET', url, headers });
const head = (url: string, headers: Record<string, string> = {}): Request => ({ method: 'HEAD', url, headers });
const lastModified = mtime.toUTCString();
const helloTag = '"09fac8dbfd27bd9b4d23a00eb648aa751789536d"';

describe('Conformance with @hapi/inert: the file handler and h.file() (README, "Static files")', () => {
    it.each([
        ['a text file', 'hello.txt'],
        ['an HTML file', 'page.html'],
        ['a JSON file', 'data.json'],
        ['a file without extension', 'no-extension'],
        ['an empty file', 'empty.txt'],
        ['a large (streamed) file', 'large.txt'],
        ['a missing file', 'missing.txt'],
        ['a directory', 'dir'],
        ['a symlink inside the root', 'link-inside.txt'],
        ['a path that climbs out of the root', '../outside/secret.txt'],
        ['an absolute path outside the root', '/etc/hostname']
    ])('path: %s, on GET and HEAD', async (_title, path) => {
        await sameForAll({ routes: [fileRoute(path)] }, ['/file', head('/file')]);
    });

    it('path as a function of the request: a string, an Error, a wrong type', async () => {
        await sameForAll(
            {
                routes: [
                    fileRoute((request) => `${request.params.p}`, '/fn/{p*}'),
                    fileRoute(() => new Error('no file for you'), '/error'),
                    fileRoute(() => 42 as unknown as string, '/wrong')
                ]
            },
            ['/fn/hello.txt', '/fn/missing', '/fn/..%2foutside%2fsecret.txt', '/fn/dir', '/error', '/wrong']
        );
    });

    it('h.file() from a handler, and with further response methods chained', async () => {
        await sameForAll(
            {
                routes: [
                    () => ({ method: 'GET', path: '/plain', handler: (_request, h) => h.file('hello.txt') }),
                    () => ({
                        method: 'GET',
                        path: '/chained',
                        handler: (_request, h) => h.file('page.html').header('x-extra', '1').type('text/plain')
                    }),
                    () => ({ method: 'GET', path: '/missing', handler: (_request, h) => h.file('missing.txt') })
                ]
            },
            ['/plain', '/chained', '/missing', head('/plain')]
        );
    });

    it.each([
        ['true (the route files.relativeTo)', true],
        ['false', false],
        ['a directory path', join('..', 'public')],
        ['an absolute directory', '{root}']
    ])('confine: %s, with traversal in several encodings', async (_title, given) => {
        const confine = given === '{root}' ? root : given;
        await sameForAll({ routes: [fileRoute({ path: (request) => `${request.params.p}`, confine }, '/c/{p*}')] }, [
            '/c/hello.txt',
            '/c/link-inside.txt',
            '/c/..%2foutside%2fsecret.txt',
            '/c/..%2Fpublic-sibling%2Fsibling.txt',
            '/c/a%2f..%2f..%2foutside%2fsecret.txt',
            '/c/%2e%2e%2foutside%2fsecret.txt',
            '/c/missing'
        ]);
    });

    it('mode: false sends no content-disposition, filename alone changes nothing', async () => {
        await sameForAll({ routes: [fileRoute({ path: 'hello.txt', mode: false, filename: 'other.txt' })] }, ['/file']);
    });

    it.each([
        ['hash', 'hash'],
        ['simple', 'simple'],
        ['false', false]
    ] as const)('etagMethod: %s, with conditional requests on the tag and the date', async (_title, etagMethod) => {
        const [first] = await sameForAll({ routes: [fileRoute({ path: 'hello.txt', etagMethod })] }, ['/file']);
        const etag = first!.headers.etag;
        await sameForAll({ routes: [fileRoute({ path: 'hello.txt', etagMethod })] }, [
            get('/file', { 'if-modified-since': lastModified }),
            get('/file', { 'if-modified-since': new Date(0).toUTCString() }),
            get('/file', { 'if-none-match': '"stale"' }),
            ...(etag
                ? [get('/file', { 'if-none-match': etag }), get('/file', { 'if-none-match': `"x", ${etag}` })]
                : [])
        ]);
    });

    it.each([[{ start: 2, end: 6 }], [{ start: 7 }], [{ end: 4 }], [{ start: 13, end: 13 }]])(
        'start/end %j, alone and with Range, If-None-Match, If-Modified-Since',
        async (offsets) => {
            await sameForAll({ routes: [fileRoute({ path: 'hello.txt', ...offsets })] }, [
                '/file',
                head('/file'),
                get('/file', { range: 'bytes=0-0' }),
                get('/file', { range: 'bytes=-1' }),
                get('/file', { range: 'bytes=100-' }),
                get('/file', { 'if-none-match': helloTag }),
                get('/file', { 'if-modified-since': lastModified })
            ]);
        }
    );

    it('Range on the whole file: one range, a suffix, open-ended, adjacent, unsatisfiable, malformed, If-Range', async () => {
        // Several disjoint ranges are an intended difference (S15).
        await sameForAll({ routes: [fileRoute('large.txt')] }, [
            get('/file', { range: 'bytes=0-9' }),
            get('/file', { range: 'bytes=-5' }),
            get('/file', { range: 'bytes=99990-' }),
            get('/file', { range: 'bytes=99999-200000' }),
            get('/file', { range: 'bytes=0-4,5-9' }),
            get('/file', { range: 'bytes=200000-' }),
            get('/file', { range: 'items=0-1' }),
            get('/file', { range: 'bytes=0-9', 'if-range': '"stale"' }),
            get('/file', { range: 'bytes=0-9', 'if-range': 'W/"weak"' })
        ]);
    });

    describe('lookupCompressed × start/end × Range × conditions × server compression', () => {
        for (const compression of [undefined, false] as const) {
            const server: Hapi.ServerOptions = compression === false ? { compression: false } : {};
            const label = compression === false ? 'compression off' : 'compression on';

            it(`${label}: a client that accepts no variant gets the file itself`, async () => {
                await sameForAll(
                    {
                        routes: [fileRoute({ path: 'large.txt', lookupCompressed: true })],
                        server,
                        ignoreHeaders: ['vary']
                    },
                    [
                        '/file',
                        get('/file', { 'accept-encoding': 'identity' }),
                        get('/file', { 'accept-encoding': 'gzip;q=0' }),
                        get('/file', { range: 'bytes=0-9' }),
                        get('/file', { 'if-modified-since': lastModified }),
                        head('/file')
                    ]
                );
            });

            it(`${label}: with start/end the variant is never used, whatever the client accepts`, async () => {
                await sameForAll(
                    {
                        routes: [fileRoute({ path: 'large.txt', lookupCompressed: true, start: 3, end: 20 })],
                        server
                    },
                    [
                        get('/file', { 'accept-encoding': 'gzip' }),
                        get('/file', { 'accept-encoding': 'gzip', range: 'bytes=0-4' }),
                        get('/file', { 'accept-encoding': 'gzip', 'if-modified-since': lastModified }),
                        get('/file', { 'accept-encoding': 'gzip, deflate', range: 'bytes=-2' })
                    ]
                );
            });

            it(`${label}: a file without a variant is served as it is`, async () => {
                await sameForAll(
                    {
                        routes: [fileRoute({ path: 'hello.txt', lookupCompressed: true, lookupMap: { gzip: '.gz' } })],
                        server,
                        ignoreHeaders: ['vary']
                    },
                    [
                        get('/file', { 'accept-encoding': 'gzip' }),
                        get('/file', { 'accept-encoding': 'gzip', range: 'bytes=0-1' })
                    ]
                );
            });
        }

        it('compression on: the gzip variant is sent whole, with or without Range (its ETag aside: difference 5)', async () => {
            await sameForAll(
                {
                    routes: [fileRoute({ path: 'large.txt', lookupCompressed: true })],
                    ignoreHeaders: ['etag', 'vary']
                },
                [
                    get('/file', { 'accept-encoding': 'gzip' }),
                    get('/file', { 'accept-encoding': 'gzip', range: 'bytes=0-9' }),
                    get('/file', { 'accept-encoding': 'gzip, deflate' })
                ]
            );
        });
    });
});

describe('Conformance with @hapi/inert: the directory handler (README, "Static files")', () => {
    const files = [
        '/hello.txt',
        '/dir/other.html',
        '/odd/with%20space.txt',
        '/odd/%C3%BCn%C3%AF.txt',
        '/missing.txt',
        '/.env',
        '/a/.hidden/file.txt',
        '/listed/.secret',
        '/link-inside.txt',
        head('/hello.txt')
    ];
    const directories = ['/dir', '/dir/', '/dir?x=1', '/custom', '/custom/', '/listed', '/listed/', '/'];
    const traversal = [
        '/..%2foutside%2fsecret.txt',
        '/..%2Fpublic-sibling%2Fsibling.txt',
        '/dir/..%2f..%2foutside%2fsecret.txt',
        '/%2e%2e/outside/secret.txt',
        '/a%2f..%2f.env',
        '/hello.txt%00.png'
    ];

    it('serves files, misses, hidden names and traversal alike with the defaults', async () => {
        await sameForAll({ routes: [directoryRoute({})] }, [...files, ...directories, ...traversal]);
    });

    // Every pair of index × redirectToSlash × defaultExtension; showHidden alternates so that each
    // index form meets both of its values (the full product only doubles the run time).
    const combinations: Array<Record<string, unknown>> = [];
    for (const index of [true, false, 'main.htm', ['missing.html', 'main.htm', 'index.html']]) {
        for (const redirectToSlash of [true, false]) {
            for (const defaultExtension of [undefined, 'html']) {
                const showHidden = combinations.length % 3 === 0;
                combinations.push({ index, redirectToSlash, defaultExtension, showHidden });
            }
        }
    }

    it.each(combinations)('index × redirectToSlash × defaultExtension × showHidden: %j', async (options) => {
        const directoryRequests = directories.filter((url) => !(options.redirectToSlash && url === '/dir?x=1'));
        await sameForAll({ routes: [directoryRoute(options)] }, [
            ...files,
            ...directoryRequests,
            '/about',
            '/dir/index',
            '/listed/a'
        ]);
    });

    it.each([true, false])('listing (showHidden %s): files and directories with an index', async (showHidden) => {
        await sameForAll({ routes: [directoryRoute({ listing: true, showHidden })] }, [
            ...files,
            '/dir',
            '/dir/',
            ...traversal
        ]);
    });

    it.each([
        ['a string', () => 'listed'],
        ['an array', () => ['dir', 'listed']],
        ['an empty array', () => []],
        ['an Error', () => new Error('not here')],
        ['a wrong type', () => 42]
    ])('path as a function returning %s', async (_title, path) => {
        await sameForAll({ routes: [directoryRoute({ path })] }, ['/a.txt', '/index.html', '/missing']);
    });

    it('data.path of an error names the path last tried, the defaultExtension retry included', async () => {
        // The error's data reaches no client: an onPreResponse extension shows it, relative to the root.
        const showPath = (server: Hapi.Server): void => {
            server.ext('onPreResponse', (request, h) => {
                const response = request.response as { isBoom?: boolean; data?: { path?: unknown } | null };
                if (response.isBoom) {
                    const path = String(response.data?.path ?? '-');
                    (response as unknown as { output: { headers: Record<string, string> } }).output.headers['x-path'] =
                        path.startsWith(root) ? path.slice(root.length) : path;
                }

                return h.continue;
            });
        };
        for (const defaultExtension of ['html', undefined]) {
            await sameForAll({ routes: [directoryRoute({ defaultExtension })], configure: showPath }, [
                '/missing',
                '/about',
                '/ext-dir',
                // A miss with a trailing slash keeps it in inert's data.path only: the retry's case alone here.
                ...(defaultExtension === undefined ? [] : ['/ext-dir/']),
                '/bare-dir',
                '/hello.txt/x',
                '/dir/nope',
                '/listed'
            ]);
        }
    });

    it('path as an array of roots: the first that has the file wins', async () => {
        await sameForAll({ routes: [directoryRoute({ path: ['dir', 'second', 'listed'] })] }, [
            '/index.html',
            '/only-in-second.txt',
            '/b.txt',
            '/missing'
        ]);
    });

    it.each(['/s/{p}', '/s/{p?}', '/s/{p*}', '/s/{p*2}', '/x/{other}/s/{p*}'])(
        'route parameter %s selects the resource',
        async (path) => {
            const prefix = path.startsWith('/x/') ? '/x/anything/s/' : '/s/';
            await sameForAll({ routes: [directoryRoute({}, path)] }, [
                `${prefix}hello.txt`,
                `${prefix}dir/index.html`,
                `${prefix}listed/sub/x.txt`,
                prefix
            ]);
        }
    );

    it('lookupCompressed, lookupMap and etagMethod as for a file, for clients that take no variant', async () => {
        await sameForAll(
            {
                routes: [directoryRoute({ lookupCompressed: true, lookupMap: { gzip: '.gz' }, etagMethod: 'simple' })],
                ignoreHeaders: ['vary']
            },
            ['/large.txt', get('/large.txt', { range: 'bytes=0-3' }), get('/hello.txt', { 'accept-encoding': 'gzip' })]
        );
    });

    it('is off when the router strips trailing slashes', async () => {
        await sameForAll(
            { routes: [directoryRoute({ redirectToSlash: true })], server: { router: { stripTrailingSlash: true } } },
            ['/dir', '/listed', '/hello.txt']
        );
    });

    it('h.file() in onPreResponse replaces a 404 (README, "Static files") with the page and its status', async () => {
        const servers = await pair({
            routes: [directoryRoute({})],
            configure: (server) =>
                server.ext('onPreResponse', (request, h) => {
                    const response = request.response as { isBoom?: boolean; output?: { statusCode: number } };
                    return response.isBoom && response.output?.statusCode === 404
                        ? h.file('page.html').code(404)
                        : h.continue;
                })
        });
        for (const request of ['/missing', '/hello.txt', head('/missing')]) {
            const [theirs, ours] = await Promise.all([servers.inert.inject(request), servers.ours.inject(request)]);
            expect(ours.statusCode).toBe(theirs.statusCode);
            expect(ours.payload).toBe(theirs.payload);
            expect(ours.headers['content-type']).toBe(theirs.headers['content-type']);
        }
    });
});

describe('Intended differences from @hapi/inert (docs/migrating-from-inert-and-boom.md)', () => {
    it('redirectToSlash defaults to false (README, "Static files"; S1)', async () => {
        const servers = await pair({
            routes: [() => ({ method: 'GET', path: '/{p*}', handler: { directory: { path: '.' } } })]
        });
        expect((await servers.ours.inject('/dir')).statusCode).toBe(200);
        expect((await servers.inert.inject('/dir')).statusCode).toBe(302);
    });

    it('confinement holds for the real path: a symlink inside the root to a file outside is 403 (S2)', async () => {
        const servers = await pair({ routes: [directoryRoute({}), fileRoute('link-outside.txt')] });
        for (const url of ['/link-outside.txt', '/file']) {
            expect((await servers.ours.inject(url)).statusCode).toBe(403);
            expect((await servers.inert.inject(url)).payload).toBe('outside secret');
        }
    });

    it('content-disposition carries the file name as a quoted string (S3)', async () => {
        const servers = await pair({
            routes: [fileRoute({ path: 'hello.txt', mode: 'attachment', filename: 'a b"c.txt' })]
        });
        expect((await servers.ours.inject('/file')).headers['content-disposition']).toBe(
            'attachment; filename="a b\\"c.txt"'
        );
        expect((await servers.inert.inject('/file')).headers['content-disposition']).toBe(
            'attachment; filename=a%20b%22c.txt'
        );
    });

    it('a listing links directories with a trailing /, its parent with ../, and answers JSON on request (S4)', async () => {
        const servers = await pair({ routes: [directoryRoute({ listing: true })] });
        const ours = await servers.ours.inject('/listed/');
        const theirs = await servers.inert.inject('/listed/');
        const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1]).sort();
        expect(hrefs(ours.payload)).toStrictEqual(['/listed/../', '/listed/a.txt', '/listed/b.txt', '/listed/sub/']);
        expect(hrefs(theirs.payload)).toStrictEqual(['/', '/listed/a.txt', '/listed/b.txt', '/listed/sub']);
        expect(ours.headers.vary).toBe('accept');
        const json = await servers.ours.inject({ url: '/listed/', headers: { accept: 'application/json' } });
        expect(JSON.parse(json.payload).map((entry: { name: string }) => entry.name)).toStrictEqual([
            'sub',
            'a.txt',
            'b.txt'
        ]);
        const theirJson = await servers.inert.inject({ url: '/listed/', headers: { accept: 'application/json' } });
        expect(theirJson.headers['content-type']).toMatch(/^text\/html/);
    });

    it('lookupCompressed negotiates by itself (variant, Vary, ETag of the variant bytes) (S5)', async () => {
        const options = { path: 'large.txt', lookupCompressed: true, lookupMap: { gzip: '.gz', br: '.br' } };
        const off = await pair({ routes: [fileRoute(options)], server: { compression: false } });
        const gzip = get('/file', { 'accept-encoding': 'gzip' });
        // The same on both sides: a server with compression off is never sent an encoded body.
        expect((await off.ours.inject(gzip)).headers['content-encoding']).toBeUndefined();
        expect((await off.inert.inject(gzip)).headers['content-encoding']).toBeUndefined();

        const on = await pair({ routes: [fileRoute(options)] });
        const br = get('/file', { 'accept-encoding': 'br' });
        expect((await on.ours.inject(br)).payload).toBe('pretend brotli');
        expect((await on.inert.inject(br)).payload).toBe(largeText);

        // hapi's own choice (deflate, compressed on the fly) is not what lookupCompressed promises (README, "Static files").
        const deflateFirst = get('/file', { 'accept-encoding': 'deflate, gzip;q=0.5' });
        expect((await on.ours.inject(deflateFirst)).headers['content-encoding']).toBe('gzip');
        expect((await on.inert.inject(deflateFirst)).headers['content-encoding']).toBe('deflate');

        // Every response of such a route varies on accept-encoding, the identity one included.
        const partial = get('/file', { range: 'bytes=0-9' });
        expect((await on.ours.inject(partial)).headers.vary).toBe('accept-encoding');
        expect((await on.inert.inject(partial)).headers.vary).toBeUndefined();

        const ourTag = (await on.ours.inject(gzip)).headers.etag;
        const theirTag = (await on.inert.inject(gzip)).headers.etag;
        expect(ourTag).not.toBe(theirTag);
        expect(theirTag).toMatch(/-gzip"$/);
    });

    it('preconditions follow RFC 9110: If-Match, If-Unmodified-Since, If-None-Match *, If-Range dates, HEAD (S6)', async () => {
        const servers = await pair({ routes: [fileRoute('large.txt')] });
        const cases: Array<[Request, number, number]> = [
            [get('/file', { 'if-match': '"stale"' }), 412, 200],
            [get('/file', { 'if-unmodified-since': new Date(0).toUTCString() }), 412, 200],
            [get('/file', { 'if-none-match': '*' }), 304, 200],
            [get('/file', { range: 'bytes=0-9', 'if-range': lastModified }), 206, 200],
            [head('/file', { range: 'bytes=0-1' }), 200, 206]
        ];
        for (const [request, ourStatus, theirStatus] of cases) {
            expect((await servers.ours.inject(request)).statusCode, JSON.stringify(request)).toBe(ourStatus);
            expect((await servers.inert.inject(request)).statusCode, JSON.stringify(request)).toBe(theirStatus);
        }

        const hello = await pair({ routes: [fileRoute('hello.txt')] });
        const weak = get('/file', { 'if-none-match': `W/${helloTag}` });
        expect((await hello.ours.inject(weak)).headers.etag).toBe(helloTag);
        expect((await hello.inert.inject(weak)).headers.etag).toBe(`W/${helloTag}`);
    });

    it('a status set by the handler means the body is not the resource: no validators, 304 or 206 (S7)', async () => {
        const servers = await pair({
            routes: [() => ({ method: 'GET', path: '/page', handler: (_request, h) => h.file('hello.txt').code(404) })]
        });
        const ours = await servers.ours.inject(get('/page', { range: 'bytes=0-1' }));
        const theirs = await servers.inert.inject(get('/page', { range: 'bytes=0-1' }));
        expect([ours.statusCode, ours.headers.etag, ours.payload]).toStrictEqual([404, undefined, 'Hello, world!\n']);
        expect([theirs.statusCode, theirs.headers.etag === undefined, theirs.payload]).toStrictEqual([
            206,
            false,
            'He'
        ]);
    });

    it('the trailing-slash redirect keeps the query string (S8)', async () => {
        const servers = await pair({ routes: [directoryRoute({ redirectToSlash: true })] });
        expect((await servers.ours.inject('/dir?x=1')).headers.location).toBe('/dir/?x=1');
        expect((await servers.inert.inject('/dir?x=1')).headers.location).toBe('/dir/');
    });

    it('an error made without a message has no payload message (S9)', async () => {
        const servers = await pair({ routes: [fileRoute('missing.txt')] });
        expect(JSON.parse((await servers.ours.inject('/file')).payload)).toStrictEqual({
            statusCode: 404,
            error: 'Not Found'
        });
        expect(JSON.parse((await servers.inert.inject('/file')).payload).message).toBe('Not Found');
    });

    it('start/end past the end of the file stop at its end, and a long suffix range is the whole slice (S10)', async () => {
        const past = await pair({ routes: [fileRoute({ path: 'hello.txt', start: 0, end: 1_000_000 })] });
        const ours = await past.ours.inject('/file');
        expect([ours.headers['content-length'], ours.payload]).toStrictEqual([14, 'Hello, world!\n']);
        expect((await past.inert.inject('/file')).headers['content-length']).toBe(1_000_001);

        const slice = await pair({ routes: [fileRoute({ path: 'hello.txt', start: 13, end: 13 })] });
        const suffix = get('/file', { range: 'bytes=-3' });
        expect((await slice.ours.inject(suffix)).headers['content-range']).toBe('bytes 0-0/1');
        expect((await slice.inert.inject(suffix)).headers['content-range']).toBe('bytes -2-0/1');
    });

    it('confine: "/" confines to the file-system root instead of refusing every path (S11)', async () => {
        const servers = await pair({ routes: [fileRoute({ path: join(root, 'hello.txt'), confine: '/' })] });
        expect((await servers.ours.inject('/file')).payload).toBe('Hello, world!\n');
        expect((await servers.inert.inject('/file')).statusCode).toBe(403);
    });

    it('several ranges are a multipart 206 where inert sends the whole file; ranges that cannot be met are left out (S15)', async () => {
        const servers = await pair({ routes: [fileRoute('large.txt')] });
        const several = get('/file', { range: 'bytes=0-99,50000-50099' });
        const ours = await servers.ours.inject(several);
        expect(ours.statusCode).toBe(206);
        expect(ours.headers['content-type']).toMatch(/^multipart\/byteranges; boundary=/);
        const theirs = await servers.inert.inject(several);
        expect([theirs.statusCode, theirs.payload.length]).toStrictEqual([200, largeText.length]);

        // Ranges closer than a part header are one range.
        const close = get('/file', { range: 'bytes=0-1,5-6' });
        expect((await servers.ours.inject(close)).headers['content-range']).toBe('bytes 0-6/100000');
        expect((await servers.inert.inject(close)).statusCode).toBe(200);

        const partly = get('/file', { range: 'bytes=0-4,200000-' });
        expect((await servers.ours.inject(partly)).headers['content-range']).toBe('bytes 0-4/100000');
        expect((await servers.inert.inject(partly)).statusCode).toBe(416);
    });
});
