import * as Fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tracewire from '../../src/index.js';
import { formatContentDisposition } from '../../src/static/content-disposition.js';
import { EtagCache } from '../../src/static/etag.js';
import { staticFiles } from '../../src/static/index.js';
import { prefersJson } from '../../src/static/listing.js';
import { parseRange } from '../../src/static/range.js';
import { StaticState } from '../../src/static/state.js';
import { createFixture, type Fixture } from './helpers.js';

let fixture: Fixture;

beforeAll(() => {
    fixture = createFixture();
});

afterAll(() => {
    fixture.remove();
});

describe('plugin registration', () => {
    it('is exported from the package entry point as staticFiles, named static', () => {
        expect(tracewire.staticFiles).toBe(staticFiles);
        expect(staticFiles.name).toBe('static');
    });

    it('registers on a server and registering twice is harmless', async () => {
        const server = Hapi.server({ routes: { files: { relativeTo: fixture.root } } });
        await server.register(staticFiles);
        await server.register(staticFiles);
        // With the companion that satisfies plugins depending on @hapi/inert by name.
        expect(Object.keys(server.registrations)).toEqual(['static', '@hapi/inert']);
        server.route({ method: 'GET', path: '/', handler: { file: join(fixture.root, 'hello.txt') } });
        expect((await server.inject('/')).statusCode).toBe(200);
    });

    it('reads plugins.static.etagsCacheMaxSize from the server options', async () => {
        const server = Hapi.server({ plugins: { static: { etagsCacheMaxSize: 5 } } });
        await server.register(staticFiles);
        expect(server.settings.plugins?.static?.etagsCacheMaxSize).toBe(5);
    });

    it('fails registration with a clear message for a bad setting', async () => {
        for (const bad of [-1, 1.5, '10', Number.NaN]) {
            const server = Hapi.server({ plugins: { static: { etagsCacheMaxSize: bad as number } } });
            await expect(server.register(staticFiles)).rejects.toThrow(
                /plugins\.static\.etagsCacheMaxSize must be a non-negative integer/
            );
        }

        const typo = Hapi.server({ plugins: { static: { etagCacheMaxSize: 10 } as never } });
        await expect(typo.register(staticFiles)).rejects.toThrow(/unknown key\(s\) etagCacheMaxSize/);
        const notObject = Hapi.server({ plugins: { static: 'big' as never } });
        await expect(notObject.register(staticFiles)).rejects.toThrow(/plugins\.static must be an object/);
    });

    it('h.file() validates its options per call, naming h.file()', async () => {
        const server = Hapi.server({ debug: false });
        await server.register(staticFiles);
        let message = '';
        server.route({
            method: 'GET',
            path: '/',
            handler: (_request, h) => {
                try {
                    return h.file('x', { mode: 'download' as 'inline' });
                } catch (err) {
                    message = (err as Error).message;
                    throw err;
                }
            }
        });
        expect((await server.inject('/')).statusCode).toBe(500);
        expect(message).toBe('static: h.file() option "mode" must be false, "attachment" or "inline"');
    });
});

describe('the ETag cache stays within etagsCacheMaxSize', () => {
    it('keeps at most etagsCacheMaxSize hashes, evicting the least recently used', async () => {
        const cache = new EtagCache(2);
        const files = ['a', 'b', 'c'].map((name) => {
            const path = join(fixture.base, `cache-${name}.txt`);
            Fs.writeFileSync(path, name);
            return { path, stats: Fs.statSync(path) };
        });
        const [a, b, c] = files as [(typeof files)[0], (typeof files)[0], (typeof files)[0]];
        await cache.tag('hash', a.path, a.stats);
        await cache.tag('hash', b.path, b.stats);
        await cache.tag('hash', a.path, a.stats);
        await cache.tag('hash', c.path, c.stats);
        expect(cache.size).toBe(2);
        // Rewriting a file under the same key shows whether its tag comes from the cache or a new hash.
        Fs.writeFileSync(a.path, 'changed');
        Fs.writeFileSync(b.path, 'changed');
        expect(await cache.tag('hash', a.path, a.stats)).toBe('86f7e437faa5a7fce15d1ddcb9eaeaea377667b8');
        expect(await cache.tag('hash', b.path, b.stats)).not.toBe('e9d71f5ee7c92d6dc9e92ffdad17b8bd49418f98');
    });

    it('deduplicates concurrent hashing of the same file', async () => {
        const cache = new EtagCache(10);
        const path = join(fixture.root, 'large.txt');
        const stats = Fs.statSync(path);
        const opened = countOpens(async () => {
            const tags = await Promise.all(Array.from({ length: 20 }, () => cache.tag('hash', path, stats)));
            expect(new Set(tags).size).toBe(1);
        });
        expect(await opened).toBe(1);
    });

    it('with size 0 keeps nothing but still answers', async () => {
        const cache = new EtagCache(0);
        const path = join(fixture.root, 'hello.txt');
        const stats = Fs.statSync(path);
        expect(await cache.tag('hash', path, stats)).toMatch(/^[0-9a-f]{40}$/);
        expect(cache.size).toBe(0);
    });

    it('a failed hash is not cached', async () => {
        const cache = new EtagCache(10);
        const path = join(fixture.base, 'vanishing.txt');
        Fs.writeFileSync(path, 'x');
        const stats = Fs.statSync(path);
        Fs.rmSync(path);
        await expect(cache.tag('hash', path, stats)).rejects.toMatchObject({ output: { statusCode: 404 } });
        Fs.writeFileSync(path, 'x');
        // The file written again is another file: no tag for the stats of the one that vanished.
        expect(await cache.tag('hash', path, stats)).toBeNull();
        expect(await cache.tag('hash', path, Fs.statSync(path))).toMatch(/^[0-9a-f]{40}$/);
    });
});

