import { createHash } from 'node:crypto';
import * as Fs from 'node:fs';
import * as Http from 'node:http';
import { join } from 'node:path';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countOpenFds, createFixture, createServer, type Fixture, settledFdCount } from './helpers.js';

const sha1 = (bytes: Buffer | string) => createHash('sha1').update(bytes).digest('hex');
/** Above the 1 MiB up to which a file not hashed yet is read whole and hashed before it is sent. */
const large = Buffer.alloc(3 * 1024 * 1024 + 17, 'streamed bytes, hashed as they pass\n');
const abandonedSize = 64 * 1024 * 1024;
const medium = Buffer.alloc(512 * 1024, 'read whole, hashed, sent from memory\n');

let fixture: Fixture;
let server: Hapi.Server;
let port: number;

beforeAll(async () => {
    fixture = createFixture();
    for (const name of ['first.bin', 'conditional.bin', 'ranged.bin', 'changed.bin']) {
        Fs.writeFileSync(join(fixture.root, name), large);
    }

    // Sparse and far larger than the socket buffers, so abandoning it leaves most of it unsent.
    Fs.writeFileSync(join(fixture.root, 'aborted.bin'), '');
    Fs.truncateSync(join(fixture.root, 'aborted.bin'), abandonedSize);

    Fs.writeFileSync(join(fixture.root, 'medium.bin'), medium);
    server = await createServer({ routes: { files: { relativeTo: fixture.root } }, compression: false });
    server.route({ method: 'GET', path: '/static/{p*}', handler: { directory: { path: '.' } } });
    await server.start();
    port = server.info.port as number;
});

afterAll(async () => {
    await server.stop();
    fixture.remove();
});

describe('ETag of a large file not hashed yet: computed while the first response streams it', () => {
    it('sends the first response at once without an etag, and the next ones with the SHA-1 of what was sent', async () => {
        const first = await server.inject('/static/first.bin');
        expect(first.statusCode).toBe(200);
        expect(first.rawPayload.equals(large)).toBe(true);
        expect(first.headers.etag).toBeUndefined();
        expect(first.headers['last-modified']).toBeDefined();

        const second = await server.inject('/static/first.bin');
        expect(second.headers.etag).toBe(`"${sha1(large)}"`);
        expect(second.rawPayload.equals(large)).toBe(true);
        const revalidated = await server.inject({
            url: '/static/first.bin',
            headers: { 'if-none-match': second.headers.etag as string }
        });
        expect(revalidated.statusCode).toBe(304);
    });

    it('hashes before answering when the request needs the tag (if-none-match, if-match, if-range)', async () => {
        const tag = `"${sha1(large)}"`;
        const notModified = await server.inject({ url: '/static/conditional.bin', headers: { 'if-none-match': tag } });
        expect(notModified.statusCode).toBe(304);
        expect(notModified.headers.etag).toBe(tag);
    });

    it('does not hash a partial response: the etag comes with the first whole one', async () => {
        const partial = await server.inject({ url: '/static/ranged.bin', headers: { range: 'bytes=0-99' } });
        expect(partial.statusCode).toBe(206);
        expect(partial.rawPayload.equals(large.subarray(0, 100))).toBe(true);
        const whole = await server.inject('/static/ranged.bin');
        expect(whole.rawPayload.equals(large)).toBe(true);
        const next = await server.inject('/static/ranged.bin');
        expect(next.headers.etag).toBe(`"${sha1(large)}"`);
    });

    it('gives a file changed after it was hashed its new tag, never the old one', async () => {
        await server.inject('/static/changed.bin');
        expect((await server.inject('/static/changed.bin')).headers.etag).toBe(`"${sha1(large)}"`);
        const changed = Buffer.from(large);
        changed.write('CHANGED', 0);
        Fs.writeFileSync(join(fixture.root, 'changed.bin'), changed);
        const after = await server.inject('/static/changed.bin');
        expect(after.rawPayload.equals(changed)).toBe(true);
        expect(after.headers.etag).not.toBe(`"${sha1(large)}"`);
        const next = await server.inject('/static/changed.bin');
        expect(next.headers.etag).toBe(`"${sha1(changed)}"`);
    });

    /** The headers of a response over a real socket, abandoned after its first body chunk. */
    function abandon(path: string): Promise<Http.IncomingHttpHeaders> {
        return new Promise((resolve, reject) => {
            const req = Http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
                res.once('data', () => {
                    req.destroy();
                    resolve(res.headers);
                });
            });
            req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
        });
    }

    it('remembers no tag from a response the client abandoned, and closes the file', async () => {
        const baseline = countOpenFds();
        expect((await abandon('/static/aborted.bin')).etag).toBeUndefined();
        expect((await abandon('/static/aborted.bin')).etag).toBeUndefined();
        expect(await settledFdCount(baseline)).toBeLessThanOrEqual(baseline);
    });

    it('reads a file up to 1 MiB once, and sends it with its etag from the first response', async () => {
        const first = await server.inject('/static/medium.bin');
        expect(first.headers.etag).toBe(`"${sha1(medium)}"`);
        expect(first.rawPayload.equals(medium)).toBe(true);
    });
});
