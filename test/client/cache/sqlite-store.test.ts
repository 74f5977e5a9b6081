import { execFile, execFileSync } from 'node:child_process';
import {
    closeSync,
    existsSync,
    mkdirSync,
    mkdtempSync,
    openSync,
    rmSync,
    statSync,
    writeFileSync,
    writeSync
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteDatabase } from '../../../src/client/cache/stores/node-sqlite.js';
import { SqliteCacheStore } from '../../../src/client/cache/stores/sqlite-store.js';
import { SqliteCacheStore as FromClient } from '../../../src/client/index.js';
import { isHttpError } from '../../../src/errors/index.js';
import { SqliteCacheStore as FromRoot } from '../../../src/index.js';
import { cachedResponse, describeCacheStore } from './store-contract.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const run = promisify(execFile);

// Which branch this runtime must take, from its version alone (CI runs 20, 22, 24 and 26): node:sqlite
// exists unflagged from Node.js 22.13 (and 23.4) on, and not at all on 20.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

let dir: string;
beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tracewire-sqlite-'));
});
afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
});

let files = 0;
function freshFile(): string {
    return join(dir, `cache-${++files}.db`);
}

// node:sqlite itself, to look into a store's file from outside it.
function rawDatabase(location: string): SqliteDatabase {
    const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as {
        DatabaseSync: new (location: string) => SqliteDatabase;
    };
    return new DatabaseSync(location);
}

describe('SqliteCacheStore on this runtime', () => {
    it(`${hasNodeSqlite ? 'works' : 'refuses with an HttpError naming the runtime and what it needs'} on Node.js ${process.version}`, async () => {
        const emitWarning = process.emitWarning;
        if (hasNodeSqlite) {
            const store = new SqliteCacheStore({ location: ':memory:' });
            const entry = cachedResponse();
            await store.set('https://example.test/', entry);
            expect(await store.get('https://example.test/')).toStrictEqual([entry]);
            store.close();
        } else {
            let thrown: unknown;
            try {
                new SqliteCacheStore({ location: join(dir, 'refused.db') });
            } catch (err) {
                thrown = err;
            }

            expect(isHttpError(thrown, 500)).toBe(true);
            expect((thrown as Error).message).toContain(`Node.js ${process.version}`);
            expect((thrown as Error).message).toContain('needs node:sqlite');
            expect((thrown as Error).message).toContain('22.13 or later');
            expect(existsSync(join(dir, 'refused.db'))).toBe(false);
        }

        // Loading it (or failing to) leaves the process's warnings as they were.
        expect(process.emitWarning).toBe(emitWarning);
    });

    it('is exported from tracewire and tracewire/client', () => {
        expect(FromRoot).toBe(SqliteCacheStore);
        expect(FromClient).toBe(SqliteCacheStore);
    });

    describe('from the built package, in a child process', () => {
        beforeAll(() => {
            // The child loads the built package: `npm test` builds first; alone, build here.
            if (!existsSync(join(repo, 'dist/src/index.js'))) {
                execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
                    cwd: repo,
                    stdio: 'inherit'
                });
            }
        }, 120_000);

        it('importing tracewire prints nothing; a store prints no warning where it works', async () => {
            const script = `
                import { SqliteCacheStore } from 'tracewire';
                try {
                    const store = new SqliteCacheStore({ location: ':memory:' });
                    await store.set('k', { method: 'GET', statusCode: 200, statusMessage: 'OK', rawHeaders: [], vary: undefined,
                        body: Buffer.from('x'), requestTime: 0, responseTime: 0, deleteAt: Date.now() + 60000 });
                    console.log((await store.get('k')).length);
                } catch (err) {
                    console.log(err.message);
                }
                // Another experimental warning still reaches the user.
                process.emitWarning('not filtered', 'ExperimentalWarning');`;
            const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
                cwd: repo
            });
            expect(stdout.trim()).toBe(
                hasNodeSqlite
                    ? '1'
                    : `SqliteCacheStore needs node:sqlite, which Node.js ${process.version} does not provide: use Node.js 22.13 or later (22.5 to 22.12 with --experimental-sqlite), or MemoryCacheStore`
            );
            expect(stderr).not.toContain('SQLite');
            expect(stderr).toContain('ExperimentalWarning: not filtered');
        });
    });
});