async function countOpens(run: () => Promise<void>): Promise<number> {
    const { syncBuiltinESMExports } = await import('node:module');
    const fs = (await import('node:fs')).default as unknown as { open: Function };
    const original = fs.open;
    let count = 0;
    fs.open = (...args: unknown[]) => {
        count += 1;
        return original(...args);
    };
    syncBuiltinESMExports();
    try {
        await run();
    } finally {
        fs.open = original;
        syncBuiltinESMExports();
    }

    return count;
}

describe("Content types come from the server's MIME database", () => {
    it("honours the server's mime option, as @hapi/inert does", async () => {
        const dir = Fs.mkdtempSync(join(Fs.realpathSync(tmpdir()), 'tracewire-mime-'));
        Fs.writeFileSync(join(dir, 'notes.tracewire-notes'), 'text');
        const server = Hapi.server({
            mime: { override: { 'text/x-tracewire-notes': { source: 'iana', extensions: ['tracewire-notes'] } } }
        });
        await server.register(staticFiles);
        server.route({ method: 'GET', path: '/{p*}', handler: { directory: { path: dir } } });
        const res = await server.inject('/notes.tracewire-notes');
        expect(res.headers['content-type']).toBe('text/x-tracewire-notes; charset=utf-8');
        Fs.rmSync(dir, { recursive: true });
    });
});

describe('Lookup caches stay bounded', () => {
    it('content types and confine roots are looked up again once their caches fill', async () => {
        const { mime } = Hapi.server();
        const state = new StaticState(1, (path) => mime.path(path));
        for (let i = 0; i < 1002; ++i) {
            expect(state.contentType(`file.ext${i}`)).toBe('application/octet-stream');
        }

        expect(state.contentType('file.html')).toBe('text/html; charset=utf-8');
        for (let i = 0; i < 1002; ++i) {
            expect(await state.realRoot(`${fixture.root}${'/.'.repeat(i)}`)).toBe(fixture.root);
        }
    });
});

describe('Range header parsing', () => {
    it('parses single, open, suffix and merged ranges', () => {
        expect(parseRange('bytes=0-4', 10)).toEqual([{ from: 0, to: 4 }]);
        expect(parseRange('BYTES=5-', 10)).toEqual([{ from: 5, to: 9 }]);
        expect(parseRange('bytes=-3', 10)).toEqual([{ from: 7, to: 9 }]);
        expect(parseRange('bytes=0-2,3-5', 10)).toEqual([{ from: 0, to: 5 }]);
        expect(parseRange('bytes=4-6, 0-8', 10)).toEqual([{ from: 0, to: 8 }]);
        expect(parseRange('bytes=5-6,0-1', 10)).toEqual([
            { from: 0, to: 1 },
            { from: 5, to: 6 }
        ]);
        expect(parseRange('bytes=10-', 10)).toBe('unsatisfiable');
        expect(parseRange('bytes=1-x', 10)).toBe('unsatisfiable');
    });

    it('leaves out the ranges that cannot be met and empty list elements', () => {
        expect(parseRange('bytes=20-30, 0-1, 5-2, -0', 10)).toEqual([{ from: 0, to: 1 }]);
        expect(parseRange('bytes=, 0-1,, 3-4 ,', 10)).toEqual([
            { from: 0, to: 1 },
            { from: 3, to: 4 }
        ]);
        expect(parseRange('bytes=20-30, 5-2, -0', 10)).toBe('unsatisfiable');
        expect(parseRange('bytes=', 10)).toBe('unsatisfiable');
        expect(parseRange('bytes=0-1, x', 10)).toBe('unsatisfiable');
    });
});

describe('Content-Disposition formatting', () => {
    it('quotes ASCII names and adds filename* for others', () => {
        expect(formatContentDisposition('inline', 'a.txt')).toBe('inline; filename="a.txt"');
        expect(formatContentDisposition('attachment', '日本.txt')).toBe(
            `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`
        );
        expect(formatContentDisposition('attachment', 'x*.txt')).toBe('attachment; filename="x*.txt"');
    });
});

describe('Listing content negotiation', () => {
    it('prefers HTML when nothing is said', () => {
        expect(prefersJson(undefined)).toBe(false);
        expect(prefersJson('')).toBe(false);
        expect(prefersJson('application/json;level=1')).toBe(true);
    });
});
