import type { Stats } from 'node:fs';
import * as Fs from 'node:fs';
import { join } from 'node:path';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentCache, cachedFileLimit } from '../../src/static/content-cache.js';
import { createFixture, createServer, type Fixture } from './helpers.js';

/** How long a file must have been still before its bytes are kept (content-cache.ts). */
const settleMs = 2000;

/** A Stats-shaped value for the unit tests of the cache: only the fields it compares. */
/** A minute before the tests start: long settled. */
const old = Date.now() - 60_000;

function statsOf(fields: Partial<Record<'dev' | 'ino' | 'size' | 'mtimeMs' | 'ctimeMs', number>> = {}): Stats {
    return {
        dev: 1,
        ino: 2,
        size: 3,
        mtimeMs: old,
        ctimeMs: old,
        ...fields,
        isFile: () => true
    } as unknown as Stats;
}

describe('ContentCache keeps small settled files and drops any that changed', () => {
    it('returns the kept bytes only while device, inode, size, mtime and ctime are unchanged', () => {
        const cache = new ContentCache();
        const stats = statsOf();
        cache.set('/f', stats, Buffer.from('abc'));
        expect(cache.get('/f', statsOf())?.toString()).toBe('abc');
        for (const change of [
            { dev: 9 },
            { ino: 9 },
            { size: 4 },
            { mtimeMs: stats.mtimeMs + 1 },
            { ctimeMs: stats.ctimeMs + 0.001 }
        ]) {
            cache.set('/f', stats, Buffer.from('abc'));
            expect(
                cache.get('/f', statsOf({ ...change, mtimeMs: change.mtimeMs ?? stats.mtimeMs })),
                JSON.stringify(change)
            ).toBeNull();
            expect(cache.has('/f')).toBe(false);
        }
    });

    it('keeps nothing changed within the settle time, larger than the limit, or of another length than stat said', () => {
        const cache = new ContentCache();
        const now = Date.now();
        cache.set('/recent-ctime', statsOf({ ctimeMs: now - 10 }), Buffer.from('abc'));
        cache.set('/recent-mtime', statsOf({ mtimeMs: now + 5000 }), Buffer.from('abc'));
        cache.set('/big', statsOf({ size: cachedFileLimit + 1 }), Buffer.alloc(cachedFileLimit + 1));
        cache.set('/short', statsOf({ size: 4 }), Buffer.from('abc'));
        expect(cache.size).toBe(0);
    });

    it('holds at most 16 MiB, evicting the oldest first', () => {
        const cache = new ContentCache();
        const count = 300;
        for (let index = 0; index < count; index++) {
            cache.set(`/f${index}`, statsOf({ size: cachedFileLimit, ino: index }), Buffer.alloc(cachedFileLimit));
        }

        expect(cache.size).toBe((16 * 1024 * 1024) / cachedFileLimit);
        expect(cache.has('/f0')).toBe(false);
        expect(cache.has(`/f${count - 1}`)).toBe(true);
    });
});

