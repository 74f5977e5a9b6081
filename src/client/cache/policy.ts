import { isSafeMethod } from '../../common/safe-methods.js';
import type { CachedResponse } from '../contract/cache-store.js';
import { type CacheDirectives, parseDirectives } from './directives.js';
import { fieldValue } from './fields.js';
import { freshnessOf, isHeuristicallyCacheable } from './freshness.js';
import { ListMemo } from './list-memo.js';
import { type RequestHeaders, varyNames } from './vary.js';

/**
 * The RFC 9111 decisions of the cache (README "Cache"), as pure functions of a request, a response
 * and the time: may a response be stored, may a stored one answer a request, what an unsafe method
 * invalidates. The layer (layer.ts) only acts on them.
 */

// The statuses whose caching rules the cache knows (RFC 9110 15), for must-understand.
const understoodStatuses = new Set([200, 203, 204, 300, 301, 302, 303, 307, 308, 404, 405, 410, 414, 501]);

/** What the request asks of the cache (RFC 9111 5.2.1), `Pragma: no-cache` included. */
export function requestDirectives(headers: RequestHeaders): CacheDirectives {
    const cacheControl = headers['cache-control'];
    const directives = parseDirectives(
        cacheControl === undefined ? undefined : Array.isArray(cacheControl) ? cacheControl : String(cacheControl)
    );
    // Pragma: no-cache counts only without a Cache-Control field (5.4).
    const pragma = headers.pragma;
    if (cacheControl === undefined && pragma !== undefined && /(?:^|,)\s*no-cache\s*(?:,|$)/i.test(String(pragma))) {
        return { ...directives, noCache: true };
    }

    return directives;
}

/** The response's `Cache-Control` directives. */
export function responseDirectives(rawHeaders: readonly string[]): CacheDirectives {
    return parsedDirectives.of(rawHeaders, directivesOf);
}

// Parsed once per field list.
const parsedDirectives = new ListMemo<CacheDirectives>();

function directivesOf(rawHeaders: readonly string[]): CacheDirectives {
    return parseDirectives(fieldValue(rawHeaders, 'cache-control'));
}

/** The request fields that keep the cache out of a call: it cannot answer a range or a precondition it did not make. */
export function bypassesCache(headers: RequestHeaders): boolean {
    return (
        headers.range !== undefined ||
        headers['if-match'] !== undefined ||
        headers['if-unmodified-since'] !== undefined ||
        headers['if-range'] !== undefined
    );
}

/** RFC 9111 3: true when the response to this request may be stored. */
export function isStorable(
    request: { headers: RequestHeaders; directives: CacheDirectives },
    statusCode: number,
    rawHeaders: readonly string[],
    directives: CacheDirectives,
    shared: boolean
): boolean {
    if (request.directives.noStore || statusCode < 200 || statusCode === 206) {
        return false;
    }

    // 5.2.2.3: must-understand stores only the statuses understood here, and overrides no-store for them.
    if (directives.mustUnderstand ? !understoodStatuses.has(statusCode) : directives.noStore) {
        return false;
    }

    if (statusCode === 304 || varyNames(rawHeaders)[0] === '*') {
        return false;
    }

    if (shared) {
        if (directives.private) {
            return false;
        }

        // 3.5: a shared cache stores an answer to an authorized request only when told it may.
        if (
            request.headers.authorization !== undefined &&
            !directives.public &&
            !directives.mustRevalidate &&
            directives.sMaxage === undefined
        ) {
            return false;
        }
    }

    return (
        directives.public ||
        (!shared && directives.private) ||
        directives.maxAge !== undefined ||
        (shared && directives.sMaxage !== undefined) ||
        fieldValue(rawHeaders, 'expires') !== undefined ||
        directives.noCache ||
        isHeuristicallyCacheable(statusCode)
    );
}

/** How a stored response may answer a request. */
export type Suitability =
    /** Fresh enough for the request: answer from the cache. */
    | 'fresh'
    /** Stale, but the request accepts it (`max-stale`): answer from the cache. */
    | 'stale-allowed'
    /** Stale within `stale-while-revalidate`: answer from the cache and revalidate in the background. */
    | 'stale-while-revalidate'
    /** Must be validated with the origin first (stale, `no-cache`, or the request wants it fresher). */
    | 'validate';

/** The judgement on one stored response, with the freshness it was made on. */
export interface Judgement {
    suitability: Suitability;
    /** Why a fresh response is validated anyway: the request asked (`no-cache`, `max-age`, `min-fresh`). */
    byRequest: boolean;
    /** Seconds of freshness left (negative when stale): the `ttl` of Cache-Status. */
    ttl: number;
    directives: CacheDirectives;
}

