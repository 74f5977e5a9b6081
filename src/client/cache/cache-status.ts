/**
 * The RFC 9211 `Cache-Status` member the client adds to every response of a cached call (README
 * "Cache"), and how the call was answered, in one word, for the events and the instrumentation.
 */

/** How a cached client answered a call: the `tracewire.cache` span attribute. */
export type CacheOutcome =
    /** From the cache, fresh (or stale as the request or RFC 5861 allowed). */
    | 'hit'
    /** Nothing usable was stored: sent to the origin. */
    | 'miss'
    /** A stored response was validated with the origin (304 or a new response). */
    | 'revalidated'
    /** The request's directives (`no-cache`, `max-age`, `min-fresh`) sent it to the origin, or it is a retry. */
    | 'request'
    /** The method is not cached (or the call bypasses the cache: a range, a precondition). */
    | 'bypass'
    /** `only-if-cached` and nothing usable stored: a 504 made by the cache. */
    | 'only-if-cached'
    /**
     * Answered from the store after waiting for another call's fetch of the same request (request
     * coalescing): read back from a Cache-Status with `collapsed`, for the events and the instrumentation.
     */
    | 'collapsed';

/** One Cache-Status member's parameters (RFC 9211 2). */
export interface CacheStatusFacts {
    outcome: CacheOutcome;
    /** The response was stored (or its stored copy updated): the store's write has landed. */
    stored: boolean;
    /** Seconds of freshness left, negative when stale. */
    ttl: number | undefined;
    /** The status the origin answered a forwarded request with. */
    forwardStatus: number | undefined;
    /**
     * Why a stale response was served (`stale-while-revalidate`, `stale-if-error`, `max-stale`), or why
     * a response the cache meant to store is not (`notStoredDetails`).
     */
    detail: string | undefined;
    /**
     * The call waited for another's fetch of the same request (RFC 9211 2.5): true when it was answered
     * with what that fetch stored, false when it had to go to the origin itself; undefined when it did not wait.
     */
    collapsed: boolean | undefined;
}

/**
 * The `detail` of a response the cache meant to store and did not, by how the write ended (docs/cache.md
 * "Cache-Status"): the store declined it (too large for it), did not answer within `storeTimeout`, or
 * failed (threw, rejected: a Redis server out of reach).
 */
export const notStoredDetails = {
    declined: 'store-declined',
    timeout: 'store-timeout',
    error: 'store-error'
} as const;

const forwardReasons: Record<CacheOutcome, string | undefined> = {
    hit: undefined,
    miss: 'miss',
    revalidated: 'stale',
    request: 'request',
    bypass: 'bypass',
    'only-if-cached': 'miss',
    collapsed: 'miss'
};

/** The `tracewire` member of Cache-Status, e.g. `tracewire; fwd=miss; fwd-status=200; stored; ttl=60`. */
export function cacheStatusMember(facts: CacheStatusFacts): string {
    const forward = forwardReasons[facts.outcome];
    let member = forward === undefined ? 'tracewire; hit' : `tracewire; fwd=${forward}`;
    if (facts.collapsed !== undefined) {
        member += facts.collapsed ? '; collapsed' : '; collapsed=?0';
    }

    if (facts.forwardStatus !== undefined) {
        member += `; fwd-status=${facts.forwardStatus}`;
    }

    if (facts.stored) {
        member += '; stored';
    }

    if (facts.ttl !== undefined) {
        member += `; ttl=${ttlSeconds(facts.ttl)}`;
    }

    const detail = facts.detail ?? (facts.outcome === 'only-if-cached' ? 'only-if-cached' : undefined);
    if (detail !== undefined) {
        member += `; detail=${detail}`;
    }

    return member;
}

/** A member's `ttl`: the seconds left of freshness, whole (negative once stale). */
export function ttlSeconds(ttl: number): number {
    return Math.round(ttl);
}

/** The `tracewire` member of a Cache-Status field (the last member), or undefined. */
function ownMember(field: string | readonly string[] | undefined): string | undefined {
    if (field === undefined) {
        return undefined;
    }

    const members = (typeof field === 'string' ? field : field.join(',')).split(',');
    const member = members[members.length - 1]!.trim();
    return member.startsWith('tracewire;') ? member : undefined;
}

/**
 * Whether the response a Cache-Status field of this client describes was stored: true once its write
 * landed (`stored`), false when the write did not store it (a `store-…` detail), undefined when the
 * cache wrote nothing for it (a hit, a bypass, a response not storable, or not read whole yet).
 */
export function cacheStoredOf(field: string | readonly string[] | undefined): boolean | undefined {
    const member = ownMember(field);
    if (member === undefined) {
        return undefined;
    }

    if (/;\s*stored\s*(?:;|$)/.test(member)) {
        return true;
    }

    return /;\s*detail=store-/.test(member) ? false : undefined;
}

/** The outcome recorded in a Cache-Status field by this client, or undefined when it has no `tracewire` member. */
export function cacheOutcomeOf(field: string | readonly string[] | undefined): CacheOutcome | undefined {
    const member = ownMember(field);
    if (member === undefined) {
        return undefined;
    }

    if (/;\s*detail=only-if-cached\b/.test(member)) {
        return 'only-if-cached';
    }

    if (/;\s*collapsed(?:\s*;|\s*$|=\?1)/.test(member)) {
        return 'collapsed';
    }

    if (/;\s*hit\b/.test(member)) {
        return 'hit';
    }

    const forward = /;\s*fwd=([a-z-]+)/.exec(member)?.[1];
    for (const outcome of Object.keys(forwardReasons) as CacheOutcome[]) {
        if (forwardReasons[outcome] === forward && outcome !== 'only-if-cached' && outcome !== 'collapsed') {
            return outcome;
        }
    }

    return undefined;
}
