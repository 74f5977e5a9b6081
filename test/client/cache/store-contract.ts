import { afterEach, describe, expect, it } from 'vitest';
import type { CachedResponse, CacheStore } from '../../../src/client/contract/cache-store.js';

/**
 * The contract every `CacheStore` keeps (src/client/cache/store.ts, README "Cache stores"), as one
 * suite run against each store: `describeCacheStore('MemoryCacheStore', (bounds) => new MemoryCacheStore(bounds))`.
 */

/** The bounds a store is made with; the suite passes only what a test needs, the rest left to the store's defaults. */
export interface StoreBounds {
    /** The most entries (variants) kept. */
    maxCount?: number;
    /** The most bytes kept in all. */
    maxSize?: number;
    /** The largest entry kept, in bytes. */
    maxEntrySize?: number;
}

export type MakeStore = (bounds: StoreBounds) => CacheStore | Promise<CacheStore>;

const MiB = 2 ** 20;

let entries = 0;

/** A stored response as the cache would hand it over; each call a distinct one (its status message says which). */
export function cachedResponse(overrides: Partial<CachedResponse> = {}): CachedResponse {
    const now = Date.now();
    const n = ++entries;
    return {
        method: 'GET',
        statusCode: 200,
        statusMessage: `OK ${n}`,
        rawHeaders: ['Content-Type', 'text/plain', 'Cache-Control', 'max-age=60', 'X-Entry', String(n)],
        vary: undefined,
        body: Buffer.from(`body ${n}`),
        requestTime: now - 5,
        responseTime: now,
        deleteAt: now + 60_000,
        ...overrides
    };
}

/** Expects `actual` to be `expected` field for field; bodies compared as bytes (deep equality on a large Buffer is slow). */
function expectEntries(actual: readonly CachedResponse[], expected: readonly CachedResponse[]): void {
    const withoutBody = ({ body, ...rest }: CachedResponse) => ({ ...rest, bodyLength: body.length });
    expect(actual.map(withoutBody)).toStrictEqual(expected.map(withoutBody));
    for (const [i, entry] of actual.entries()) {
        expect(Buffer.isBuffer(entry.body)).toBe(true);
        expect(entry.body.equals(expected[i]!.body)).toBe(true);
    }
}

/** What sets a store apart for the suite. */
export interface StoreTraits {
    /**
     * Who keeps the total bounds (`maxCount`, `maxSize`): the store itself (the default), or the server
     * it stores on (a Redis server's `maxmemory`): then the suite's eviction tests do not apply, and
     * the store's own tests show the server's bound instead (redis-store.test.ts).
     */
    totalBounds?: 'store' | 'server';
}

/**
 * Registers the contract suite for one store. `makeStore` gets the bounds of the test; `closeStore`,
 * when given, releases each store made once its test is over.
 */
