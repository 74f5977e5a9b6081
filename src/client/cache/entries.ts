import type { CachedResponse } from '../contract/cache-store.js';
import type { HopResponse } from '../contract/types.js';
import type { CacheDirectives } from './directives.js';
import { hopByHopFields, withoutFields } from './fields.js';
import type { GuardedStore, StoreWrite } from './guarded-store.js';
import { type Judgement, judge, requestDirectives, usefulFor, usefulUntil } from './policy.js';
import { copyBody } from './response.js';
import { validatedBy304 } from './validators.js';
import { type RequestHeaders, varyNames, varyValues } from './vary.js';

/**
 * How an origin's response becomes what the store keeps: the one recipe for the cache layer
 * (layer.ts) and for the background revalidation of `stale-while-revalidate` (revalidation.ts).
 */

const emptyBody = Buffer.alloc(0);

/**
 * A stored response updated by a 304 (RFC 9111 4.3.4), kept until it is of no use, and judged as it
 * arrived (for no request's directives); `noStore` when the 304 forbids keeping it. Undefined when the
 * 304 does not validate the stored response.
 */
export function updatedEntry(
    entry: CachedResponse,
    res: HopResponse,
    requestTime: number,
    responseTime: number,
    shared: boolean
): { entry: CachedResponse; noStore: boolean; judgement: Judgement } | undefined {
    const updated = validatedBy304(entry, res.rawHeaders, requestTime, responseTime);
    if (updated === undefined) {
        return undefined;
    }

    const judgement = judge(updated, noDirectives, shared, responseTime);
    // Set on the entry just made, not on a copy; from the judgement's freshness, worked out once.
    updated.deleteAt = usefulFor(judgement.ttl, judgement.directives, responseTime);
    return { entry: updated, noStore: judgement.directives.noStore, judgement };
}

const noDirectives = requestDirectives({});

/** What is stored of a response to `method` before its body has come: its head, as the origin sent it, without hop-by-hop fields. */
export function entryHead(
    method: string,
    res: HopResponse,
    requestHeaders: RequestHeaders,
    requestTime: number,
    responseTime: number
): CachedResponse {
    return {
        method,
        statusCode: res.statusCode as number,
        statusMessage: res.statusMessage ?? '',
        rawHeaders: withoutFields(res.rawHeaders, hopByHopFields(res.rawHeaders)),
        vary: varyValues(varyNames(res.rawHeaders), requestHeaders),
        body: emptyBody,
        requestTime,
        responseTime,
        deleteAt: 0
    };
}

/**
 * How the storing of a response ended, told before the caller sees the end of its body: `entry` the
 * response with its whole body (undefined when the body passed the store's entry limit, or was cut),
 * `write` how its write ended (`declined` for a body past the limit; undefined when the body was cut).
 */
export type WriteEnded = (entry: CachedResponse | undefined, write: StoreWrite | undefined) => void;

/**
 * Stores `head` with the body of `res` once it has come whole (and within the store's entry limit).
 * The end of `res` reaches its reader (a helper's read, `client.read()`, a caller reading the stream)
 * only once the write has settled, within the cache's bound on a store call (docs/cache.md "The
 * `cache` option"), and `ended`, when given, is told first.
 */
export function storeWithBody(
    store: GuardedStore,
    key: string,
    head: CachedResponse,
    directives: CacheDirectives,
    shared: boolean,
    res: HopResponse,
    ended?: WriteEnded
): void {
    copyBody(
        res,
        store.entryLimit,
        (body) => {
            if (body === undefined) {
                ended?.(undefined, 'declined');
                return Promise.resolve();
            }

            const complete = { ...head, body };
            complete.deleteAt = usefulUntil(complete, directives, shared, Date.now());
            const landing = store.set(key, complete);
            return ended === undefined ? landing : landing.then((write) => ended(complete, write));
        },
        ended === undefined ? undefined : () => ended(undefined, undefined)
    );
}
