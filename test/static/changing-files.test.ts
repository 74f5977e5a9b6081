import { createHash } from 'node:crypto';
import fs, * as Fs from 'node:fs';
import * as Http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityTag } from '../../src/static/etag.js';
import { createFixture, createServer, type Fixture } from './helpers.js';

/*
 * Files that change while they are served (a deploy that truncates and writes, an editor saving, a
 * rename over the path): a response is complete only with the bytes of one version of the file, under
 * a validator of those bytes; any other response ends its connection (README, "Static files").
 */

interface Outcome {
    status: number;
    etag: string | undefined;
    announced: number;
    body: Buffer;
    /** `complete`: every announced byte arrived and the response ended; `cut`: the connection ended early. */
    end: 'complete' | 'cut';
}

let fixture: Fixture;
let server: Hapi.Server;
let agent: Http.Agent;

beforeAll(async () => {
    fixture = createFixture();
    server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
    server.route({ method: 'GET', path: '/file/{name}', handler: (request, h) => h.file(String(request.params.name)) });
    await server.start();
    // A response cut short but left open would hang here instead of ending after a few seconds.
    server.listener.keepAliveTimeout = 120_000;
    agent = new Http.Agent({ keepAlive: true, maxSockets: 8 });
});

afterAll(async () => {
    agent.destroy();
    await server.stop();
    fixture.remove();
});

/** GETs `path`; `onFirstChunk` runs while the response is paused after its first chunk. */
function get(path: string, onFirstChunk: (() => void) | null = null): Promise<Outcome> {
    return new Promise((resolve) => {
        const req = Http.get({ host: '127.0.0.1', port: server.info.port, path, agent }, (res) => {
            const chunks: Buffer[] = [];
            const outcome = (end: Outcome['end']): Outcome => ({
                status: res.statusCode ?? 0,
                etag: res.headers.etag,
                announced: Number(res.headers['content-length']),
                body: Buffer.concat(chunks),
                end
            });
            let first = true;
            res.on('data', (chunk: Buffer) => {
                chunks.push(chunk);
                if (first && onFirstChunk !== null) {
                    first = false;
                    res.pause();
                    onFirstChunk();
                    setImmediate(() => res.resume());
                }
            });
            res.on('end', () => resolve(outcome('complete')));
            res.on('error', () => resolve(outcome('cut')));
        });
        // A connection that ended before any response (a reused one the server had just closed) is no
        // response at all: nothing was passed off as complete.
        req.on('error', () => resolve({ status: 0, etag: undefined, announced: 0, body: Buffer.alloc(0), end: 'cut' }));
    });
}

const sha1 = (bytes: Buffer): string => createHash('sha1').update(bytes).digest('hex');
const version = (n: number, size: number): Buffer => Buffer.alloc(size, `version ${n};`);

describe('a file changed while it is sent', () => {
    const size = 4 * 1024 * 1024;

    it('ends the connection at once when the file is truncated: never a short body passed off as complete', async () => {
        const path = join(fixture.root, 'truncated.bin');
        Fs.writeFileSync(path, version(1, size));
        const outcome = await get('/file/truncated.bin', () => Fs.truncateSync(path, 100_000));
        expect(outcome.status).toBe(200);
        expect(outcome.end).toBe('cut');
        expect(outcome.body.length).toBeLessThan(size);
    });

    it('ends the connection when the file grows meanwhile: the last chunk does not go out', async () => {
        const path = join(fixture.root, 'extended.bin');
        Fs.writeFileSync(path, version(1, size));
        const outcome = await get('/file/extended.bin', () => Fs.appendFileSync(path, 'more'));
        expect(outcome.end).toBe('cut');
        expect(outcome.body.length).toBeLessThan(size);
    });

    it('ends the connection when the file is rewritten in place with other bytes of the same size', async () => {
        const path = join(fixture.root, 'rewritten.bin');
        Fs.writeFileSync(path, version(1, size));
        // Hashed once, so the next response carries the cached SHA-1 of version 1.
        await get('/file/rewritten.bin');
        const tagged = await get('/file/rewritten.bin', () => Fs.writeFileSync(path, version(2, size)));
        expect(tagged.etag).toBe(`"${sha1(version(1, size))}"`);
        expect(tagged.end).toBe('cut');
    });

    it('ends the connection when another file is renamed over the path, then serves the new version', async () => {
        const path = join(fixture.root, 'renamed.bin');
        Fs.writeFileSync(path, version(1, size));
        const outcome = await get('/file/renamed.bin', () => {
            Fs.writeFileSync(`${path}.next`, version(2, size));
            Fs.renameSync(`${path}.next`, path);
        });
        // The replaced file's change time moves as its last link goes: one definition of "the same file" says changed.
        expect(outcome.end).toBe('cut');
        expect(version(1, size).subarray(0, outcome.body.length).equals(outcome.body)).toBe(true);
        const next = await get('/file/renamed.bin');
        expect(next.body.equals(version(2, size))).toBe(true);
        expect(next.etag).toBe(`"${identityTag(Fs.statSync(path))}"`);
        expect((await get('/file/renamed.bin')).etag).toBe(`"${sha1(version(2, size))}"`);
    });
});

