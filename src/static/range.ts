import type { Request } from '@hapi/hapi';
import { type HttpError, rangeNotSatisfiable } from '../errors/index.js';
import { ifRangeMatches } from './preconditions.js';
import { headerOf } from './request-headers.js';

/** An inclusive byte range of a representation, as in `content-range: bytes from-to/size`. */
export interface ByteRange {
    from: number;
    to: number;
}

/**
 * What a `range` header asks of a representation of `size` bytes: one range to send as a 206,
 * `null` when the whole representation is sent instead (several disjoint ranges), or
 * `'unsatisfiable'` for a 416.
 */
export type RangeRequest = ByteRange | null | 'unsatisfiable';

/**
 * The part of a representation of `size` bytes a GET asks for with `range`: one range to send as
 * a 206, or null for the whole of it (no range, several disjoint ranges, or an `if-range` that no
 * longer matches, meaning the client's partial copy is stale). A range that cannot be met throws
 * the 416, with the `content-range` that tells the client the size. `alsoTag`: another strong tag of
 * the same bytes `if-range` may hold (preconditions.ts).
 */
export function requestedRange(
    request: Request,
    size: number,
    etag: string | null,
    mtimeMs: number,
    path: string,
    alsoTag: string | null = null
): ByteRange | null {
    const header = headerOf(request, 'range');
    if (request.method !== 'get' || header === undefined) {
        return null;
    }

    const ifRange = headerOf(request, 'if-range');
    if (ifRange !== undefined && !ifRangeMatches(ifRange, etag, mtimeMs, alsoTag)) {
        return null;
    }

    const range = parseRange(header, size);
    if (range === 'unsatisfiable') {
        const error: HttpError = rangeNotSatisfiable(null, { path });
        error.output.headers['content-range'] = `bytes */${size}`;
        throw error;
    }

    return range;
}

const rangeHeaderPattern = /^bytes=[\s,]*((?:\d+-\d*|-\d+)(?:\s*,\s*(?:\d+-\d*|-\d+))*)$/i;

/**
 * Parses a `range` header (RFC 9110 14.1.2). A header that cannot be parsed is unsatisfiable, as
 * hapi answers it for any other response; ranges that overlap or touch are merged, so two halves of
 * a file become one 206. Several disjoint ranges get the full 200 (a multipart reply is optional).
 */
export function parseRange(header: string, size: number): RangeRequest {
    const match = rangeHeaderPattern.exec(header);
    if (!match) {
        return 'unsatisfiable';
    }

    const last = size - 1;
    const ranges: ByteRange[] = [];
    for (const spec of match[1]!.split(',')) {
        const [first = '', second = ''] = spec.trim().split('-');
        let from: number;
        let to: number;
        if (first === '') {
            // A suffix range: the last N bytes.
            from = Math.max(size - Number(second), 0);
            to = last;
        } else {
            from = Number(first);
            to = second === '' ? last : Math.min(Number(second), last);
        }

        if (from > to) {
            return 'unsatisfiable';
        }

        ranges.push({ from, to });
    }

    const merged = mergeRanges(ranges);
    return merged.length === 1 ? merged[0]! : null;
}

function mergeRanges(ranges: ByteRange[]): ByteRange[] {
    if (ranges.length === 1) {
        return ranges;
    }

    const sorted = [...ranges].sort((a, b) => a.from - b.from);
    const merged: ByteRange[] = [{ ...sorted[0]! }];
    for (const range of sorted.slice(1)) {
        const previous = merged[merged.length - 1]!;
        if (range.from <= previous.to + 1) {
            previous.to = Math.max(previous.to, range.to);
        } else {
            merged.push({ ...range });
        }
    }

    return merged;
}
