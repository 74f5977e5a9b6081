import type { CachedResponse } from '../contract/cache-store.js';
import type { HopResponse } from '../contract/types.js';
import { afterWrite, type WireAnswer } from './cache-call.js';
import type { StoreEnded } from './coalescing.js';
import { storeWithBody } from './entries.js';
import type { GuardedStore, StoreWrite } from './guarded-store.js';
import { completeCacheStatus } from './response.js';

/**
 * The writes of what the cache keeps from the origin's answers, for the cache layer (layer.ts), and
 * what the response's Cache-Status says once each has settled (docs/cache.md "Cache-Status"): `stored`
 * when it landed, else why not. `written` (request coalescing) is told first, with the entry.
 */

type Kept<Kind extends WireAnswer['kind']> = Extract<WireAnswer, { kind: Kind }>;

/**
 * Stores a response with its body once that has come whole; its member is completed before the body's
 * end reaches the reader (entries.ts holds the end until the write settled).
 */
export function writeResponse(
    store: GuardedStore,
    key: string,
    answer: Kept<'keep'>,
    shared: boolean,
    res: HopResponse,
    written: StoreEnded | undefined
): void {
    const pending = answer.member;
    storeWithBody(store, key, answer.entry, answer.directives, shared, res, (entry, write) => {
        written?.(entry);
        if (write !== undefined) {
            completeCacheStatus(res, pending.told, afterWrite(pending, write));
        }
    });
}

/**
 * Writes a 304's update of the stored response; gives, once it settled, the member of the response
 * the caller gets, also completed on the 304, whose end (and that of its hop) comes after. The client's
 * own `MemoryCacheStore` has settled it on return: the member is given as it is, not as a promise.
 */
export function writeUpdate(
    store: GuardedStore,
    key: string,
    answer: Kept<'updated'>,
    res: HopResponse,
    written: StoreEnded | undefined
): string | Promise<string> {
    const entry: CachedResponse = answer.entry;
    const now = store.setNow(key, entry);
    return now === undefined
        ? store.set(key, entry).then((write) => updateLanded(answer, res, written, write))
        : updateLanded(answer, res, written, now);
}

function updateLanded(
    answer: Kept<'updated'>,
    res: HopResponse,
    written: StoreEnded | undefined,
    write: StoreWrite
): string {
    written?.(answer.entry);
    const final = afterWrite(answer.member, write);
    if (answer.shown) {
        completeCacheStatus(res, answer.member.told, final);
    }

    res.resume();
    return final;
}
