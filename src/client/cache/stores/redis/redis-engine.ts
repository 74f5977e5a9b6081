import { randomUUID } from 'node:crypto';
import { BoundedMemo } from '../../../../common/bounded-memo.js';
import type { HttpError } from '../../../../errors/index.js';
import type { CachedResponse, CacheStore, FillLock, FillLocks, FillWait } from '../../../contract/cache-store.js';
import { clientFailure } from '../../../contract/errors.js';
import { publishCacheStoreError } from '../../../pipeline/channels.js';
import { BoundedCalls, type RedisStoreFailure } from './redis-calls.js';
import type { RedisCacheClient } from './redis-client.js';
import { DecodedEntries, encodedHead } from './redis-entry.js';
import { changeNotice, changesChannel, type ResourceKeys, resourceKeys, variantFields } from './redis-keys.js';
import { LocalTier } from './redis-local-tier.js';
import { RedisFillLocks } from './redis-locks.js';
import { ChangeNotices } from './redis-notices.js';
import { dropVariants, storeVariant } from './redis-scripts.js';
import type { RedisStoreSettings } from './redis-store-options.js';

/**
 * The workings of a `RedisCacheStore` (redis-store.ts), loaded with the first store made: each lookup
 * is one HGETALL, each change one script (redis-scripts.ts), on keys of one Cluster slot
 * (redis-keys.ts); every call is bounded by `timeout` and fails fast while the server is out of reach
 * (redis-calls.ts); the local tier is kept current by the change notices (redis-local-tier.ts).
 */
export class RedisStoreEngine implements CacheStore, FillLocks {
    readonly keyPrefix: string;
    readonly maxEntrySize: number;
    readonly maxVariants: number;
    readonly timeout: number;
    readonly #client: RedisCacheClient;
    readonly #calls: BoundedCalls;
    readonly #channel: string;
    // Names this instance in its notices and heartbeats.
    readonly #instance = randomUUID();
    readonly #heartbeat: number;
    readonly #tier: LocalTier | undefined;
    readonly #locks: RedisFillLocks;
    #notices: ChangeNotices | undefined;
    #closed = false;
    readonly #resourceKeys = new BoundedMemo<string, ResourceKeys>(1000);
    // The entries decoded from the values last read, reused while a lookup reads the same bytes again.
    readonly #decoded = new DecodedEntries();