// The two describes below each wait out the settle time for their files (2.2 s) and then take
// milliseconds: they run at once (describe.concurrent), each test on files and a server of its own.
describe.concurrent('Content cache: a file changed on disk is served fresh on the very next request', () => {
    let fixture: Fixture;
    let server: Hapi.Server;
    const names = ['same-size.txt', 'touched.txt', 'removed.txt', 'grown.txt', 'ranged.txt'];

    beforeAll(async () => {
        fixture = createFixture();
        for (const name of names) {
            Fs.writeFileSync(join(fixture.root, name), `original ${name}`);
        }

        server = await createServer({ routes: { files: { relativeTo: fixture.root } }, compression: false });
        server.route({ method: 'GET', path: '/static/{p*}', handler: { directory: { path: '.' } } });
        server.route({ method: 'GET', path: '/file/{p*}', handler: { file: (request) => `${request.params.p}` } });
        // Files changed within the settle time are never kept: wait until these are old enough, so
        // that the requests below are served from the cache.
        await new Promise((resolve) => setTimeout(resolve, settleMs + 200));
    }, 20_000);

    afterAll(async () => {
        await server.stop();
        fixture.remove();
    });

    /** Two requests: the first reads and keeps the file, the second is answered from the cache. */
    async function warm(path: string): Promise<Hapi.ServerInjectResponse> {
        await server.inject(path);
        return server.inject(path);
    }

    it('serves new bytes of the same size, with a new etag', async () => {
        const path = join(fixture.root, 'same-size.txt');
        const before = await warm('/static/same-size.txt');
        expect(before.payload).toBe('original same-size.txt');
        Fs.writeFileSync(path, 'ORIGINAL SAME-SIZE.TXT');
        const after = await server.inject('/static/same-size.txt');
        expect(after.payload).toBe('ORIGINAL SAME-SIZE.TXT');
        expect(after.headers.etag).not.toBe(before.headers.etag);
        const conditional = await server.inject({
            url: '/static/same-size.txt',
            headers: { 'if-none-match': before.headers.etag as string }
        });
        expect(conditional.statusCode).toBe(200);
        expect(conditional.payload).toBe('ORIGINAL SAME-SIZE.TXT');
    });

    it('serves new bytes even when the modification time is set back to the old one', async () => {
        const path = join(fixture.root, 'touched.txt');
        const { atime, mtime } = Fs.statSync(path);
        expect((await warm('/file/touched.txt')).payload).toBe('original touched.txt');
        Fs.writeFileSync(path, 'ORIGINAL TOUCHED.TXT');
        Fs.utimesSync(path, atime, mtime);
        expect((await server.inject('/file/touched.txt')).payload).toBe('ORIGINAL TOUCHED.TXT');
    });

    it('answers 404 for a kept file that was removed, and a grown file whole', async () => {
        expect((await warm('/static/removed.txt')).statusCode).toBe(200);
        Fs.rmSync(join(fixture.root, 'removed.txt'));
        expect((await server.inject('/static/removed.txt')).statusCode).toBe(404);

        expect((await warm('/static/grown.txt')).payload).toBe('original grown.txt');
        Fs.appendFileSync(join(fixture.root, 'grown.txt'), ' and more');
        expect((await server.inject('/static/grown.txt')).payload).toBe('original grown.txt and more');
    });

    it('serves ranges of a kept file from its bytes', async () => {
        await warm('/static/ranged.txt');
        const res = await server.inject({ url: '/static/ranged.txt', headers: { range: 'bytes=9-14' } });
        expect(res.statusCode).toBe(206);
        expect(res.payload).toBe('ranged');
        expect(res.headers['content-range']).toBe(`bytes 9-14/${'original ranged.txt'.length}`);
    });
});

describe.concurrent('Content cache: confinement stays exact for kept files', () => {
    let fixture: Fixture;
    let server: Hapi.Server;

    beforeAll(async () => {
        fixture = createFixture();
        Fs.writeFileSync(join(fixture.root, 'to-symlink.txt'), 'inside the root');
        Fs.mkdirSync(join(fixture.root, 'swapped-dir'));
        Fs.writeFileSync(join(fixture.root, 'swapped-dir', 'secret.txt'), 'inside the root');
        Fs.writeFileSync(join(fixture.outside, 'to-symlink.txt'), 'outside secret!');
        server = await createServer({ routes: { files: { relativeTo: fixture.root } }, compression: false });
        server.route({ method: 'GET', path: '/static/{p*}', handler: { directory: { path: '.' } } });
        server.route({ method: 'GET', path: '/file/{p*}', handler: { file: (request) => `${request.params.p}` } });
        await new Promise((resolve) => setTimeout(resolve, settleMs + 200));
    }, 20_000);

    afterAll(async () => {
        await server.stop();
        fixture.remove();
    });

    it('refuses a kept file replaced by a symlink that points outside the root, in both handlers', async () => {
        for (const prefix of ['/static', '/file']) {
            await server.inject(`${prefix}/to-symlink.txt`);
            expect((await server.inject(`${prefix}/to-symlink.txt`)).payload).toBe('inside the root');
        }

        const path = join(fixture.root, 'to-symlink.txt');
        Fs.rmSync(path);
        Fs.symlinkSync(join(fixture.outside, 'to-symlink.txt'), path);
        expect((await server.inject('/static/to-symlink.txt')).statusCode).toBe(403);
        expect((await server.inject('/file/to-symlink.txt')).statusCode).toBe(403);
    });

    it('refuses a kept file whose directory was moved out of the root and linked back', async () => {
        await server.inject('/static/swapped-dir/secret.txt');
        expect((await server.inject('/static/swapped-dir/secret.txt')).payload).toBe('inside the root');
        // The same file, unchanged, now lives outside: its real path is what counts.
        Fs.renameSync(join(fixture.root, 'swapped-dir'), join(fixture.outside, 'swapped-dir'));
        Fs.symlinkSync(join(fixture.outside, 'swapped-dir'), join(fixture.root, 'swapped-dir'));
        expect((await server.inject('/static/swapped-dir/secret.txt')).statusCode).toBe(403);
        expect((await server.inject('/file/swapped-dir/secret.txt')).statusCode).toBe(403);
    });
});
