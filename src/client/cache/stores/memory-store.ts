import type { CachedResponse, CacheStore } from '../../contract/cache-store.js';
import { isCount } from '../../options/values.js';
import { freezeOwnEntry, frozenEntry } from './frozen-entry.js';

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
 * What is held for one key: its variants, and the list of their entries a lookup hands out. Every
 * lookup until the next change gets that one list. The cache layer only reads it; before `get` hands
 * it to anyone else, it and its entries are frozen, so no caller can change what the next one finds.
 * Frozen then and not at each write: a key revalidated many times a second is written as often, and
 * the freezes (calls into the runtime that change each object's shape) were the largest part of a
 * write that nobody but the cache layer would read.
 */
interface Variants {
    readonly items: readonly Stored[];
    readonly entries: readonly CachedResponse[];
    /** The earliest `deleteAt` of the variants: until then a lookup has nothing to drop. */
    readonly firstDeleteAt: number;
    /** `entries` as a lookup's answer, made by the first lookup: the next ones hand out the same settled promise. */
    found: Promise<readonly CachedResponse[]> | undefined;
    /** `entries` and each entry are frozen (a caller of `get` has had them). */
    frozen: boolean;
}

const nothingFound: Promise<readonly CachedResponse[]> = Promise.resolve(Object.freeze([]));

/**
 * `set` of a `MemoryCacheStore`, done in the same turn: true when stored, false when declined. For the
 * cache layer (guarded-store.ts), whose writes to its own store need not wait for a promise's turn;
 * the entry is the layer's own, kept as it is, and only read from then on.
 */
export let writeNow: (store: MemoryCacheStore, key: string, entry: CachedResponse) => boolean;

/** `get` of a `MemoryCacheStore` for the cache layer, which only reads what it finds: nothing is frozen for it. */
export let lookUp: (store: MemoryCacheStore, key: string) => Promise<readonly CachedResponse[]>;

/**
 * A `CacheStore` in this process's memory (README "Cache"): bounded by total bytes, entries and
 * entry size; the least recently used URL goes first when a bound is reached.
 */
export class MemoryCacheStore implements CacheStore {
    readonly #maxSize: number;
    readonly #maxCount: number;
    readonly maxEntrySize: number;
    // A Map keeps insertion order: a URL is moved to the end when used, so the first is the least recent.
    readonly #byKey = new Map<string, Variants>();
    // The key at the end already, which a run of lookups of one URL need not move again.
    #youngest: string | undefined;
    #bytes = 0;
    #entries = 0;

    constructor(options: MemoryCacheStoreOptions = {}) {
        if (typeof options !== 'object' || options === null) {
            throw new TypeError('MemoryCacheStore options must be an object');
        }

        madeStores.add(this);
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

    get(key: string): Promise<readonly CachedResponse[]> {
        const held = this.#live(key);
        if (held === undefined) {
            return nothingFound;
        }

        if (!held.frozen) {
            freezeHeld(held);
        }

        return foundIn(held);
    }

    /** What is held for `key` once what is past its `deleteAt` is dropped, as the most recently used. */
    #live(key: string): Variants | undefined {
        const held = this.#byKey.get(key);
        if (held === undefined) {
            return undefined;
        }

        const now = Date.now();
        if (held.firstDeleteAt > now) {
            // Nothing to drop (the usual hit): the same list as the last lookup, the key moved to the end.
            if (key !== this.#youngest) {
                this.#byKey.delete(key);
                this.#byKey.set(key, held);
                this.#youngest = key;
            }

            return held;
        }

        const alive = held.items.filter((item) => item.entry.deleteAt > now);
        return this.#replace(key, held, alive);
    }

    /** Resolves false when it declined the entry (larger than `maxEntrySize`). */
    async set(key: string, entry: CachedResponse): Promise<boolean> {
        return this.#write(key, entry);
    }

    static {
        writeNow = (store, key, entry) => store.#write(key, entry, true);
        lookUp = (store, key) => {
            const held = store.#live(key);
            return held === undefined ? nothingFound : foundIn(held);
        };
    }

    /** `set`, done now: false when it declined the entry. `own`: the entry is the writer's own, kept as it is. */
    #write(key: string, entry: CachedResponse, own = false): boolean {
        const held = this.#byKey.get(key);
        const only = held !== undefined && held.items.length === 1 ? held.items[0]! : undefined;
        // What a 304 that changes no field writes: the size of the one held, on the same fields and body.
        const bytes =
            only !== undefined && only.entry.rawHeaders === entry.rawHeaders && only.entry.body === entry.body
                ? only.bytes
                : sizeOf(key, entry);
        // The usual write of a key held once (a 304's update): its one variant replaced, no list filtered.
        const others =
            held === undefined || (only !== undefined && sameVariant(only.entry, entry))
                ? []
                : held.items.filter((item) => !sameVariant(item.entry, entry));
        if (bytes > this.maxEntrySize || bytes > this.#maxSize) {
            // Declined; the variant it would have replaced is outdated all the same.
            this.#replace(key, held, others);
            return false;
        }

        // The new variant first, the others after it (filter made a list of its own: no copy of it; and
        // none to move for the usual one, where an unshift onto the empty list was a call into the runtime).
        const stored: Stored = { entry: own ? entry : frozenEntry(entry), bytes };
        if (others.length === 0) {
            this.#replace(key, held, [stored]);
        } else {
            others.unshift(stored);
            this.#replace(key, held, others);
        }

        this.#evict();
        return true;
    }

    async delete(key: string): Promise<void> {
        const held = this.#byKey.get(key);
        if (held !== undefined) {
            this.#replace(key, held, []);
        }
    }

    /** Puts `next` in place of `previous` for `key` (as the most recently used), keeping the totals. */
    #replace(key: string, previous: Variants | undefined, next: Stored[]): Variants | undefined {
        if (previous !== undefined) {
            const items = previous.items;
            for (let i = 0; i < items.length; i++) {
                this.#bytes -= items[i]!.bytes;
            }

            this.#entries -= previous.items.length;
            if (key !== this.#youngest || next.length === 0) {
                // Moved to the end by the set below; the key there already (a run of writes and lookups
                // of one URL) is replaced where it stands.
                this.#byKey.delete(key);
            }
        }

        if (next.length === 0) {
            if (this.#youngest === key) {
                this.#youngest = undefined;
            }

            return undefined;
        }

        let firstDeleteAt = Number.POSITIVE_INFINITY;
        for (let i = 0; i < next.length; i++) {
            const item = next[i]!;
            this.#bytes += item.bytes;
            firstDeleteAt = Math.min(firstDeleteAt, item.entry.deleteAt);
        }

        this.#entries += next.length;
        const entries = next.length === 1 ? [next[0]!.entry] : next.map((item) => item.entry);
        const variants: Variants = { items: next, entries, firstDeleteAt, found: undefined, frozen: false };
        this.#byKey.set(key, variants);
        this.#youngest = key;
        return variants;
    }

    /** Drops the least recently used URLs until both bounds hold. */
    #evict(): void {
        if (this.#bytes <= this.#maxSize && this.#entries <= this.#maxCount) {
            // Within both (the usual write): no walk of the keys begun for nothing.
            return;
        }

        for (const [key, held] of this.#byKey) {
            if (this.#bytes <= this.#maxSize && this.#entries <= this.#maxCount) {
                return;
            }

            this.#replace(key, held, []);
        }
    }
}