    /** `store` is the store the application holds, named in the failures published. */
    constructor(settings: RedisStoreSettings, store: CacheStore) {
        this.#client = settings.client;
        this.keyPrefix = settings.keyPrefix;
        this.maxEntrySize = settings.maxEntrySize;
        this.maxVariants = settings.maxVariants;
        this.timeout = settings.timeout;
        this.#channel = changesChannel(this.keyPrefix);
        this.#heartbeat = settings.heartbeat;
        const onError = settings.onError;
        this.#calls = new BoundedCalls(this.#client, this.timeout, (failure: RedisStoreFailure) => {
            // For a metric, whether or not the application watches (docs/cache.md "Store failures").
            publishCacheStoreError({ ...failure, store });
            try {
                onError?.(failure);
            } catch {
                // A throwing hook must not turn a counted failure into another one.
            }
        });
        this.#tier = settings.localTier === undefined ? undefined : new LocalTier(settings.localTier, this.#listen());
        this.#locks = new RedisFillLocks(
            this.#client,
            this.#calls,
            (key) => this.#keys(key),
            this.#channel,
            (l) => this.#listen().onChange(l)
        );
    }

    /** True while the local tier can answer (it is on, and its notices are live). */
    get localTierLive(): boolean {
        return this.#tier !== undefined && this.#notices?.live === true;
    }

    async get(key: string): Promise<readonly CachedResponse[]> {
        if (this.#closed) {
            throw closed();
        }

        const keys = this.#keys(key);
        const tier = this.#tier;
        if (tier !== undefined) {
            const held = await tier.get(keys.id);
            if (held.length > 0) {
                return held;
            }
        }

        const stamp = tier?.reading(keys.id) ?? 0;
        let entries: readonly CachedResponse[] | undefined;
        try {
            const fields = await this.#calls.run('get', () => this.#client.hgetallBuffer(keys.entries));
            entries = variantsIn(fields, key, Date.now(), this.#decoded);
            return entries;
        } finally {
            tier?.read(keys.id, stamp, entries);
        }
    }

    /** Resolves false when it declined the entry (larger than `maxEntrySize`). */
    set(key: string, entry: CachedResponse): Promise<boolean> {
        let keys: ResourceKeys;
        let fields: { body: string; meta: string };
        let value: Buffer | string;
        let deleteAt: number;
        let declined: boolean;
        if (this.#closed) {
            return Promise.reject(closed());
        }

        try {
            keys = this.#keys(key);
            fields = variantFields(entry.vary);
            const head = encodedHead(key, entry);
            declined = head.length + entry.body.length > this.maxEntrySize;
            // An entry declined still drops the variant it would have replaced: that one is outdated all the same.
            value = declined ? '' : Buffer.concat([head, entry.body]);
            deleteAt = Number.isFinite(entry.deleteAt) ? Math.ceil(entry.deleteAt) : 0;
        } catch (err) {
            return Promise.reject(this.#calls.fail('set', 'error', `failed: ${(err as Error).message}`, err));
        }

        this.#tier?.drop(keys.id);
        // Sent now, not after a tick: a lookup this process makes next is sent after it on the same connection.
        return this.#calls
            .run('set', () =>
                this.#client.eval(
                    storeVariant,
                    1,
                    keys.entries,
                    fields.body,
                    fields.meta,
                    value,
                    deleteAt,
                    Date.now(),
                    this.maxVariants,
                    this.#channel,
                    changeNotice(keys.id, this.#instance)
                )
            )
            .then(() => !declined);
    }

    delete(key: string): Promise<void> {
        if (this.#closed) {
            return this.#open();
        }

        const keys = this.#keys(key);
        this.#tier?.drop(keys.id);
        return this.#calls
            .run('delete', () =>
                this.#client.eval(dropVariants, 1, keys.entries, this.#channel, changeNotice(keys.id, this.#instance))
            )
            .then(nothing);
    }

    lockFill(key: string, ttl: number): Promise<FillLock> {
        return this.#open().then(() => this.#locks.lockFill(key, ttl));
    }

    /** Sent at once (not after a tick), so that an application's `quit()` made as the call settles comes after it. */
    unlockFill(key: string, token: string, passFor?: number): Promise<boolean> {
        if (this.#closed) {
            // `close()` sent the release of every lock it held; any other token is not this store's to release.
            return this.#locks.holds(token) ? Promise.reject(closed()) : Promise.resolve(false);
        }

        return this.#locks.unlockFill(key, token, passFor);
    }

    awaitFill(key: string, timeout: number): Promise<FillWait> {
        return this.#open().then(() => this.#locks.awaitFill(key, timeout));
    }

    /**
     * Sends the release of the fill locks it holds, then ends the store's own connection (the notices')
     * and its heartbeat; calls waiting for the client to connect, and later calls, reject. Idempotent.
     */
    close(): void {
        if (!this.#closed) {
            this.#locks.releaseHeld();
            this.#calls.close(closed());
        }

        this.#closed = true;
        this.#notices?.close();
        this.#tier?.clear();
    }

    // The keys of a cache key are its SHA-256: worked out once per key, not on every lookup.
    #keys(key: string): ResourceKeys {
        return this.#resourceKeys.get(key) ?? this.#resourceKeys.set(key, resourceKeys(this.keyPrefix, key));
    }

    // Settles at once: rejected once the store is closed.
    #open(): Promise<void> {
        return this.#closed ? Promise.reject(closed()) : Promise.resolve();
    }

    // The notices connection, made on first need: by the local tier, or by the first waiter for a fill.
    #listen(): ChangeNotices {
        this.#notices ??= new ChangeNotices(
            this.#client,
            this.#calls,
            this.#channel,
            this.keyPrefix,
            this.#instance,
            this.#heartbeat
        );
        return this.#notices;
    }
}

function nothing(): void {}

export function closed(): HttpError {
    return clientFailure('RedisCacheStore is closed');
}

/** The live variants of `key` in the fields of its hash, newest stored first. */
function variantsIn(
    fields: Record<string, Buffer>,
    key: string,
    now: number,
    decoded: DecodedEntries
): CachedResponse[] {
    const found: { entry: CachedResponse; sequence: number }[] = [];
    for (const field in fields) {
        if (!field.startsWith('b:')) {
            continue;
        }

        const entry = decoded.entryOf(key, field, fields[field]!);
        const meta = fields[`m:${field.slice(2)}`]?.toString('latin1') ?? '';
        const sequence = Number.parseInt(meta, 10);
        if (entry !== undefined && entry.deleteAt > now && Number.isSafeInteger(sequence)) {
            found.push({ entry, sequence });
        }
    }

    return found.sort((a, b) => b.sequence - a.sequence).map((item) => item.entry);
}
