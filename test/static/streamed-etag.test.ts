import { createHash } from 'node:crypto';
import * as Fs from 'node:fs';
import * as Http from 'node:http';
import { join } from 'node:path';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countOpenFds, createFixture, createServer, type Fixture, settledFdCount } from './helpers.js';

const sha1 = (bytes: Buffer | string) => createHash('sha1').update(bytes).digest('hex');
/** The identity tag a file has now: size, times, inode and device (README, "Static files"). */
const identityOf = (name: string): string => {
    const { size, mtimeMs, ctimeMs, ino, dev } = Fs.statSync(join(fixture.root, name));
    return `"${[size, mtimeMs, ctimeMs, ino, dev].map((n) => n.toString(16)).join('-')}"`;
};
/** Above the 1 MiB up to which a file not hashed yet is read whole and hashed before it is sent. */
const large = Buffer.alloc(3 * 1024 * 1024 + 17, 'streamed bytes, hashed as they pass\n');
const abandonedSize = 64 * 1024 * 1024;
const medium = Buffer.alloc(512 * 1024, 'read whole, hashed, sent from memory\n');

const identityFiles = ['revalidated.bin', 'resumed.bin', 'hashed.bin', 'both.bin'];

let fixture: Fixture;
let server: Hapi.Server;
let port: number;

beforeAll(async () => {
    fixture = createFixture();
    for (const name of ['first.bin', 'conditional.bin', 'ranged.bin', 'changed.bin', ...identityFiles]) {
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
    it('sends the first response at once with the identity tag, and the next ones with the SHA-1 of what was sent', async () => {
        const first = await server.inject('/static/first.bin');
        expect(first.statusCode).toBe(200);
        expect(first.rawPayload.equals(large)).toBe(true);
        expect(first.headers.etag).toBe(identityOf('first.bin'));
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
        const identity = identityOf('aborted.bin');
        expect((await abandon('/static/aborted.bin')).etag).toBe(identity);
        expect((await abandon('/static/aborted.bin')).etag).toBe(identity);
        expect(await settledFdCount(baseline)).toBeLessThanOrEqual(baseline);
    });

    it('reads a file up to 1 MiB once, and sends it with its etag from the first response', async () => {
        const first = await server.inject('/static/medium.bin');
        expect(first.headers.etag).toBe(`"${sha1(medium)}"`);
        expect(first.rawPayload.equals(medium)).toBe(true);
    });
});

/** A GET over a real socket: status, headers and the whole body. */
function request(path: string, headers: Http.OutgoingHttpHeaders = {}): Promise<Response> {
    return new Promise((resolve, reject) => {
        const req = Http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })
            );
            res.on('error', reject);
        });
        req.on('error', reject);
    });
}

interface Response {
    status: number;
    headers: Http.IncomingHttpHeaders;
    body: Buffer;
}

/** Rewrites a file with other bytes of the same size: only its times (and so its identity) tell. */
function change(name: string): Buffer {
    const changed = Buffer.from(large);
    changed.write('CHANGED', 0);
    Fs.writeFileSync(join(fixture.root, name), changed);
    return changed;
}

describe("the identity tag of a large file's first response: a validator honoured while the file is unchanged", () => {
    it('answers if-none-match with it with 304 before and after the file is hashed, and 200 once the file changed', async () => {
        const first = await request('/static/revalidated.bin');
        const identity = identityOf('revalidated.bin');
        expect(first.headers.etag).toBe(identity);
        // The first request hashed what it sent: the next plain one carries the hash.
        expect((await request('/static/revalidated.bin')).headers.etag).toBe(`"${sha1(large)}"`);

        const revalidated = await request('/static/revalidated.bin', { 'if-none-match': identity });
        expect(revalidated.status).toBe(304);
        // The tag the client holds comes back, so its cache updates the response it stored.
        expect(revalidated.headers.etag).toBe(identity);

        const changed = change('revalidated.bin');
        const after = await request('/static/revalidated.bin', { 'if-none-match': identity });
        expect(after.status).toBe(200);
        expect(after.body.equals(changed)).toBe(true);
        // Not hashed before the first byte: the response carries the new identity, not a hash.
        expect(after.headers.etag).toBe(identityOf('revalidated.bin'));
        expect(after.headers.etag).not.toBe(identity);
    });

    it('answers if-none-match with it with 304 when the file was never hashed', async () => {
        const name = 'both.bin';
        const identity = identityOf(name);
        const revalidated = await request(`/static/${name}`, { 'if-none-match': identity });
        expect(revalidated.status).toBe(304);
        expect(revalidated.headers.etag).toBe(identity);
        const matched = await request(`/static/${name}`, { 'if-match': identity, range: 'bytes=0-9' });
        expect(matched.status).toBe(206);
        const failed = await request(`/static/${name}`, { 'if-match': '"0-0-0-0-0"' });
        expect(failed.status).toBe(412);
    });

    it('resumes with 206 on if-range with it while the file is unchanged, and sends the whole new file once it changed', async () => {
        const first = await request('/static/resumed.bin');
        const identity = first.headers.etag as string;
        expect(identity).toBe(identityOf('resumed.bin'));

        const beforeHash = await request('/static/resumed.bin', { range: 'bytes=100-199', 'if-range': identity });
        expect(beforeHash.status).toBe(206);
        expect(beforeHash.body.equals(large.subarray(100, 200))).toBe(true);
        expect(beforeHash.headers.etag).toBe(identity);

        // A whole response hashes the file; the identity tag still resumes.
        expect((await request('/static/resumed.bin')).body.equals(large)).toBe(true);
        expect((await request('/static/resumed.bin')).headers.etag).toBe(`"${sha1(large)}"`);
        const afterHash = await request('/static/resumed.bin', { range: 'bytes=100-199', 'if-range': identity });
        expect(afterHash.status).toBe(206);
        expect(afterHash.headers['content-range']).toBe(`bytes 100-199/${large.length}`);
        expect(afterHash.headers.etag).toBe(identity);

        const changed = change('resumed.bin');
        const stale = await request('/static/resumed.bin', { range: 'bytes=100-199', 'if-range': identity });
        expect(stale.status).toBe(200);
        expect(stale.body.equals(changed)).toBe(true);
        expect(stale.headers.etag).toBe(identityOf('resumed.bin'));
    });

    it('still honours the content hash once known, for if-none-match and if-range', async () => {
        await request('/static/hashed.bin');
        const tag = `"${sha1(large)}"`;
        expect((await request('/static/hashed.bin')).headers.etag).toBe(tag);
        const revalidated = await request('/static/hashed.bin', { 'if-none-match': tag });
        expect(revalidated.status).toBe(304);
        expect(revalidated.headers.etag).toBe(tag);
        const resumed = await request('/static/hashed.bin', { range: 'bytes=0-9', 'if-range': tag });
        expect(resumed.status).toBe(206);
        expect(resumed.headers.etag).toBe(tag);
        expect(resumed.body.equals(large.subarray(0, 10))).toBe(true);
    });

    it('leaves files up to 1 MiB as they were: their first response carries the hash, an identity-form tag is no match', async () => {
        const first = await request('/static/medium.bin');
        expect(first.headers.etag).toBe(`"${sha1(medium)}"`);
        const other = await request('/static/medium.bin', { 'if-none-match': identityOf('medium.bin') });
        expect(other.status).toBe(200);
        expect(other.headers.etag).toBe(`"${sha1(medium)}"`);
    });
});