export function describeCacheStore(
    name: string,
    makeStore: MakeStore,
    closeStore?: (store: CacheStore) => void | Promise<void>,
    traits: StoreTraits = {}
): void {
    // Not registered at all for a store whose server keeps the bounds: they are not this store's to keep.
    const itEvicts = traits.totalBounds === 'server' ? (_name: string, _test: () => Promise<void>) => {} : it;
    describe(`CacheStore contract: ${name}`, () => {
        const made: CacheStore[] = [];
        async function store(bounds: StoreBounds = {}): Promise<CacheStore> {
            const created = await makeStore(bounds);
            made.push(created);
            return created;
        }

        afterEach(async () => {
            for (const created of made.splice(0)) {
                await closeStore?.(created);
            }
        });

        describe('get, set, delete', () => {
            it('get of a key never stored resolves to an empty list', async () => {
                const s = await store();
                await expect(s.get('https://example.test/none')).resolves.toStrictEqual([]);
            });

            it('an entry stored comes back field for field, its body a Buffer', async () => {
                const s = await store();
                const entry = cachedResponse({
                    method: 'HEAD',
                    statusCode: 203,
                    statusMessage: 'Non-Authoritative Information',
                    // Repeated names, case as received, Latin-1 characters as Node hands them over.
                    rawHeaders: ['Set-Cookie', 'a=1', 'set-cookie', 'b=2', 'X-Name', 'caf\u00e9', 'X-Empty', ''],
                    requestTime: 1_700_000_000_000,
                    responseTime: 1_700_000_000_250
                });
                await s.set('https://example.test/a', entry);
                const [stored, ...others] = await s.get('https://example.test/a');
                expect(others).toStrictEqual([]);
                expect(stored).toStrictEqual(entry);
                expect(Buffer.isBuffer(stored?.body)).toBe(true);
            });

            it('what a caller does to the entry it stored, or to the list and entries a lookup gave it, changes nothing stored', async () => {
                const s = await store();
                const key = 'https://example.test/shared';
                const entry = cachedResponse({ vary: { accept: 'text/html' } });
                const expected = { ...entry, rawHeaders: [...entry.rawHeaders], vary: { accept: 'text/html' } };
                await s.set(key, entry);
                // The entry stays the caller's own to change.
                (entry as { statusCode: number }).statusCode = 500;
                (entry.rawHeaders as string[]).push('X-Later', '1');
                (entry.vary as Record<string, string>).accept = 'text/plain';
                // The types say readonly; JavaScript lets a caller try, which a frozen value refuses (strict mode: a throw).
                const attempt = (change: () => void) => {
                    try {
                        change();
                    } catch {}
                };
                const found = await s.get(key);
                attempt(() => {
                    (found[0] as { statusCode: number }).statusCode = 404;
                });
                attempt(() => (found[0]!.rawHeaders as string[]).push('X-Mine', '1'));
                attempt(() => {
                    (found[0]!.vary as Record<string, string>).accept = 'image/png';
                });
                attempt(() => (found as CachedResponse[]).pop());
                expectEntries(await s.get(key), [expected]);
            });

            it('keys are exact: case, query and trailing characters make distinct keys', async () => {
                const s = await store();
                const keys = [
                    'https://example.test/a',
                    'https://example.test/A',
                    'https://example.test/a?',
                    'https://example.test/a?x=1',
                    'https://example.test/a/',
                    'https://example.test/\u00e9t\u00e9'
                ];
                const stored = keys.map(() => cachedResponse());
                for (const [i, key] of keys.entries()) {
                    await s.set(key, stored[i]!);
                }

                for (const [i, key] of keys.entries()) {
                    expect(await s.get(key)).toStrictEqual([stored[i]]);
                }
            });

            it('delete drops every variant of its key and no other key', async () => {
                const s = await store();
                await s.set('https://example.test/a', cachedResponse({ vary: { accept: 'text/html' } }));
                await s.set('https://example.test/a', cachedResponse({ vary: { accept: 'application/json' } }));
                const other = cachedResponse();
                await s.set('https://example.test/b', other);
                await s.delete('https://example.test/a');
                expect(await s.get('https://example.test/a')).toStrictEqual([]);
                expect(await s.get('https://example.test/b')).toStrictEqual([other]);
            });

            it('delete of a key never stored resolves', async () => {
                const s = await store();
                await expect(s.delete('https://example.test/none')).resolves.toBeUndefined();
            });

            it('an entry can be stored again after its key was deleted', async () => {
                const s = await store();
                await s.set('https://example.test/a', cachedResponse());
                await s.delete('https://example.test/a');
                const again = cachedResponse();
                await s.set('https://example.test/a', again);
                expect(await s.get('https://example.test/a')).toStrictEqual([again]);
            });
        });

        describe('variants (vary)', () => {
            it('variants with different vary values are all kept, newest stored first', async () => {
                const s = await store();
                const html = cachedResponse({ vary: { accept: 'text/html' } });
                const json = cachedResponse({ vary: { accept: 'application/json' } });
                const none = cachedResponse({ vary: { accept: undefined } });
                for (const entry of [html, json, none]) {
                    await s.set('https://example.test/a', entry);
                }

                expect(await s.get('https://example.test/a')).toStrictEqual([none, json, html]);
            });

            it('an entry with the same vary values replaces the stored variant, whatever the order of the names', async () => {
                const s = await store();
                const first = cachedResponse({ vary: { accept: 'text/html', 'accept-language': 'en' } });
                const other = cachedResponse({ vary: { accept: 'text/html', 'accept-language': 'fr' } });
                const replacement = cachedResponse({ vary: { 'accept-language': 'en', accept: 'text/html' } });
                await s.set('https://example.test/a', first);
                await s.set('https://example.test/a', other);
                await s.set('https://example.test/a', replacement);
                expect(await s.get('https://example.test/a')).toStrictEqual([replacement, other]);
            });

            it('an entry without vary replaces the stored entry without vary', async () => {
                const s = await store();
                await s.set('https://example.test/a', cachedResponse());
                const fresher = cachedResponse({ statusCode: 404 });
                await s.set('https://example.test/a', fresher);
                expect(await s.get('https://example.test/a')).toStrictEqual([fresher]);
            });

            it('a header the request lacked (undefined) and one it sent empty are different variants', async () => {
                const s = await store();
                const absent = cachedResponse({ vary: { 'accept-language': undefined } });
                const empty = cachedResponse({ vary: { 'accept-language': '' } });
                await s.set('https://example.test/a', absent);
                await s.set('https://example.test/a', empty);
                const stored = await s.get('https://example.test/a');
                expect(stored).toStrictEqual([empty, absent]);
                expect(Object.keys(stored[1]?.vary ?? {})).toStrictEqual(['accept-language']);
            });

            it('concurrent stores of one variant leave exactly one, and of distinct variants all of them', async () => {
                const s = await store();
                const same = Array.from({ length: 10 }, () => cachedResponse({ vary: { accept: 'text/html' } }));
                await Promise.all(same.map((entry) => s.set('https://example.test/same', entry)));
                const stored = await s.get('https://example.test/same');
                expect(stored).toHaveLength(1);
                expect(same).toContainEqual(stored[0]);

                const distinct = Array.from({ length: 10 }, (_, i) =>
                    cachedResponse({ vary: { accept: `type/${i}` } })
                );
                await Promise.all(distinct.map((entry) => s.set('https://example.test/distinct', entry)));
                const all = await s.get('https://example.test/distinct');
                expect(all).toHaveLength(10);
                expect(new Set(all.map((entry) => entry.vary?.accept))).toStrictEqual(
                    new Set(distinct.map((entry) => entry.vary?.accept))
                );
            });
        });

        describe('bodies', () => {
            it('every byte value comes back as stored, and an empty body as an empty Buffer', async () => {
                const s = await store();
                const bytes = Buffer.from(Array.from({ length: 1024 }, (_, i) => (i * 7) % 256));
                const binary = cachedResponse({ body: bytes });
                await s.set('https://example.test/binary', binary);
                const empty = cachedResponse({ body: Buffer.alloc(0) });
                await s.set('https://example.test/empty', empty);

                const [stored] = await s.get('https://example.test/binary');
                expect(stored?.body.equals(bytes)).toBe(true);
                const [storedEmpty] = await s.get('https://example.test/empty');
                expect(Buffer.isBuffer(storedEmpty?.body)).toBe(true);
                expect(storedEmpty?.body.length).toBe(0);
            });

            it('a large body (20 MiB) within the bounds comes back whole', async () => {
                const s = await store({ maxEntrySize: 32 * MiB, maxSize: 64 * MiB });
                const body = Buffer.alloc(20 * MiB);
                for (let i = 0; i < body.length; i += 4096) {
                    body.writeUInt32BE(i, i);
                }

                await s.set('https://example.test/large', cachedResponse({ body }));
                const [stored] = await s.get('https://example.test/large');
                expect(stored?.body.length).toBe(body.length);
                expect(stored?.body.equals(body)).toBe(true);
            });
        });

        describe('deleteAt', () => {
            it('an entry past its deleteAt is never returned; a live variant of the same key still is', async () => {
                const s = await store();
                const live = cachedResponse({ vary: { accept: 'text/html' } });
                await s.set('https://example.test/a', live);
                await s.set(
                    'https://example.test/a',
                    cachedResponse({ vary: { accept: 'a/b' }, deleteAt: Date.now() - 1 })
                );
                await s.set('https://example.test/gone', cachedResponse({ deleteAt: Date.now() - 1 }));
                expect(await s.get('https://example.test/a')).toStrictEqual([live]);
                expect(await s.get('https://example.test/gone')).toStrictEqual([]);
            });

            it('an entry is returned until its deleteAt, and not after', async () => {
                const s = await store();
                const deleteAt = Date.now() + 1_000;
                const entry = cachedResponse({ deleteAt });
                await s.set('https://example.test/a', entry);
                expect(await s.get('https://example.test/a')).toStrictEqual([entry]);
                await new Promise((resolve) => setTimeout(resolve, deleteAt - Date.now() + 10));
                expect(await s.get('https://example.test/a')).toStrictEqual([]);
            });
        });

        describe('bounds', () => {
            it('an entry larger than maxEntrySize is declined: set resolves false, nothing is stored; one stored resolves true', async () => {
                const s = await store({ maxEntrySize: 64 * 1024 });
                await expect(
                    s.set('https://example.test/big', cachedResponse({ body: Buffer.alloc(128 * 1024) }))
                ).resolves.toBe(false);
                expect(await s.get('https://example.test/big')).toStrictEqual([]);
                const small = cachedResponse({ body: Buffer.alloc(16 * 1024) });
                await expect(s.set('https://example.test/small', small)).resolves.toBe(true);
                expectEntries(await s.get('https://example.test/small'), [small]);
            });

            itEvicts('past maxCount the oldest stored entries are evicted, the newest kept', async () => {
                const s = await store({ maxCount: 3 });
                const keys = Array.from({ length: 8 }, (_, i) => `https://example.test/${i}`);
                for (const key of keys) {
                    await s.set(key, cachedResponse());
                }

                const kept = [];
                for (const key of keys) {
                    kept.push((await s.get(key)).length);
                }

                expect(kept.reduce((a, b) => a + b)).toBeLessThanOrEqual(3);
                expect(kept[0]).toBe(0);
                expect(kept.at(-1)).toBe(1);
            });

            itEvicts('past maxSize the oldest stored entries are evicted, the newest kept', async () => {
                const s = await store({ maxSize: 35_000, maxEntrySize: 20_000 });
                const keys = Array.from({ length: 10 }, (_, i) => `https://example.test/${i}`);
                for (const key of keys) {
                    await s.set(key, cachedResponse({ body: Buffer.alloc(10_000, 1) }));
                }

                const kept = [];
                for (const key of keys) {
                    kept.push((await s.get(key)).length);
                }

                expect(kept.reduce((a, b) => a + b)).toBeLessThanOrEqual(3);
                expect(kept[0]).toBe(0);
                expect(kept.at(-1)).toBe(1);
            });

            itEvicts('one large entry evicts as many older small ones as it needs, and is kept', async () => {
                const s = await store({ maxSize: 200_000, maxEntrySize: 150_000 });
                const keys = Array.from({ length: 150 }, (_, i) => `https://example.test/small/${i}`);
                for (const key of keys) {
                    await s.set(key, cachedResponse({ body: Buffer.alloc(1000, 2) }));
                }

                const large = cachedResponse({ body: Buffer.alloc(120_000, 3) });
                await s.set('https://example.test/large', large);
                expectEntries(await s.get('https://example.test/large'), [large]);
                let kept = 0;
                for (const key of keys) {
                    kept += (await s.get(key)).length;
                }

                expect(kept).toBeLessThanOrEqual(80);
                expect(await s.get(keys[0]!)).toStrictEqual([]);
                expect(await s.get(keys.at(-1)!)).toHaveLength(1);
            });

            itEvicts('stays within maxCount over many distinct keys', async () => {
                const s = await store({ maxCount: 50 });
                const keys = Array.from({ length: 500 }, (_, i) => `https://example.test/many/${i}`);
                for (const key of keys) {
                    await s.set(key, cachedResponse());
                }

                let kept = 0;
                for (const key of keys) {
                    kept += (await s.get(key)).length;
                }

                expect(kept).toBeGreaterThan(0);
                expect(kept).toBeLessThanOrEqual(50);
                expect(await s.get(keys.at(-1)!)).toHaveLength(1);
            });
        });
    });
}
