import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Attributes, Counter, Meter } from '@opentelemetry/api';
import { type CacheStoreErrorMessage, CLIENT_CHANNELS } from '../src/client/index.js';

/**
 * `tracewire.cache.store.errors`: the failed calls to a cache store (docs/cache.md "Store failures").
 * The cache goes on without the store, so no request fails and no span says it: a store down or slow
 * shows here. Heard on `tracewire:client:cacheStoreError`, which carries no client, so every
 * instrumentation of the process hears every store; each failure is counted once, by the first.
 */
export const METRIC_CACHE_STORE_ERRORS = 'tracewire.cache.store.errors';
/** The store call that failed: `get`, `set`, `delete`, `lockFill`, `unlockFill`, `awaitFill`, `notices`. */
export const ATTR_CACHE_STORE_OPERATION = 'tracewire.cache.store.operation';
/** How: `timeout`, `unavailable` (not even sent: the store's server is out of reach) or `error`. */
export const ATTR_CACHE_STORE_FAILURE = 'tracewire.cache.store.failure';
/** The store's class (`RedisCacheStore`, `SqliteCacheStore`...). */
export const ATTR_CACHE_STORE = 'tracewire.cache.store';

const counted = new WeakSet<object>();

export class StoreErrorCounter {
    private readonly counter: Counter;

    constructor(meter: Meter) {
        this.counter = meter.createCounter(METRIC_CACHE_STORE_ERRORS, {
            description: 'Failed calls to the cache store, which the cache went on without.',
            unit: '{error}'
        });
        subscribe(CLIENT_CHANNELS.cacheStoreError, this.onFailure);
    }

    stop(): void {
        unsubscribe(CLIENT_CHANNELS.cacheStoreError, this.onFailure);
    }

    // Read defensively: anything may publish on a channel, and a subscriber's throw reaches the process.
    private readonly onFailure = (message: unknown): void => {
        try {
            const { operation, reason, error, store } = (message ?? {}) as Partial<CacheStoreErrorMessage>;
            if (typeof error !== 'object' || error === null || counted.has(error)) {
                return;
            }

            counted.add(error);
            const attributes: Attributes = {};
            attributes[ATTR_CACHE_STORE_OPERATION] = String(operation);
            attributes[ATTR_CACHE_STORE_FAILURE] = String(reason);
            const name = (store as object | undefined)?.constructor?.name;
            if (typeof name === 'string' && name !== '') {
                attributes[ATTR_CACHE_STORE] = name;
            }

            this.counter.add(1, attributes);
        } catch {
            // Nothing to count from a message of another shape.
        }
    };
}
