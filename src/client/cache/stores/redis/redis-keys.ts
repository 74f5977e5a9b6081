import { createHash } from 'node:crypto';
import type { CachedResponse } from '../../../contract/cache-store.js';
import { varyText } from '../../vary.js';

/**
 * Where a `RedisCacheStore` keeps what it keeps (docs/cache.md "Running as a fleet", the key layout).
 * For one cache key (a URL, with its method when not GET or HEAD), `<id>` being its SHA-256 in base64url:
 *
 * - `<prefix>{<id>}`: a hash of its variants: field `b:<variant>` the entry (redis-entry.ts), field
 *   `m:<variant>` `"<sequence> <deleteAt>"` (the order stored and the end of use, read by the scripts
 *   without the bodies); the key expires on the server when its last variant is of no use.
 * - `<prefix>{<id>}:lock`: the fill lock of the key (a token, expiring on the server); `<prefix>{<id>}:pass`:
 *   present while its last answer was not storable (hit-for-pass).
 * - `<prefix>changes`: the pub/sub channel on which every change of a key's entries or lock is
 *   announced as `<id> <instance>` (the store instance that made it: it need not hear its own), or
 *   `*` (drop everything held locally); `<prefix>heartbeat:<instance>`: the channel one store
 *   instance with a local tier sends itself a heartbeat on.
 *
 * The `{<id>}` is a Redis Cluster hash tag: every key of one cache key lives in one slot, so each
 * script runs on one node; a lookup is one HGETALL and an invalidation one script, whatever is stored.
 */
export interface ResourceKeys {
    /** The SHA-256 of the cache key, base64url: what a change notice names. */
    readonly id: string;
    readonly entries: string;
    readonly lock: string;
    readonly pass: string;
}

/** The keys of `cacheKey` under `prefix`. */
export function resourceKeys(prefix: string, cacheKey: string): ResourceKeys {
    const id = createHash('sha256').update(cacheKey).digest('base64url');
    const entries = `${prefix}{${id}}`;
    return { id, entries, lock: `${entries}:lock`, pass: `${entries}:pass` };
}

/** The channel the changes under `prefix` are announced on. */
export function changesChannel(prefix: string): string {
    return `${prefix}changes`;
}

/** The channel on which one store instance hears its own heartbeats (redis-notices.ts). */
export function heartbeatChannel(prefix: string, instance: string): string {
    return `${prefix}heartbeat:${instance}`;
}

/** The notice that empties every local tier (an operator's purge: `PUBLISH <prefix>changes '*'`). */
export const everything = '*';

/** The notice of a change to the resource `id` made by the store instance `instance`. */
export function changeNotice(id: string, instance: string): string {
    return `${id} ${instance}`;
}

/** The resource a notice names (`everything` for all), and the instance that sent it when it says. */
export function parseNotice(notice: string): { id: string; from: string | undefined } {
    const space = notice.indexOf(' ');
    return space === -1
        ? { id: notice, from: undefined }
        : { id: notice.slice(0, space), from: notice.slice(space + 1) };
}

/** The field names of a variant: the same vary values (in any order of their names) make the same variant. */
export function variantFields(vary: CachedResponse['vary']): { body: string; meta: string } {
    const id = vary === undefined ? 'none' : digest(varyText(vary));
    return { body: `b:${id}`, meta: `m:${id}` };
}

// 128 bits: a hash field name of bounded length, however long the header values a variant varies on.
function digest(text: string): string {
    return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}
