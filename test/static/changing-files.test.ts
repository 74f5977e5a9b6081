import { createHash } from 'node:crypto';
import fs, * as Fs from 'node:fs';
import * as Http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityTag } from '../../src/static/etag.js';
import { createFixture, createServer, type Fixture, pastTimestamps } from './helpers.js';

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
    retryAfter: string | undefined;
    lastModified: string | undefined;
    /** From the request to the end of the response. */
    ms: number;
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
    const started = performance.now();
    return new Promise((resolve) => {
        const req = Http.get({ host: '127.0.0.1', port: server.info.port, path, agent }, (res) => {
            const chunks: Buffer[] = [];
            const outcome = (end: Outcome['end']): Outcome => ({
                status: res.statusCode ?? 0,
                etag: res.headers.etag,
                announced: Number(res.headers['content-length']),
                body: Buffer.concat(chunks),
                end,
                retryAfter: res.headers['retry-after'],
                lastModified: res.headers['last-modified'],
                ms: performance.now() - started
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
        req.on('error', () =>
            resolve({
                status: 0,
                etag: undefined,
                announced: 0,
                body: Buffer.alloc(0),
                end: 'cut',
                retryAfter: undefined,
                lastModified: undefined,
                ms: performance.now() - started
            })
        );
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
        // Same size: only the times tell version 2 apart, so they must be able to move.
        await pastTimestamps(path);
        const tagged = await get('/file/rewritten.bin', () => Fs.writeFileSync(path, version(2, size)));
        expect(tagged.etag).toBe(`"${sha1(version(1, size))}"`);
        expect(tagged.end).toBe('cut');
    });

    it('completes the old version when another file is renamed over the path, then serves the new version', async () => {
        const path = join(fixture.root, 'renamed.bin');
        Fs.writeFileSync(path, version(1, size));
        const outcome = await get('/file/renamed.bin', () => {
            Fs.writeFileSync(`${path}.next`, version(2, size));
            Fs.renameSync(`${path}.next`, path);
        });
        // The replaced inode keeps its bytes: its change time and link count moved, not its contents.
        expect(outcome.end).toBe('complete');
        expect(outcome.body.equals(version(1, size))).toBe(true);
        const next = await get('/file/renamed.bin');
        expect(next.body.equals(version(2, size))).toBe(true);
        expect(next.etag).toBe(`"${identityTag(Fs.statSync(path))}"`);
        expect((await get('/file/renamed.bin')).etag).toBe(`"${sha1(version(2, size))}"`);
    });

    it('completes the old version when the file is unlinked, or linked under another name, while it is sent', async () => {
        for (const change of ['unlink', 'link'] as const) {
            const path = join(fixture.root, `${change}ed.bin`);
            Fs.writeFileSync(path, version(1, size));
            const outcome = await get(`/file/${change}ed.bin`, () =>
                change === 'unlink' ? Fs.unlinkSync(path) : Fs.linkSync(path, `${path}.link`)
            );
            expect(outcome.end, change).toBe('complete');
            expect(outcome.body.equals(version(1, size)), change).toBe(true);
        }
    });

    it('ends the connection when the file is written in place and its modification time set back (cp -p)', async () => {
        const path = join(fixture.root, 'restored-mtime.bin');
        Fs.writeFileSync(path, version(1, size));
        const { atime, mtime } = Fs.statSync(path);
        // The change time is all that tells version 2 apart: it must be able to move.
        await pastTimestamps(path);
        const outcome = await get('/file/restored-mtime.bin', () => {
            Fs.writeFileSync(path, version(2, size));
            Fs.utimesSync(path, atime, mtime);
        });
        // Same size and modification time: only the change time, with no name gone, tells it apart.
        expect(outcome.end).toBe('cut');
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
            // 15 each: in 120 requests the medium and large files still end both ways, complete and cut
            // (13-50 of each in four runs); 240 took twice the time to find the same.
            const clients = Array.from({ length: 8 }, async (_, client) => {
                for (let request = 0; request < 15; ++request) {
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

        expect(outcomes).toHaveLength(120);
        // Most responses complete: the check ends only those whose file changed under them.
        expect(complete).toBeGreaterThan(0);
    }, 60_000);
});

/**
 * Versions of files written while `clients` concurrent clients GET them for `durationMs`: `write`
 * rewrites each file with the bytes it is given. Returns every outcome with the file's name, the SHA-1
 * of every version written, and the SHA-1 each identity tag stands for.
 */
async function underLoad(
    sizes: Record<string, number>,
    periodMs: number,
    durationMs: number,
    write: (path: string, bytes: Buffer) => void
): Promise<{ outcomes: Array<[string, Outcome]>; written: Map<string, Set<string>>; identities: Map<string, string> }> {
    const written = new Map<string, Set<string>>();
    const identities = new Map<string, string>();
    // Six versions of each file, made and hashed once: the writer's turn must not starve the server.
    const versions = new Map(
        Object.entries(sizes).map(([name, base]) => {
            const made = Array.from({ length: 6 }, (_, n) => version(n, base + (n % 3) * 4096));
            written.set(name, new Set(made.map(sha1)));
            return [name, made.map((bytes) => ({ bytes, hash: sha1(bytes) }))] as const;
        })
    );
    let round = 0;
    const writeAll = (): void => {
        round += 1;
        for (const name of Object.keys(sizes)) {
            const path = join(fixture.root, name);
            const { bytes, hash } = versions.get(name)![round % 6]!;
            write(path, bytes);
            identities.set(`"${identityTag(Fs.statSync(path))}"`, hash);
        }
    };
    writeAll();
    const writer = setInterval(writeAll, periodMs);
    const outcomes: Array<[string, Outcome]> = [];
    const deadline = Date.now() + durationMs;
    try {
        const names = Object.keys(sizes);
        const clients = Array.from({ length: 8 }, async (_, client) => {
            // At least three requests each, however loaded the machine.
            for (let request = 0; request < 3 || Date.now() < deadline; ++request) {
                const name = names[(client + request) % names.length]!;
                outcomes.push([name, await get(`/file/${name}`)]);
            }
        });
        await Promise.all(clients);
    } finally {
        clearInterval(writer);
    }

    return { outcomes, written, identities };
}

/** A complete 200 has every announced byte of one version written, under a validator of those bytes. */
function expectOneVersion(
    name: string,
    outcome: Outcome,
    written: Map<string, Set<string>>,
    identities: Map<string, string>
): void {
    expect(outcome.body.length, `${name}: a complete response has every announced byte`).toBe(outcome.announced);
    expect(written.get(name)!.has(sha1(outcome.body)), `${name}: the body is a version written`).toBe(true);
    if (outcome.etag !== undefined) {
        const tagged = identities.get(outcome.etag) ?? outcome.etag.slice(1, -1);
        expect(tagged, `${name}: the ETag is a validator of the body sent`).toBe(sha1(outcome.body));
    }
}

describe('files replaced by a rename every 100 ms under concurrent load (an atomic deploy)', () => {
    it('completes every response, byte-exact for one version, under a validator of that version', async () => {
        // Read whole, hashed in memory, streamed and hashed as sent, and streamed long enough to meet most renames.
        const sizes = {
            'small-r.bin': 20_000,
            'medium-r.bin': 600_000,
            'large-r.bin': 3_000_000,
            'huge-r.bin': 12_000_000
        };
        const { outcomes, written, identities } = await underLoad(sizes, 100, 2500, (path, bytes) => {
            Fs.writeFileSync(`${path}.next`, bytes);
            Fs.renameSync(`${path}.next`, path);
        });
        const renamedUnder = outcomes.filter(([, outcome]) => outcome.end === 'cut' || outcome.status !== 200);
        expect(renamedUnder.map(([name, o]) => `${name}: ${o.status} ${o.end}`)).toStrictEqual([]);
        for (const [name, outcome] of outcomes) {
            expectOneVersion(name, outcome, written, identities);
        }
    }, 60_000);
});

describe('files rewritten in place every 50 ms under concurrent load', () => {
    it('answers 200 with one version or a 503 to retry without validators: never a 500, a stall or an over-long body', async () => {
        const sizes = { 'small-w.bin': 20_000, 'medium-w.bin': 600_000, 'large-w.bin': 3_000_000 };
        const { outcomes, written, identities } = await underLoad(sizes, 50, 2500, (path, bytes) =>
            Fs.writeFileSync(path, bytes)
        );
        for (const [name, outcome] of outcomes) {
            // 0: a connection ended before any response; 204: a body of no bytes (read while truncated).
            expect([0, 200, 204, 503], name).toContain(outcome.status);
            expect(outcome.ms, `${name}: no stalled response`).toBeLessThan(10_000);
            if (outcome.status === 0 || outcome.status === 204) {
                expect(outcome.body.length, name).toBe(0);
            } else if (outcome.status === 503) {
                expect(outcome.retryAfter, name).toBe('1');
                expect(outcome.etag, name).toBeUndefined();
                expect(outcome.lastModified, name).toBeUndefined();
            } else if (outcome.end === 'complete') {
                expectOneVersion(name, outcome, written, identities);
            } else {
                // Cut before its last byte: the client knows it is incomplete.
                expect(outcome.body.length, name).toBeLessThan(outcome.announced);
            }
        }

        expect(
            outcomes.filter(([, outcome]) => outcome.status === 200 && outcome.end === 'complete').length
        ).toBeGreaterThan(0);
    }, 60_000);

    it('answers a file rewritten faster than it can be read with 200s of one version or 503s, never a 500', async () => {
        const path = join(fixture.root, 'restless-w.bin');
        Fs.writeFileSync(path, version(0, 200_000));
        // Another thread rewrites the file in a loop, as another process would.
        const stop = new Int32Array(new SharedArrayBuffer(4));
        const writer = new Worker(
            `const { workerData } = require('node:worker_threads');
            const Fs = require('node:fs');
            for (let n = 1; Atomics.load(workerData.stop, 0) === 0; ++n) {
                Fs.writeFileSync(workerData.path, Buffer.alloc(200000 + (n % 7) * 4096, 'version ' + n + ';'));
            }`,
            { eval: true, workerData: { path, stop } }
        );
        const statuses = new Map<number, number>();
        try {
            const clients = Array.from({ length: 4 }, async () => {
                for (let request = 0; request < 40; ++request) {
                    const outcome = await get('/file/restless-w.bin');
                    statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
                    if (outcome.status === 503) {
                        expect(outcome.etag).toBeUndefined();
                        expect(outcome.retryAfter).toBe('1');
                    } else if (outcome.status === 200 && outcome.end === 'complete') {
                        expect(outcome.body.length).toBe(outcome.announced);
                        expect(outcome.etag).toBe(`"${sha1(outcome.body)}"`);
                        expect(outcome.body.subarray(0, 8).toString()).toBe('version ');
                    }
                }
            });
            await Promise.all(clients);
        } finally {
            Atomics.store(stop, 0, 1);
            await writer.terminate();
        }

        // 0: a connection ended before any response (the file changed under its first chunk): no response at all.
        // 204: hapi's answer for a body of no bytes, the file read while the writer had truncated it.
        expect([...statuses.keys()].filter((status) => ![0, 200, 204, 503].includes(status))).toStrictEqual([]);
    }, 60_000);
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

    it('answers 503 with Retry-After and no validator when it keeps changing at every read, never a mix of versions', async () => {
        const path = join(fixture.root, 'restless.bin');
        Fs.writeFileSync(path, version(1, 20_000));
        const versions = [2, 3, 4, 5].map((n) => version(n, 20_000 + n * 1000));
        const res = await withWritesDuringReads(path, versions, () => server.inject('/file/restless.bin'));
        expect(res.statusCode).toBe(503);
        expect(res.headers['retry-after']).toBe('1');
        expect(res.headers.etag).toBeUndefined();
        expect(res.headers['last-modified']).toBeUndefined();
    });

    it('reads a file that shrank under the read again: the shorter version, not a 500', async () => {
        const path = join(fixture.root, 'shrinking.bin');
        Fs.writeFileSync(path, version(1, 20_000));
        // A truncating writer lands between the stat and the read: the read ends before the size stat'ed.
        const shorter = version(2, 1000);
        const res = await withWritesDuringReads(path, [shorter], () => server.inject('/file/shrinking.bin'));
        expect(res.statusCode).toBe(200);
        expect(res.rawPayload.equals(shorter)).toBe(true);
        expect(res.headers.etag).toBe(`"${sha1(shorter)}"`);
    });
});
