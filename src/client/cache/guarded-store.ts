import type { CachedResponse, CacheStore } from '../contract/cache-store.js';

// How long a request waits for its store: past this the network answers (README "Cache").
const storeTimeout = 250;

// The body size the cache copies when the store does not say how much it keeps.
const defaultEntryLimit = 16 * 1024 * 1024;

/**
 * A store as the cache layer uses it: a call that throws, rejects or takes longer than a request
 * should wait counts as "nothing stored" (or "not stored"), so a store never fails or stalls a
 * request the network can answer.
 */
export class GuardedStore {
    /** The largest body worth copying for this store. */
    readonly entryLimit: number;

    constructor(private readonly store: CacheStore) {
        const limit = store.maxEntrySize;
        this.entryLimit = typeof limit === 'number' && limit >= 0 ? limit : defaultEntryLimit;
    }

    /** The stored variants for `key`, or none when the store failed or was too slow. */
    get(key: string): Promise<readonly CachedResponse[]> {
        return withinTime(() => this.store.get(key), []).then((found) => (Array.isArray(found) ? found : []));
    }

    set(key: string, entry: CachedResponse): Promise<void> {
        return withinTime(() => this.store.set(key, entry), undefined);
    }

    delete(key: string): Promise<void> {
        return withinTime(() => this.store.delete(key), undefined);
    }
}

function withinTime<T>(call: () => Promise<T>, fallback: T): Promise<T> {
    let pending: Promise<T>;
    try {
        pending = Promise.resolve(call());
    } catch {
        return Promise.resolve(fallback);
    }

    return Promise.race([pending.catch(() => fallback), deadline().then(() => fallback)]);
}

// One timer for all the store calls that start within half a timeout of each other, rather than one
// per call (a timer per hit was a tenth of a hit's cost): each call gets between half and a whole timeout.
let window: { opened: number; elapsed: Promise<void> } | undefined;

function deadline(): Promise<void> {
    const now = Date.now();
    if (window === undefined || now - window.opened > storeTimeout / 2) {
        const elapsed = new Promise<void>((resolve) => {
            // A slow store must not keep the process alive once nothing else does.
            setTimeout(resolve, storeTimeout).unref();
        });
        window = { opened: now, elapsed };
    }

    return window.elapsed;
}
