import { isHttpError } from '../../errors/index.js';
import type { CachedResponse, CacheStore } from '../contract/cache-store.js';
import { clientFailure } from '../contract/errors.js';
import { type CacheStoreErrorMessage, publishCacheStoreError } from '../pipeline/channels.js';
import { isMemoryCacheStore, lookUp, MemoryCacheStore, writeNow } from './stores/memory-store.js';

// How long a request waits for its store by default: past this the network answers (README "Cache";
// the `storeTimeout` of the cache option changes it).
export const storeTimeout = 250;

// The body size the cache copies when the store does not say how much it keeps.
const defaultEntryLimit = 16 * 1024 * 1024;

/**
 * How a write ended, as Cache-Status tells it (docs/cache.md "Cache-Status"): `stored`, or why not —
 * the store declined the entry (`set` resolved false: too large for it), did not answer within the
 * bound (`timeout`), or threw or rejected (`error`: a Redis server out of reach, say).
 */
export type StoreWrite = 'stored' | 'declined' | 'timeout' | 'error';

/**
 * A store as the cache layer uses it: a call that throws, rejects or takes longer than a request
 * should wait counts as "nothing stored" (or "not stored"), so a store never fails or stalls a
 * request the network can answer. Each such failure is published on `tracewire:client:cacheStoreError`
 * (docs/cache.md "Store failures").
 */
export class GuardedStore {
    /** The largest body worth copying for this store. */
    readonly entryLimit: number;
    // The store is a MemoryCacheStore itself (not a Proxy of one, say): its own calls may go unbounded.
    readonly #inProcess: boolean;

    constructor(
        readonly store: CacheStore,
        /** The bound on each call, in ms. */
        readonly timeout: number = storeTimeout
    ) {
        this.#inProcess = isMemoryCacheStore(store);
        const limit = store.maxEntrySize;
        this.entryLimit = typeof limit === 'number' && limit >= 0 ? limit : defaultEntryLimit;
    }

    /** The stored variants for `key`, or none when the store failed or was too slow. */
    get(key: string): Promise<readonly CachedResponse[]> {
        if (this.#inProcess && this.store.get === inProcessGet) {
            return lookUp(this.store as MemoryCacheStore, key);
        }

        return this.within('get', () => this.store.get(key), []).then((found) => (Array.isArray(found) ? found : []));
    }

    /** Writes `entry` for `key` within the bound: how it ended, once it has (never a rejection). */
    set(key: string, entry: CachedResponse): Promise<StoreWrite> {
        const write = () => this.store.set(key, entry).then(writeOutcome);
        if (this.#inProcess && this.store.set === inProcessSet) {
            return write();
        }

        return this.bounded<StoreWrite>('set', write, 'error', 'timeout', this.timeout);
    }

    /**
     * Writes `entry` for `key` now when the store is the client's own `MemoryCacheStore`, whose writes
     * settle at once and never fail: how it ended; undefined for any other store, which `set` writes.
     * `entry` is the cache's own, only read from then on: the store keeps it as it is rather than a
     * copy, and freezes it (its field list and `vary` too) before its `get` hands it to anyone else.
     */
    setNow(key: string, entry: CachedResponse): StoreWrite | undefined {
        const store = this.store;
        if (!this.#inProcess || store.set !== inProcessSet) {
            return undefined;
        }

        return writeNow(store as MemoryCacheStore, key, entry) ? 'stored' : 'declined';
    }

    delete(key: string): Promise<void> {
        return this.within('delete', () => this.store.delete(key), undefined);
    }

    /** `call` of the store within the bound (`timeout` ms), else `fallback`; a failure is published. */
    within<T>(operation: string, call: () => Promise<T>, fallback: T, timeout = this.timeout): Promise<T> {
        return this.bounded(operation, call, fallback, fallback, timeout);
    }

    /** `call` within `timeout` ms, else `failed` when it threw or rejected, `overdue` when the bound passed first. */
    private bounded<T>(operation: string, call: () => Promise<T>, failed: T, overdue: T, timeout: number): Promise<T> {
        let pending: Promise<T>;
        try {
            pending = Promise.resolve(call());
        } catch (err) {
            this.failed(operation, 'error', err);
            return Promise.resolve(failed);
        }

        // Whichever comes first is the call's outcome: its answer, its failure, or the bound.
        let outcome: 'pending' | 'settled' | 'overdue' = 'pending';
        let timer: NodeJS.Timeout | undefined;
        const answered = pending.then(
            (value) => {
                outcome = 'settled';
                clearTimeout(timer);
                return value;
            },
            (err: unknown) => {
                clearTimeout(timer);
                if (outcome === 'pending') {
                    outcome = 'settled';
                    this.failed(operation, 'error', err);
                }

                return failed;
            }
        );
        let elapsed: Promise<void>;
        if (timeout === this.timeout) {
            elapsed = sharedDeadline(timeout);
        } else {
            // A longer wait (for a fill) is rare enough for a timer of its own, cleared once answered.
            elapsed = new Promise<void>((resolve) => {
                timer = setTimeout(afterPoll, timeout, resolve);
                timer.unref();
            });
        }

        const late = elapsed.then(() => {
            if (outcome === 'pending') {
                outcome = 'overdue';
                this.failed(operation, 'timeout', undefined, timeout);
            }

            return overdue;
        });
        return Promise.race([answered, late]);
    }

    private failed(operation: string, reason: CacheStoreErrorMessage['reason'], err: unknown, timeout = 0): void {
        const error =
            reason === 'timeout'
                ? clientFailure(
                      `The cache store's ${operation} did not answer within the cache's bound (${timeout} ms)`
                  )
                : isHttpError(err)
                  ? err
                  : clientFailure(`The cache store's ${operation} failed: ${(err as Error)?.message}`, err);
        publishCacheStoreError({ operation, reason, error, store: this.store });
    }
}

/**
 * The calls of the client's own `MemoryCacheStore` (checked per call: a method replaced on an instance
 * is the store's no longer; and only on a store the class made, for on an object standing for one, a
 * Proxy, its methods throw): they settle in the same turn and never fail, so they need no bound, whose
 * timer window and race were a seventh of a hit's instructions.
 */
const inProcessGet = MemoryCacheStore.prototype.get;
const inProcessSet = MemoryCacheStore.prototype.set;

// A store's `set` resolves false when it declined the entry (contract/cache-store.ts).
function writeOutcome(result: unknown): StoreWrite {
    return result === false ? 'declined' : 'stored';
}

// One timer for all the store calls with one bound that start within half of it of each other, rather
// than one per call (a timer per hit was a tenth of a hit's cost): each call gets between half and a
// whole bound. A window per bound: the default's, and those a cache option set.
const windows = new Map<number, { opened: number; elapsed: Promise<void> }>();

function sharedDeadline(timeout: number): Promise<void> {
    const now = Date.now();
    let window = windows.get(timeout);
    if (window === undefined || now - window.opened > timeout / 2) {
        const elapsed = new Promise<void>((resolve) => {
            // A slow store must not keep the process alive once nothing else does.
            setTimeout(afterPoll, timeout, resolve).unref();
        });
        window = { opened: now, elapsed };
        windows.set(timeout, window);
    }

    return window.elapsed;
}

/**
 * Ends a bound after the sockets were read once more: after a loop turn blocked past the bound, timers
 * run before the answers waiting in the sockets are read, and a store that answered in time would be
 * taken for one that did not (RedisCacheStore's calls wait the same way: redis-calls.ts).
 */
function afterPoll(resolve: () => void): void {
    setImmediate(resolve);
}
