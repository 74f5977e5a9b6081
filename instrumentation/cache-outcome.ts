import type { IncomingMessage } from 'node:http';
import type { Attributes, Span } from '@opentelemetry/api';
import { cacheOutcomeOf } from '../src/client/cache/cache-status.js';

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