/** The settled promise of what `held` holds: the list is the same until the next change, and so is its promise. */
function foundIn(held: Variants): Promise<readonly CachedResponse[]> {
    held.found ??= Promise.resolve(held.entries);
    return held.found;
}

/** Freezes what `held` hands out: its list, and each entry the cache layer wrote as it was (stores/frozen-entry.ts). */
function freezeHeld(held: Variants): void {
    for (const entry of held.entries) {
        freezeOwnEntry(entry);
    }

    Object.freeze(held.entries);
    held.frozen = true;
}

function sameVariant(a: CachedResponse, b: CachedResponse): boolean {
    if (a.vary === undefined || b.vary === undefined) {
        return a.vary === b.vary;
    }

    const names = Object.keys(a.vary);
    return names.length === Object.keys(b.vary).length && names.every((name) => a.vary![name] === b.vary![name]);
}

// What an entry costs: its body, its header text and key, and a fixed share for the record itself.
// The stores this class made, as opposed to objects standing for one (a Proxy of a store, an object
// made with a store as its prototype), on which the class's own methods would throw.
const madeStores = new WeakSet<object>();

/** True when `store` is a `MemoryCacheStore` itself (guarded-store.ts: its own calls settle at once). */
export function isMemoryCacheStore(store: object): boolean {
    return madeStores.has(store);
}

function sizeOf(key: string, entry: CachedResponse): number {
    let bytes = entry.body.length + key.length * 2 + 256;
    // Indexed: a for-of over a frozen list (a stored entry's) made an iterator result per field.
    const fields = entry.rawHeaders;
    for (let i = 0; i < fields.length; i++) {
        bytes += fields[i]!.length * 2;
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
