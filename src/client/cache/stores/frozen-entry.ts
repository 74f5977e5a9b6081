import type { CachedResponse } from '../../contract/cache-store.js';

/**
 * `entry` as a store holds it: frozen (its object, its field list and its `vary`), so that what a
 * lookup hands out, shared with every later lookup, cannot be changed by one caller for the next. An
 * entry frozen so already is kept as it is; any other is copied first, leaving the caller's own
 * object as it was — all but a field list or `vary` frozen already, which no one can change: an entry
 * a 304 updated without changing its fields keeps the stored list, and what the cache worked out from
 * that list (kept per list) still holds. The body's bytes cannot be frozen: they are shared, to be read
 * only (docs/cache.md).
 */
export function frozenEntry(entry: CachedResponse): CachedResponse {
    const { rawHeaders, vary } = entry;
    const fieldsFrozen = Object.isFrozen(rawHeaders);
    const varyFrozen = vary === undefined || Object.isFrozen(vary);
    if (fieldsFrozen && varyFrozen && Object.isFrozen(entry)) {
        return entry;
    }

    const copy: CachedResponse = { ...entry, rawHeaders: fieldsFrozen ? rawHeaders : [...rawHeaders] };
    if (!varyFrozen) {
        copy.vary = { ...vary };
    }

    return freezeOwnEntry(copy);
}

/**
 * Freezes in place an entry its caller made and no one else holds yet (a store's decoding of a value, an
 * entry the cache layer wrote to a `MemoryCacheStore`, frozen before a lookup hands it out).
 */
export function freezeOwnEntry(entry: CachedResponse): CachedResponse {
    if (Object.isFrozen(entry)) {
        // Frozen whole already (its list and `vary` with it).
        return entry;
    }

    Object.freeze(entry.rawHeaders);
    if (entry.vary !== undefined) {
        Object.freeze(entry.vary);
    }

    return Object.freeze(entry);
}
