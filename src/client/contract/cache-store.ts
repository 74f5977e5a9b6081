/**
 * The storage behind the client's HTTP cache (README "Cache"): an asynchronous map from a URL to the
 * responses stored for it, so a networked store can be written against it. The RFC 9111 rules live
 * in the cache layer, never in a store: a store keeps, finds and drops entries, and bounds itself.
 */
export interface CacheStore {
    /**
     * Every stored response (variant) for `key`, newest first; empty when there is none. The cache
     * picks the variant whose `vary` matches the request. The list and its entries may be what the
     * store holds, shared with every later lookup: read only (docs/cache.md "The `cache` option").
     */
    get(key: string): Promise<readonly CachedResponse[]>;
    /**
     * Stores `entry` for `key`, replacing a stored variant with the same `vary` values. A store may
     * decline an entry it cannot hold (too large, say): the call still resolves, with `false`, so the
     * response's Cache-Status does not say `stored` (anything else counts as stored).
     */
    // biome-ignore lint/suspicious/noConfusingVoidType: a store that never declines resolves with nothing (Promise<void>)
    set(key: string, entry: CachedResponse): Promise<boolean | void>;
    /** Drops every variant stored for `key` (an unsafe method invalidated it). */
    delete(key: string): Promise<void>;
    /**
     * Optional: the largest body the store would keep, in bytes. The cache stops copying a response
     * body beyond it instead of holding a copy the store would decline (default 16 MiB).
     */
    readonly maxEntrySize?: number;
}

/** One stored response, with what the cache needs to judge its freshness and its variant. */
export interface CachedResponse {
    /** The method of the request it answered (GET, or HEAD). */
    method: string;
    statusCode: number;
    statusMessage: string;
    /** The response headers as received: name, value, name, value... */
    rawHeaders: readonly string[];
    /**
     * The request header values the response's `Vary` names (lower-case names; undefined for a
     * header the request did not have), or undefined when the response has no `Vary`.
     */
    vary: Readonly<Record<string, string | undefined>> | undefined;
    /** The body as it came on the wire (still content-encoded). */
    body: Buffer;
    /** Epoch ms when the request that got this response was sent. */
    requestTime: number;
    /** Epoch ms when its headers arrived. */
    responseTime: number;
    /** Epoch ms after which the entry is of no use (stale beyond what stale-while-revalidate and stale-if-error allow): a store may drop it. */
    deleteAt: number;
}

/**
 * An optional capability of a `CacheStore`: a short-lived lock per cache key, so that of the callers
 * missing one key at once (in one process or, on a shared store, across instances) one fetches from
 * the origin and stores the answer while the others wait for it, then look the key up again
 * (request coalescing, as nginx's `proxy_cache_lock`). A lock never outlives its `ttl`: a holder that
 * takes longer loses it, and its waiters go to the origin themselves. A holder whose answer is not
 * storable can mark the key so that the next callers skip waiting for a while (hit-for-pass).
 * Every method may reject like any store call; a caller then goes to the origin without the lock.
 */
export interface FillLocks {
    /** Takes the lock of `key` for at most `ttl` ms, unless another caller holds it or the key is marked pass. */
    lockFill(key: string, ttl: number): Promise<FillLock>;
    /**
     * Ends the hold of `token` on `key`, waking its waiters; nothing when `token` no longer holds it
     * (its `ttl` ran out, another took it since). `passFor` > 0 marks the key pass for that many ms.
     * True when the token still held the lock.
     */
    unlockFill(key: string, token: string, passFor?: number): Promise<boolean>;
    /**
     * Waits until the lock of `key` is released or has expired (`'released'`: look the key up again),
     * the key is marked pass (`'pass'`: go to the origin), or `timeout` ms have passed (`'timeout'`).
     */
    awaitFill(key: string, timeout: number): Promise<FillWait>;
}

/** The lock taken (with the token that releases it), or why not. */
export type FillLock =
    | { readonly acquired: true; readonly token: string }
    | { readonly acquired: false; readonly reason: 'held' | 'pass' };

export type FillWait = 'released' | 'pass' | 'timeout';

/** True when `store` offers fill locks. */
export function hasFillLocks(store: CacheStore): store is CacheStore & FillLocks {
    const locks = store as Partial<FillLocks>;
    return (
        typeof locks.lockFill === 'function' &&
        typeof locks.unlockFill === 'function' &&
        typeof locks.awaitFill === 'function'
    );
}