/** RFC 9111 4.2 and 5.2, RFC 5861: may `entry` answer a request with `request` directives at `now`. */
export function judge(entry: CachedResponse, request: CacheDirectives, shared: boolean, now: number): Judgement {
    const directives = responseDirectives(entry.rawHeaders);
    const { age, lifetime } = freshnessOf(entry, directives, shared, now);
    const ttl = lifetime - age;
    if (directives.noCache) {
        return judged('validate', false, ttl, directives);
    }

    if (request.noCache || (request.maxAge !== undefined && age > request.maxAge)) {
        return judged('validate', true, ttl, directives);
    }

    if (ttl > 0) {
        const tooOld = request.minFresh !== undefined && ttl < request.minFresh;
        return tooOld ? judged('validate', true, ttl, directives) : judged('fresh', false, ttl, directives);
    }

    // Stale: may it be served without the origin?
    if (directives.mustRevalidate || (shared && (directives.proxyRevalidate || directives.sMaxage !== undefined))) {
        return judged('validate', false, ttl, directives);
    }

    if (request.maxStale !== undefined && -ttl <= request.maxStale) {
        return judged('stale-allowed', false, ttl, directives);
    }

    if (directives.staleWhileRevalidate !== undefined && -ttl <= directives.staleWhileRevalidate) {
        return judged('stale-while-revalidate', false, ttl, directives);
    }

    return judged('validate', false, ttl, directives);
}

// A function of the module, not a closure over the judgement's values: one fewer object per lookup.
function judged(suitability: Suitability, byRequest: boolean, ttl: number, directives: CacheDirectives): Judgement {
    return { suitability, byRequest, ttl, directives };
}

/** RFC 5861 4: true when a stale `entry` may answer instead of an error (`status` a 5xx, or undefined for a network failure). */
export function servesStaleOnError(
    judgement: Judgement,
    request: CacheDirectives,
    status: number | undefined
): boolean {
    if (status !== undefined && status < 500) {
        return false;
    }

    const allowance = request.staleIfError ?? judgement.directives.staleIfError;
    const mustRevalidate = judgement.directives.mustRevalidate;
    return allowance !== undefined && !mustRevalidate && -judgement.ttl <= allowance;
}

/** Epoch ms after which a stored response is of no use, even stale (store.ts `deleteAt`). */
export function usefulUntil(entry: CachedResponse, directives: CacheDirectives, shared: boolean, now: number): number {
    const { age, lifetime } = freshnessOf(entry, directives, shared, now);
    return usefulFor(lifetime - age, directives, now);
}

/** `usefulUntil` of a response judged at `now` (its `ttl`, judge()'s, and its directives). */
export function usefulFor(ttl: number, directives: CacheDirectives, now: number): number {
    const staleUse = Math.max(directives.staleWhileRevalidate ?? 0, directives.staleIfError ?? 0);
    // A stale response stays useful past its freshness: a 304 renews it for a header round trip, a
    // request may accept it stale (max-stale). The store's bounds decide what goes first.
    return now + (Math.max(0, ttl) + Math.max(staleUse, staleKeep)) * 1000;
}

// How long a stale response is kept for a conditional request or max-stale: a day.
const staleKeep = 86_400;

/** True for the methods RFC 9110 calls safe: the only ones a cache may store for (README "Cache", `methods`). */

// What most responses (every GET's) invalidate: one list for all of them.
const noUrls: readonly URL[] = Object.freeze([]);

/**
 * RFC 9111 4.4: the URLs whose stored responses an unsafe request invalidates once it got a
 * non-error response: its own, and those of `Location` and `Content-Location` on the same origin.
 */
export function invalidatedUrls(
    method: string,
    target: URL | string,
    statusCode: number,
    rawHeaders: readonly string[]
): readonly URL[] {
    if (isSafeMethod(method) || statusCode < 200 || statusCode >= 400) {
        return noUrls;
    }

    // Parsed only here: most responses (every GET) invalidate nothing.
    const url = typeof target === 'string' ? new URL(target) : target;
    const urls = [url];
    for (const name of ['location', 'content-location']) {
        const value = fieldValue(rawHeaders, name);
        if (value === undefined) {
            continue;
        }

        try {
            const target = new URL(value, url);
            if (target.origin === url.origin) {
                urls.push(target);
            }
        } catch {
            // A malformed Location invalidates nothing more.
        }
    }

    return urls;
}