describe('files rewritten every 50 ms under concurrent load', () => {
    // Small (read whole, content cache), medium (hashed in memory) and large (streamed, hashed as sent).
    const sizes = { 'small.bin': 20_000, 'medium.bin': 600_000, 'large.bin': 3_000_000 } as const;

    it('completes no response short or under an ETag of other bytes, and every complete body is a version written', async () => {
        const written = new Map<string, Set<string>>();
        /** The SHA-1 of the bytes of each identity a file had (a large file's first tag names its identity). */
        const identities = new Map<string, string>();
        let round = 0;
        const write = (): void => {
            round += 1;
            for (const [name, base] of Object.entries(sizes)) {
                const path = join(fixture.root, name);
                // Sizes vary, and in-place rewrites alternate with renames over the path.
                const bytes = version(round, base + (round % 3) * 4096);
                const seen = written.get(name) ?? new Set([sha1(Buffer.alloc(0))]);
                seen.add(sha1(bytes));
                written.set(name, seen);
                if (round % 2 === 0) {
                    Fs.writeFileSync(path, bytes);
                } else {
                    Fs.writeFileSync(`${path}.next`, bytes);
                    Fs.renameSync(`${path}.next`, path);
                }

                identities.set(`"${identityTag(Fs.statSync(path))}"`, sha1(bytes));
            }
        };
        write();
        const writer = setInterval(write, 50);
        const outcomes: Array<[string, Outcome]> = [];
        try {
            const names = Object.keys(sizes);
            const clients = Array.from({ length: 8 }, async (_, client) => {
                for (let request = 0; request < 30; ++request) {
                    const name = names[(client + request) % names.length]!;
                    outcomes.push([name, await get(`/file/${name}`)]);
                }
            });
            await Promise.all(clients);
        } finally {
            clearInterval(writer);
        }

        let complete = 0;
        for (const [name, outcome] of outcomes) {
            if (outcome.status !== 200 || outcome.end === 'cut') {
                continue;
            }

            complete += 1;
            expect(outcome.body.length, `${name}: a complete response has every announced byte`).toBe(
                outcome.announced
            );
            expect(written.get(name)!.has(sha1(outcome.body)), `${name}: the body is a version written`).toBe(true);
            if (outcome.etag !== undefined) {
                // The tag is the hash of the body sent, or the identity of the version that body is.
                const tagged = identities.get(outcome.etag) ?? outcome.etag.slice(1, -1);
                expect(tagged, `${name}: the ETag is a validator of the body sent`).toBe(sha1(outcome.body));
            }
        }

        expect(outcomes).toHaveLength(240);
        // Most responses complete: the check ends only those whose file changed under them.
        expect(complete).toBeGreaterThan(0);
    });
});

describe('a file read whole (up to 1 MiB) written while it is read', () => {
    /**
     * Rewrites the file at `path` with the next of `versions` before each of the first `times` reads of
     * any file: the read then races a writer as it would with another process, deterministically.
     */
    async function withWritesDuringReads<T>(path: string, versions: Buffer[], run: () => Promise<T>): Promise<T> {
        const original = fs.readSync;
        let next = 0;
        (fs as unknown as { readSync: Function }).readSync = (...args: unknown[]) => {
            if (next < versions.length) {
                Fs.writeFileSync(path, versions[next++]!);
            }

            return (original as Function)(...args);
        };
        syncBuiltinESMExports();
        try {
            return await run();
        } finally {
            (fs as unknown as { readSync: Function }).readSync = original;
            syncBuiltinESMExports();
        }
    }

    it('is read again with its new stats: the body is the version written, under its own hash', async () => {
        for (const [name, size] of [
            ['small-raced.bin', 20_000],
            ['medium-raced.bin', 600_000]
        ] as const) {
            const path = join(fixture.root, name);
            Fs.writeFileSync(path, version(1, size));
            // A longer version lands as the first read starts: the bytes announced at open are a prefix of it.
            const longer = version(2, size + 5000);
            const res = await withWritesDuringReads(path, [longer], () => server.inject(`/file/${name}`));
            expect(res.statusCode, name).toBe(200);
            expect(res.rawPayload.equals(longer), `${name}: the whole new version`).toBe(true);
            expect(Number(res.headers['content-length']), name).toBe(longer.length);
            expect(res.headers.etag, name).toBe(`"${sha1(longer)}"`);
        }
    });

    it('answers 500 when it keeps changing at every read, never a mix of versions', async () => {
        const path = join(fixture.root, 'restless.bin');
        Fs.writeFileSync(path, version(1, 20_000));
        const versions = [2, 3, 4, 5].map((n) => version(n, 20_000 + n * 1000));
        const res = await withWritesDuringReads(path, versions, () => server.inject('/file/restless.bin'));
        expect(res.statusCode).toBe(500);
    });
});
