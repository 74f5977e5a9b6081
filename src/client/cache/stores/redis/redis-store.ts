import type { CachedResponse, CacheStore, FillLock, FillLocks, FillWait } from '../../../contract/cache-store.js';
import type { RedisStoreEngine } from './redis-engine.js';
import {
    checkRedisStoreOptions,
    type RedisCacheStoreOptions,
    resolveRedisStoreOptions
} from './redis-store-options.js';

/**
 * A `CacheStore` on a Redis or Valkey server shared by every instance of a service (README "Cache
 * stores", docs/cache.md "Running as a fleet"), through the client the application already has
 * (ioredis or iovalkey, a `Redis` or a `Cluster`). What one instance stores is found by the next
 * lookup of any instance; a deletion and a 304's update reach every instance's next lookup. Entries
 * expire on the server; every call is bounded by `timeout` and fails fast while the server is out of
 * reach. With `localTier`, each process also holds what it read, kept current by change notices. It
 * offers fill locks (`FillLocks`, contract/cache-store.ts). Call `close()` when done: it ends the
 * store's own connection, when it made one.
 *
 * The options are checked here, at once; the store's workings (redis-engine.ts and the modules it
 * uses) load with the first store made, not with the package: a process that never uses Redis does
 * not hold them (README "Import footprint"). Calls made meanwhile wait for them, in their order.
 */
export class RedisCacheStore implements CacheStore, FillLocks {
    readonly keyPrefix: string;
    readonly maxEntrySize: number;
    readonly maxVariants: number;
    readonly timeout: number;
    #engine: RedisStoreEngine | undefined;
    readonly #loading: Promise<RedisStoreEngine>;
    #closed = false;

    /** Throws a 500 HttpError naming the option when one is invalid. */
    constructor(options: RedisCacheStoreOptions) {
        const problem = checkRedisStoreOptions(options);
        if (problem !== undefined) {
            throw problem;
        }

        const settings = resolveRedisStoreOptions(options);
        this.keyPrefix = settings.keyPrefix;
        this.maxEntrySize = settings.maxEntrySize;
        this.maxVariants = settings.maxVariants;
        this.timeout = settings.timeout;
        this.#loading = import('./redis-engine.js').then(({ RedisStoreEngine }) => {
            const engine = new RedisStoreEngine(settings, this);
            this.#engine = engine;
            if (this.#closed) {
                engine.close();
            }

            return engine;
        });
    }

    /** True while the local tier can answer (it is on, and its notices are live). */
    get localTierLive(): boolean {
        return this.#engine?.localTierLive === true;
    }

    get(key: string): Promise<readonly CachedResponse[]> {
        const engine = this.#engine;
        return engine === undefined ? this.#loading.then((loaded) => loaded.get(key)) : engine.get(key);
    }

    /** Resolves false when it declined the entry (larger than `maxEntrySize`). */
    set(key: string, entry: CachedResponse): Promise<boolean> {
        const engine = this.#engine;
        // Sent at once once loaded: a lookup this process makes next goes after it on the same connection.
        return engine === undefined ? this.#loading.then((loaded) => loaded.set(key, entry)) : engine.set(key, entry);
    }

    delete(key: string): Promise<void> {
        const engine = this.#engine;
        return engine === undefined ? this.#loading.then((loaded) => loaded.delete(key)) : engine.delete(key);
    }

    lockFill(key: string, ttl: number): Promise<FillLock> {
        return this.#loading.then((engine) => engine.lockFill(key, ttl));
    }

    unlockFill(key: string, token: string, passFor?: number): Promise<boolean> {
        // A token comes from a lock taken, so the engine is loaded: the release is sent at once.
        const engine = this.#engine;
        return engine === undefined
            ? this.#loading.then((loaded) => loaded.unlockFill(key, token, passFor))
            : engine.unlockFill(key, token, passFor);
    }

    awaitFill(key: string, timeout: number): Promise<FillWait> {
        return this.#loading.then((engine) => engine.awaitFill(key, timeout));
    }

    /**
     * Releases the fill locks it holds (the release is sent before this returns: a `quit()` of your
     * client right after comes after it), then ends the store's own connection (the notices') and its
     * heartbeat; calls still waiting for your client to connect, and later calls, reject. Idempotent.
     */
    close(): void {
        this.#closed = true;
        this.#engine?.close();
    }
}

export type { RedisStoreFailure, RedisStoreFailureReason, RedisStoreOperation } from './redis-calls.js';
export type { RedisCacheClient, RedisSubscriberClient } from './redis-client.js';
export type { RedisCacheStoreOptions, RedisLocalTierOptions } from './redis-store-options.js';
