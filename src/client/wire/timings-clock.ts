import { performance } from 'node:perf_hooks';

/*
 * The clock of the hops' `timings` (README "Timings"): epoch milliseconds with sub-millisecond
 * precision, and their reading on the monotonic clock. Public (`timingsNow`, `timingsToMonotonic`
 * of `tracewire/client`): an observer that places a record's moments on a timeline of its own, as the
 * instrumentation does its phase events, reads them the way they were written.
 */

// Epoch milliseconds are the monotonic clock plus an anchor that follows the wall clock: the anchor
// `performance.timeOrigin` gives is fixed at start-up, and the monotonic clock drifts from
// `Date.now()` over a long uptime (clock slewing, a suspended machine). The anchor is re-read at most
// once a second and moved only when the wall clock has left it by more than 2 ms, so that
// `Date.now()`'s whole milliseconds never jitter the moments of one hop.
let anchor = Date.now() - performance.now();
let anchorReadAt = performance.now();

/** Epoch milliseconds with sub-millisecond precision, comparable with `Date.now()`. */
export function timestamp(): number {
    const now = performance.now();
    if (now - anchorReadAt > 1000) {
        anchorReadAt = now;
        const wall = Date.now() - now;
        if (Math.abs(wall - anchor) > 2) {
            anchor = wall;
        }
    }

    return anchor + now;
}

/**
 * The monotonic clock's reading (`performance.now()`) at the epoch time `at` of a timings record:
 * OpenTelemetry places such a reading on a span's own timeline, which it anchors to the wall clock
 * when the span starts, so phase events line up with the span's start and end exactly.
 */
export function monotonicAt(at: number): number {
    return at - anchor;
}
