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

    it('drops entries past their deleteAt when asked for them', async () => {
        const store = new MemoryCacheStore();
        await store.set('https://example.test/old', cachedResponse({ deleteAt: Date.now() - 1 }));
        expect(await store.get('https://example.test/old')).toStrictEqual([]);
        expect(store.count).toBe(0);
        expect(store.size).toBe(0);
    });
});
