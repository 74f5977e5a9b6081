import { describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../../src/client/cache/stores/memory-store.js';
import { cachedResponse, describeCacheStore } from './store-contract.js';

describeCacheStore('MemoryCacheStore', (bounds) => new MemoryCacheStore(bounds));

describe('MemoryCacheStore', () => {
    it('refuses bounds that are not positive integers, naming the option', () => {
        expect(() => new MemoryCacheStore({ maxSize: -1 })).toThrow(
            'MemoryCacheStore option maxSize must be a positive integer'
        );
        expect(() => new MemoryCacheStore({ maxCount: 1.5 })).toThrow('option maxCount');
        expect(() => new MemoryCacheStore({ maxEntrySize: 0 })).toThrow('option maxEntrySize');
        expect(() => new MemoryCacheStore(null as never)).toThrow('MemoryCacheStore options must be an object');
    });

    it('holds its byte bound under load: many distinct URLs with large bodies, the least recently used evicted', async () => {
        const store = new MemoryCacheStore({ maxSize: 4 * 1024 * 1024, maxEntrySize: 1024 * 1024 });
        const body = Buffer.alloc(512 * 1024, 1);
        await store.set('https://example.test/kept', cachedResponse({ body }));
        for (let i = 0; i < 200; i++) {
            await store.set(`https://example.test/${i}`, cachedResponse({ body }));
            // Used again and again: the most recent, so never the one evicted.
            await store.get('https://example.test/kept');
            expect(store.size).toBeLessThanOrEqual(4 * 1024 * 1024);
        }

        expect(store.count).toBeLessThanOrEqual(8);
        expect(await store.get('https://example.test/kept')).toHaveLength(1);
        expect(await store.get('https://example.test/0')).toStrictEqual([]);
        expect(await store.get('https://example.test/199')).toHaveLength(1);
    });

    it("keeps an entry's frozen field list as it is, and copies one its caller could still change", async () => {
        const store = new MemoryCacheStore();
        const url = 'https://example.test/updated';
        await store.set(url, cachedResponse({ rawHeaders: ['ETag', '"a"'] }));
        const [stored] = await store.get(url);
        // What a 304 that repeats the stored fields makes: a new entry (new times) on the stored, frozen list.
        await store.set(url, { ...stored!, responseTime: stored!.responseTime + 1000 });
        const [updated] = await store.get(url);
        expect(updated).not.toBe(stored);
        expect(updated!.responseTime).toBe(stored!.responseTime + 1000);
        expect(updated!.rawHeaders).toBe(stored!.rawHeaders);

        const own = ['ETag', '"b"'];
        await store.set(url, { ...updated!, rawHeaders: own });
        const [copied] = await store.get(url);
        expect(copied!.rawHeaders).not.toBe(own);
        expect(copied!.rawHeaders).toStrictEqual(own);
        expect(Object.isFrozen(copied!.rawHeaders)).toBe(true);
        expect(Object.isFrozen(own)).toBe(false);
    });

    it('a key written again stays the most recently used, whether it was the last one used or not', async () => {
        const url = (name: string) => `https://example.test/${name}`;
        const store = new MemoryCacheStore({ maxCount: 2 });
        await store.set(url('a'), cachedResponse());
        await store.set(url('b'), cachedResponse());
        // b, the last one used, written again (a 304's update of the key just looked up): a goes first.
        await store.set(url('b'), cachedResponse({ statusCode: 203 }));
        await store.set(url('c'), cachedResponse());
        expect(await store.get(url('a'))).toStrictEqual([]);
        expect((await store.get(url('b')))[0]!.statusCode).toBe(203);
        // c written again after b was used: b goes first.
        await store.set(url('c'), cachedResponse({ statusCode: 203 }));
        await store.set(url('d'), cachedResponse());
        expect(await store.get(url('b'))).toStrictEqual([]);
        expect((await store.get(url('c')))[0]!.statusCode).toBe(203);
        expect(store.count).toBe(2);
    });

    it("counts an entry's bytes anew for a write with other fields or another body, as before for the same ones", async () => {
        const store = new MemoryCacheStore();
        const url = 'https://example.test/sized';
        await store.set(url, cachedResponse({ rawHeaders: ['ETag', '"a"'], body: Buffer.from('body') }));
        const [stored] = await store.get(url);
        const size = store.size;
        // A 304 that changes no field: the same list and body, new times.
        await store.set(url, { ...stored!, responseTime: stored!.responseTime + 1000 });
        expect(store.size).toBe(size);
        await store.set(url, { ...stored!, rawHeaders: ['ETag', '"a"', 'X-More', 'more'] });
        expect(store.size).toBe(size + 2 * ('X-More'.length + 'more'.length));
        const [longer] = await store.get(url);
        await store.set(url, { ...longer!, body: Buffer.from('a longer body') });
        expect(store.size).toBe(size + 2 * ('X-More'.length + 'more'.length) + 'a longer body'.length - 4);
    });

    it('drops entries past their deleteAt when asked for them', async () => {
        const store = new MemoryCacheStore();
        await store.set('https://example.test/old', cachedResponse({ deleteAt: Date.now() - 1 }));
        expect(await store.get('https://example.test/old')).toStrictEqual([]);
        expect(store.count).toBe(0);
        expect(store.size).toBe(0);
    });

    it('answers repeated lookups with the one list it holds until a variant expires, and drops only that one then', async () => {
        const store = new MemoryCacheStore();
        const key = 'https://example.test/variants';
        const soon = Date.now() + 300;
        await store.set(key, cachedResponse({ vary: { 'accept-language': 'de' }, deleteAt: Date.now() + 60_000 }));
        await store.set(key, cachedResponse({ vary: { 'accept-language': 'fr' }, deleteAt: soon }));
        const first = await store.get(key);
        expect(first).toHaveLength(2);
        // A hit copies nothing: the same list, with the same entries.
        expect(await store.get(key)).toBe(first);
        await new Promise((resolve) => setTimeout(resolve, soon - Date.now() + 20));
        const after = await store.get(key);
        expect(after.map((entry) => entry.vary)).toStrictEqual([{ 'accept-language': 'de' }]);
        expect(store.count).toBe(1);
    });

    it('keeps the least recently used order with repeated lookups of one key', async () => {
        const store = new MemoryCacheStore({ maxCount: 2 });
        await store.set('https://example.test/a', cachedResponse());
        await store.set('https://example.test/b', cachedResponse());
        await store.get('https://example.test/a');
        await store.get('https://example.test/a');
        await store.set('https://example.test/c', cachedResponse());
        // b was the least recently used: a's lookups moved it after b, once.
        expect(await store.get('https://example.test/b')).toStrictEqual([]);
        expect(await store.get('https://example.test/a')).toHaveLength(1);
        expect(await store.get('https://example.test/c')).toHaveLength(1);
    });
});