// The store itself, where node:sqlite exists (the test above asserts the refusal elsewhere).
if (hasNodeSqlite) {
    describeCacheStore(
        'SqliteCacheStore in a file',
        (bounds) => new SqliteCacheStore({ location: freshFile(), ...bounds }),
        (store) => (store as SqliteCacheStore).close()
    );
    describeCacheStore(
        "SqliteCacheStore ':memory:'",
        (bounds) => new SqliteCacheStore({ location: ':memory:', ...bounds }),
        (store) => (store as SqliteCacheStore).close()
    );

    describe('SqliteCacheStore', () => {
        describe('options', () => {
            it.each([
                [{ location: '' }, "Option location must be a file path or ':memory:'"],
                [{ location: 42 }, "Option location must be a file path or ':memory:'"],
                [{ maxCount: 0 }, 'Option maxCount must be a positive integer'],
                [{ maxCount: 1.5 }, 'Option maxCount must be a positive integer'],
                [{ maxSize: -1 }, 'Option maxSize must be a positive integer'],
                [
                    { maxEntrySize: '1000' },
                    "Option maxEntrySize must be a positive integer up to 1000000000 (SQLite's limit)"
                ],
                [
                    { maxEntrySize: 2e9 },
                    "Option maxEntrySize must be a positive integer up to 1000000000 (SQLite's limit)"
                ],
                [{ lockTimeout: -5 }, 'Option lockTimeout must be a non-negative integer (ms)']
            ])('%o: a 500 TypeError naming the option', (options, message) => {
                let thrown: unknown;
                try {
                    new SqliteCacheStore(options as never);
                } catch (err) {
                    thrown = err;
                }

                expect(isHttpError(thrown, 500)).toBe(true);
                expect((thrown as Error).message).toBe(message);
                expect(thrown).toBeInstanceOf(TypeError);
            });

            it('options that are not an object are refused', () => {
                expect(() => new SqliteCacheStore(null as never)).toThrow('SqliteCacheStore options must be an object');
            });

            it('null or undefined means not set: the defaults', () => {
                const store = new SqliteCacheStore({
                    location: null,
                    maxCount: undefined,
                    maxSize: null,
                    maxEntrySize: null,
                    lockTimeout: null
                });
                expect(store).toMatchObject({
                    location: ':memory:',
                    maxCount: 10_000,
                    maxSize: 256 * 2 ** 20,
                    maxEntrySize: 16 * 2 ** 20,
                    lockTimeout: 5_000
                });
                store.close();
                const bare = new SqliteCacheStore();
                expect(bare.location).toBe(':memory:');
                bare.close();
            });

            it('maxEntrySize is at most maxSize', () => {
                const store = new SqliteCacheStore({ maxSize: 1000, maxEntrySize: 5000 });
                expect(store.maxEntrySize).toBe(1000);
                store.close();
            });
        });

        describe('a file that survives the process', () => {
            it('entries persist across close and reopen, deletions too', async () => {
                const location = freshFile();
                const first = new SqliteCacheStore({ location });
                const kept = cachedResponse({ vary: { accept: 'text/html' } });
                await first.set('https://example.test/kept', kept);
                await first.set('https://example.test/dropped', cachedResponse());
                first.close();

                const second = new SqliteCacheStore({ location });
                expect(await second.get('https://example.test/kept')).toStrictEqual([kept]);
                await second.delete('https://example.test/dropped');
                second.close();

                const third = new SqliteCacheStore({ location });
                expect(await third.get('https://example.test/kept')).toStrictEqual([kept]);
                expect(await third.get('https://example.test/dropped')).toStrictEqual([]);
                third.close();
            });

            it('the bounds count what earlier processes stored', async () => {
                const location = freshFile();
                const first = new SqliteCacheStore({ location, maxCount: 3 });
                for (const key of ['a', 'b', 'c']) {
                    await first.set(key, cachedResponse());
                }

                first.close();
                const second = new SqliteCacheStore({ location, maxCount: 3 });
                await second.set('d', cachedResponse());
                expect(await second.get('a')).toStrictEqual([]);
                for (const key of ['b', 'c', 'd']) {
                    expect(await second.get(key)).toHaveLength(1);
                }

                second.close();
            });

            it('the file uses the WAL journal', () => {
                const location = freshFile();
                new SqliteCacheStore({ location }).close();
                const db = rawDatabase(location);
                expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
                db.close();
            });

            it('expired entries are purged from the file as new ones are stored', async () => {
                const location = freshFile();
                const store = new SqliteCacheStore({ location });
                const deleteAt = Date.now() + 200;
                for (let i = 0; i < 10; i++) {
                    await store.set(`https://example.test/${i}`, cachedResponse({ deleteAt }));
                }

                await new Promise((resolve) => setTimeout(resolve, deleteAt - Date.now() + 10));
                await store.set('https://example.test/fresh', cachedResponse());
                const db = rawDatabase(location);
                expect(db.prepare('SELECT key FROM tracewire_cache_v1').all()).toEqual([
                    { key: 'https://example.test/fresh' }
                ]);
                expect(db.prepare('SELECT count FROM tracewire_cache_v1_totals').get()).toEqual({ count: 1 });
                db.close();
                store.close();
            });
        });

        describe('a location it cannot use: a 500 HttpError naming it', () => {
            it('a file that is not a database', () => {
                const location = join(dir, 'not-a-database.db');
                writeFileSync(location, 'this is a text file, not SQLite, and long enough to have a header'.repeat(10));
                expect(() => new SqliteCacheStore({ location })).toThrow(
                    `SqliteCacheStore at ${location} cannot be used: file is not a database`
                );
            });

            it('a database whose pages are corrupt', async () => {
                const location = freshFile();
                const store = new SqliteCacheStore({ location });
                for (let i = 0; i < 20; i++) {
                    await store.set(`https://example.test/${i}`, cachedResponse({ body: Buffer.alloc(3000, 1) }));
                }

                store.close();
                // Everything after the first page (the file header and the schema) overwritten.
                const size = statSync(location).size;
                const fd = openSync(location, 'r+');
                writeSync(fd, Buffer.alloc(size - 4096, 0xab), 0, size - 4096, 4096);
                closeSync(fd);
                expect(() => new SqliteCacheStore({ location })).toThrow(
                    `SqliteCacheStore at ${location} cannot be used: database disk image is malformed`
                );
            });

            it('a directory that does not exist', () => {
                const location = join(dir, 'missing', 'cache.db');
                expect(() => new SqliteCacheStore({ location })).toThrow(
                    `SqliteCacheStore at ${location} cannot be used: unable to open database file`
                );
            });

            it('a directory', () => {
                const location = join(dir, 'a-directory');
                mkdirSync(location);
                let thrown: unknown;
                try {
                    new SqliteCacheStore({ location });
                } catch (err) {
                    thrown = err;
                }

                expect(isHttpError(thrown, 500)).toBe(true);
                expect((thrown as Error).message).toMatch(`SqliteCacheStore at ${location} cannot be used: `);
                expect((thrown as Error).cause).toMatchObject({ code: 'ERR_SQLITE_ERROR' });
            });

            it('a file broken while open (its table dropped by another program): calls reject naming the location', async () => {
                const location = freshFile();
                const store = new SqliteCacheStore({ location });
                await store.set('k', cachedResponse());
                const db = rawDatabase(location);
                db.exec('DROP TABLE tracewire_cache_v1');
                db.close();
                for (const call of [store.get('k'), store.set('k', cachedResponse()), store.delete('k')]) {
                    const err = await call.catch((e: unknown) => e);
                    expect(isHttpError(err, 500)).toBe(true);
                    expect((err as Error).message).toBe(
                        `SqliteCacheStore at ${location} failed: no such table: tracewire_cache_v1`
                    );
                }

                store.close();
            });
        });

        describe('an entry it cannot store', () => {
            it('the call rejects with an HttpError, it does not throw', async () => {
                const store = new SqliteCacheStore();
                const stored = store.set('k', { ...cachedResponse(), body: undefined } as never);
                expect(stored).toBeInstanceOf(Promise);
                const err = await stored.catch((e: unknown) => e);
                expect(isHttpError(err, 500)).toBe(true);
                expect((err as Error).message).toMatch(/^SqliteCacheStore at :memory: failed: /);
                store.close();
            });
        });

        describe('closed', () => {
            it('calls after close() reject naming the store; close() again does nothing', async () => {
                const store = new SqliteCacheStore();
                store.close();
                store.close();
                for (const call of [store.get('k'), store.set('k', cachedResponse()), store.delete('k')]) {
                    const err = await call.catch((e: unknown) => e);
                    expect(isHttpError(err, 500)).toBe(true);
                    expect((err as Error).message).toBe('SqliteCacheStore at :memory: is closed');
                }
            });
        });

        describe('another connection holding the write lock', () => {
            it('a call waits without blocking the event loop, then completes', async () => {
                const location = freshFile();
                const store = new SqliteCacheStore({ location, lockTimeout: 10_000 });
                const other = rawDatabase(location);
                other.exec('BEGIN IMMEDIATE');
                const entry = cachedResponse();
                const started = Date.now();
                const stored = store.set('https://example.test/a', entry);
                // The loop keeps turning while the store waits: timers fire. A store waiting synchronously
                // would hold the loop until its lockTimeout (10 s), since the lock is released on this thread.
                let ticks = 0;
                const ticker = setInterval(() => ticks++, 5);
                await new Promise((resolve) => setTimeout(resolve, 300));
                clearInterval(ticker);
                expect(Date.now() - started).toBeLessThan(5_000);
                expect(ticks).toBeGreaterThan(0);
                other.exec('COMMIT');
                other.close();
                await stored;
                expect(await store.get('https://example.test/a')).toStrictEqual([entry]);
                store.close();
            });

            it('past lockTimeout the call rejects naming the lock', async () => {
                const location = freshFile();
                const store = new SqliteCacheStore({ location, lockTimeout: 200 });
                const other = rawDatabase(location);
                other.exec('BEGIN IMMEDIATE');
                const err = await store.set('https://example.test/a', cachedResponse()).catch((e: unknown) => e);
                other.exec('ROLLBACK');
                other.close();
                expect(isHttpError(err, 500)).toBe(true);
                expect((err as Error).message).toBe(
                    `SqliteCacheStore at ${location} stayed locked by another connection for 200 ms: database is locked`
                );
                // Reads go on meanwhile (WAL): the lock only ever delays writers.
                expect(await store.get('https://example.test/a')).toStrictEqual([]);
                store.close();
            });
        });

        describe('several processes sharing one file', () => {
            it('processes opening one new file at the same instant all get a store (the loser of the set-up race tries again)', async () => {
                // Six processes, released together by a file, each make the store on a file none has made
                // yet; SQLite answers the one that loses the race to set the file up "locked" without
                // waiting. Rare (1 of 90 in a measurement before the retry), so three rounds.
                for (let round = 0; round < 3; round++) {
                    const location = freshFile();
                    const go = `${location}.go`;
                    const opener = `
                        import { existsSync } from 'node:fs';
                        import { SqliteCacheStore } from 'tracewire/client';
                        while (!existsSync(${JSON.stringify(go)})) await new Promise((resolve) => setTimeout(resolve, 1));
                        new SqliteCacheStore({ location: ${JSON.stringify(location)} }).close();`;
                    const children = Array.from({ length: 6 }, () =>
                        run(process.execPath, ['--input-type=module', '-e', opener], { cwd: repo })
                    );
                    await new Promise((resolve) => setTimeout(resolve, 300));
                    writeFileSync(go, '');
                    for (const { stderr } of await Promise.all(children)) {
                        expect(stderr).toBe('');
                    }
                }
            });

            it('two processes writing and reading one file at once: no error, every entry whole', async () => {
                const location = freshFile();
                const writer = (name: string) => `
                    import { existsSync, writeFileSync } from 'node:fs';
                    import { SqliteCacheStore } from 'tracewire/client';
                    const store = new SqliteCacheStore({ location: ${JSON.stringify(location)}, maxCount: 150 });
                    // Both start together, once both are ready.
                    writeFileSync(${JSON.stringify(location)} + '.' + ${JSON.stringify(name)}, '');
                    while (!['first', 'second'].every((n) => existsSync(${JSON.stringify(location)} + '.' + n))) {
                        await new Promise((resolve) => setTimeout(resolve, 5));
                    }

                    const body = (i) => Buffer.alloc(1000 + i, ${JSON.stringify(name)} + i);
                    let read = 0;
                    const started = Date.now();
                    for (let i = 0; i < 400; i++) {
                        const now = Date.now();
                        const entry = { method: 'GET', statusCode: 200, statusMessage: 'OK', rawHeaders: ['X-Writer', ${JSON.stringify(name)}],
                            vary: { accept: String(i % 3) }, body: body(i), requestTime: now, responseTime: now, deleteAt: now + 600000 };
                        await Promise.all([
                            store.set('shared/' + (i % 20), entry),
                            store.set(${JSON.stringify(name)} + '/' + i, entry)
                        ]);
                        for (const stored of await store.get('shared/' + ((i + 7) % 20))) {
                            const [, writer] = stored.rawHeaders;
                            const n = stored.body.length - 1000;
                            if (!stored.body.equals(Buffer.alloc(1000 + n, writer + n))) throw new Error('torn body');
                            read++;
                        }
                    }
                    store.close();
                    console.log(JSON.stringify({ read, started, ended: Date.now() }));`;
                const children = ['first', 'second'].map((name) =>
                    run(process.execPath, ['--input-type=module', '-e', writer(name)], { cwd: repo })
                );
                const results = await Promise.all(children);
                const runs = results.map(({ stdout, stderr }) => {
                    expect(stderr).toBe('');
                    return JSON.parse(stdout) as { read: number; started: number; ended: number };
                });
                for (const { read } of runs) {
                    expect(read).toBeGreaterThan(0);
                }

                // They did run at the same time.
                expect(runs[0]!.started).toBeLessThan(runs[1]!.ended);
                expect(runs[1]!.started).toBeLessThan(runs[0]!.ended);

                // The file is consistent: the integrity check passes, the totals match the rows, the bound held.
                const db = rawDatabase(location);
                expect(db.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
                const rows = db.prepare('SELECT COUNT(*) AS count, SUM(size) AS bytes FROM tracewire_cache_v1').get();
                expect(db.prepare('SELECT count, bytes FROM tracewire_cache_v1_totals').get()).toEqual(rows);
                expect(rows?.count).toBe(150);
                // One variant per key and vary value: the replacement is atomic across processes.
                expect(
                    db
                        .prepare(
                            'SELECT key, vary, COUNT(*) AS n FROM tracewire_cache_v1 GROUP BY key, vary HAVING n > 1'
                        )
                        .all()
                ).toStrictEqual([]);
                db.close();
            }, 60_000);
        });
    });
}
