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
 * The ranges of a representation of `size` bytes a GET asks for with `range`: sorted, those that
 * overlap or touch merged into one, so one range is a 206 and several are the parts of a multipart
 * 206 (multipart-ranges.ts decides how they are sent). Null for the whole of it: no range, or an
 * `if-range` that no longer matches (the client's partial copy is stale). A set no range of which can
 * be met throws the 416, with the `content-range` that tells the client the size. `alsoTag`: another
 * strong tag of the same bytes `if-range` may hold (preconditions.ts).
 */
export function requestedRanges(
    request: Request,
    size: number,
    etag: string | null,
    mtimeMs: number,
    path: string,
    alsoTag: string | null = null
): ByteRange[] | null {
    const header = headerOf(request, 'range');
    if (request.method !== 'get' || header === undefined) {
        return null;
    }

    const ifRange = headerOf(request, 'if-range');
    if (ifRange !== undefined && !ifRangeMatches(ifRange, etag, mtimeMs, alsoTag)) {
        return null;
    }

    const ranges = parseRange(header, size);
    if (ranges === 'unsatisfiable') {
        const error: HttpError = rangeNotSatisfiable(null, { path });
        error.output.headers['content-range'] = `bytes */${size}`;
        throw error;
    }

    return ranges;
}

const rangeUnit = /^bytes=/i;
const rangeSpec = /^(?:(\d+)-(\d*)|-(\d+))$/;

/**
 * Parses a `range` header (RFC 9110 14.1.2) for a representation of `size` bytes (at least one). A
 * header that cannot be parsed is unsatisfiable, as hapi answers it for any other response. Ranges
 * that cannot be met (starting past the end, `-0`, or last before first) are left out, as nginx does,
 * and the set is unsatisfiable only when none is left (RFC 9110 14.1.1). Ranges that overlap or touch
 * are merged, so two halves of a file become one range and no byte is asked for twice.
 */
export function parseRange(header: string, size: number): ByteRange[] | 'unsatisfiable' {
    if (!rangeUnit.test(header)) {
        return 'unsatisfiable';
    }

    const last = size - 1;
    const ranges: ByteRange[] = [];
    for (const element of header.slice(6).split(',')) {
        const spec = element.trim();
        if (spec === '') {
            // Empty list elements are allowed (RFC 9110 5.6.1).
            continue;
        }

        const match = rangeSpec.exec(spec);
        if (match === null) {
            return 'unsatisfiable';
        }

        const [, first, second, suffix] = match;
        const range: ByteRange =
            suffix !== undefined
                ? { from: Math.max(size - Number(suffix), 0), to: last }
                : { from: Number(first), to: second === '' ? last : Math.min(Number(second), last) };
        if (range.from <= range.to) {
            ranges.push(range);
        }
    }

    return ranges.length === 0 ? 'unsatisfiable' : mergeRanges(ranges);
}

/** The ranges sorted, with those that overlap or touch merged. */
function mergeRanges(ranges: ByteRange[]): ByteRange[] {
    if (ranges.length === 1) {
        return ranges;
    }

    const sorted = [...ranges].sort((a, b) => a.from - b.from);
    const merged: ByteRange[] = [sorted[0]!];
    for (const range of sorted.slice(1)) {
        const previous = merged[merged.length - 1]!;
        if (range.from <= previous.to + 1) {
            previous.to = Math.max(previous.to, range.to);
        } else {
            merged.push(range);
        }
    }

    return merged;
}
