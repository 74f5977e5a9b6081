import type { Timings } from '../src/client/contract/timings.js';

export interface WaterfallOptions {
    /** The label on the first line. */
    label?: string;
    /** Columns the whole hop spans. */
    width?: number;
    /** Milliseconds per column, to share one scale between hops. */
    scale?: number;
}

export function renderWaterfall(timings: Timings, options?: WaterfallOptions): string[];
export function renderWaterfalls(
    hops: readonly { label: string; timings: Timings }[],
    options?: { width?: number }
): string[];
