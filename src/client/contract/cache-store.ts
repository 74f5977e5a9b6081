/**
 * The storage behind the client's HTTP cache (README "Cache"): an asynchronous map from a URL to the
 * responses stored for it, so a networked store can be written against it. The RFC 9111 rules live
 * in the cache layer, never in a store: a store keeps, finds and drops entries, and bounds itself.
 */
export interface CacheStore {
    /**
     * Every stored response (variant) for `key`, newest first; empty when there is none. The cache
     * picks the variant whose `vary` matches the request.
     */
    get(key: string): Promise<readonly CachedResponse[]>;
    /**
     * Stores `entry` for `key`, replacing a stored variant with the same `vary` values. A store may
     * decline an entry it cannot hold (too large, say): the call still resolves.
     */
    set(key: string, entry: CachedResponse): Promise<void>;
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
