import type { IncomingMessage } from 'node:http';
import type { Attributes, Span } from '@opentelemetry/api';
import { cacheOutcomeOf, cacheStoredOf } from '../src/client/index.js';

/**
 * Span and metric attribute of a hop made by a client with a cache (README "Cache"): how the call
 * was answered — `hit`, `miss`, `revalidated`, `request`, `bypass` or `only-if-cached` — read from
 * the `tracewire` member of the response's Cache-Status, the one record the cache layer writes.
 */
export const ATTR_TRACEWIRE_CACHE = 'tracewire.cache';

/** Records the hop's cache outcome, when its response says one: on the duration point, and on the span when one is given. */
export function addCacheOutcome(span: Span | undefined, metricAttributes: Attributes, res: IncomingMessage): void {
    const outcome = cacheOutcomeOf(res.headers['cache-status']);
    if (outcome !== undefined) {
        span?.setAttribute(ATTR_TRACEWIRE_CACHE, outcome);
        metricAttributes[ATTR_TRACEWIRE_CACHE] = outcome;
    }
}

/**
 * Span and metric attribute of a hop whose response the cache meant to store (docs/cache.md
 * "Cache-Status"): true once the write landed, false when it did not (the store down, slow, or
 * declining the entry); absent when the cache wrote nothing for the hop.
 */
export const ATTR_TRACEWIRE_CACHE_STORED = 'tracewire.cache.stored';

/**
 * Records whether the hop's response was stored, read at the hop's end: the cache completes the
 * response's Cache-Status once its write has settled, before the body's end reaches anyone.
 */
export function addCacheStored(span: Span | undefined, metricAttributes: Attributes, res: IncomingMessage): void {
    if (metricAttributes[ATTR_TRACEWIRE_CACHE] === undefined) {
        // Not a response of a cached call: nothing to read.
        return;
    }

    const stored = cacheStoredOf(res.headers['cache-status']);
    if (stored !== undefined) {
        span?.setAttribute(ATTR_TRACEWIRE_CACHE_STORED, stored);
        metricAttributes[ATTR_TRACEWIRE_CACHE_STORED] = stored;
    }
}
