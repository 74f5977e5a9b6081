import type { CachedResponse, CacheStore } from '../../contract/cache-store.js';
import { isCount } from '../../options/values.js';

/** Bounds of a `MemoryCacheStore`; an absent one keeps its default. */
export interface MemoryCacheStoreOptions {
    /** Total bytes held (bodies and headers). Default 100 MiB. */
    maxSize?: number | null | undefined;
    /** Stored responses held (each variant counts). Default 1024. */
    maxCount?: number | null | undefined;
    /** The largest response stored; a larger one is declined. Default 5 MiB. */
    maxEntrySize?: number | null | undefined;
}

interface Stored {
    readonly entry: CachedResponse;
    readonly bytes: number;
}

/**
 * A `CacheStore` in this process's memory (README "Cache"): bounded by total bytes, entries and
 * entry size; the least recently used URL goes first when a bound is reached.
 */
export class MemoryCacheStore implements CacheStore {
    readonly #maxSize: number;
    readonly #maxCount: number;
    readonly maxEntrySize: number;
    // A Map keeps insertion order: a URL is moved to the end when used, so the first is the least recent.
    readonly #byKey = new Map<string, Stored[]>();
    #bytes = 0;
    #entries = 0;

    constructor(options: MemoryCacheStoreOptions = {}) {
        if (typeof options !== 'object' || options === null) {
            throw new TypeError('MemoryCacheStore options must be an object');
        }

        this.#maxSize = bound(options.maxSize, 'maxSize', 100 * 1024 * 1024);
        this.#maxCount = bound(options.maxCount, 'maxCount', 1024);
        this.maxEntrySize = bound(options.maxEntrySize, 'maxEntrySize', 5 * 1024 * 1024);
    }

    /** Bytes held now. */
    get size(): number {
        return this.#bytes;
    }

    /** Stored responses held now. */
    get count(): number {
        return this.#entries;
    }

    async get(key: string): Promise<readonly CachedResponse[]> {
        const stored = this.#byKey.get(key);
        if (stored === undefined) {
            return [];
        }

        const now = Date.now();
        const alive = stored.filter((item) => item.entry.deleteAt > now);
        this.#replace(key, stored, alive);
        return alive.map((item) => item.entry);
    }

    /** Resolves false when it declined the entry (larger than `maxEntrySize`). */
    async set(key: string, entry: CachedResponse): Promise<boolean> {
        const bytes = sizeOf(key, entry);
        const stored = this.#byKey.get(key) ?? [];
        const others = stored.filter((item) => !sameVariant(item.entry, entry));
        if (bytes > this.maxEntrySize || bytes > this.#maxSize) {
            // Declined; the variant it would have replaced is outdated all the same.
            this.#replace(key, stored, others);
            return false;
        }

        this.#replace(key, stored, [{ entry, bytes }, ...others]);
        this.#evict();
        return true;
    }

    async delete(key: string): Promise<void> {
        const stored = this.#byKey.get(key);
        if (stored !== undefined) {
            this.#replace(key, stored, []);
        }
    }

    /** Puts `next` in place of `previous` for `key` (as the most recently used), keeping the totals. */
    #replace(key: string, previous: readonly Stored[], next: Stored[]): void {
        for (const item of previous) {
            this.#bytes -= item.bytes;
        }

        this.#entries -= previous.length;
        this.#byKey.delete(key);
        if (next.length === 0) {
            return;
        }

        for (const item of next) {
            this.#bytes += item.bytes;
        }

        this.#entries += next.length;
        this.#byKey.set(key, next);
    }

    /** Drops the least recently used URLs until both bounds hold. */
    #evict(): void {
        for (const [key, stored] of this.#byKey) {
            if (this.#bytes <= this.#maxSize && this.#entries <= this.#maxCount) {
                return;
            }

            this.#replace(key, stored, []);
        }
    }
}

function sameVariant(a: CachedResponse, b: CachedResponse): boolean {
    if (a.vary === undefined || b.vary === undefined) {
        return a.vary === b.vary;
    }

    const names = Object.keys(a.vary);
    return names.length === Object.keys(b.vary).length && names.every((name) => a.vary![name] === b.vary![name]);
}

// What an entry costs: its body, its header text and key, and a fixed share for the record itself.
function sizeOf(key: string, entry: CachedResponse): number {
    let bytes = entry.body.length + key.length * 2 + 256;
    for (const field of entry.rawHeaders) {
        bytes += field.length * 2;
    }

    return bytes;
}

function bound(value: unknown, name: string, fallback: number): number {
    if (value === undefined || value === null) {
        return fallback;
    }

    if (!isCount(value) || value === 0) {
        throw new TypeError(`MemoryCacheStore option ${name} must be a positive integer`);
    }

    return value as number;
}
