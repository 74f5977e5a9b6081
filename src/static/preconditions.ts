import type { Request } from '@hapi/hapi';
import { headerOf } from './request-headers.js';

/** What the conditional headers of a request decide (RFC 9110 13.2.2). */
export type PreconditionOutcome = 'send' | 'not-modified' | 'precondition-failed';

/**
 * Only HEAD and conditional GETs can end without a body; for them a `stat` is enough at first, so a
 * 304 costs no open descriptor.
 */
export function needsBody(request: Request): boolean {
    if (request.method === 'head') {
        return false;
    }

    return request.method !== 'get' || !hasValidators(request);
}

/** Conditional headers count on GET and HEAD only; other methods get the resource as it is. */
export function hasPreconditions(request: Request): boolean {
    return (request.method === 'get' || request.method === 'head') && hasValidators(request);
}

function hasValidators(request: Request): boolean {
    const headers = request.headers;
    return (
        headers['if-none-match'] !== undefined ||
        headers['if-modified-since'] !== undefined ||
        headers['if-match'] !== undefined ||
        headers['if-unmodified-since'] !== undefined
    );
}

/**
 * RFC 9110 13.2.2: if-match, else if-unmodified-since; then if-none-match, else if-modified-since.
 * `alsoTag` is another strong tag of the same bytes the client may hold (a large file's identity tag
 * beside its hash, file-etag.ts), null when there is none.
 */
export function evaluatePreconditions(
    request: Request,
    etag: string | null,
    mtimeMs: number,
    alsoTag: string | null = null
): PreconditionOutcome {
    const modified = wholeSeconds(mtimeMs);

    const ifMatch = headerOf(request, 'if-match');
    if (ifMatch !== undefined) {
        if (!matchesTag(ifMatch, etag, false) && (alsoTag === null || !matchesTag(ifMatch, alsoTag, false))) {
            return 'precondition-failed';
        }
    } else {
        const ifUnmodifiedSince = headerOf(request, 'if-unmodified-since');
        // An absent or unparsable date (NaN) is no condition.
        if (ifUnmodifiedSince !== undefined && modified > Date.parse(ifUnmodifiedSince)) {
            return 'precondition-failed';
        }
    }

    const ifNoneMatch = headerOf(request, 'if-none-match');
    if (ifNoneMatch !== undefined) {
        return matchesTag(ifNoneMatch, etag, true) || (alsoTag !== null && matchesTag(ifNoneMatch, alsoTag, true))
            ? 'not-modified'
            : 'send';
    }

    const ifModifiedSince = headerOf(request, 'if-modified-since');
    return ifModifiedSince !== undefined && modified <= Date.parse(ifModifiedSince) ? 'not-modified' : 'send';
}

/**
 * `if-range` holds a strong entity tag or an HTTP date; only an exact match allows a partial response.
 * `alsoTag` as in `evaluatePreconditions`.
 */
export function ifRangeMatches(
    ifRange: string,
    etag: string | null,
    mtimeMs: number,
    alsoTag: string | null = null
): boolean {
    const value = ifRange.trim();
    if (value.startsWith('"') || value.startsWith('W/')) {
        return (etag !== null && value === `"${etag}"`) || (alsoTag !== null && value === `"${alsoTag}"`);
    }

    return Date.parse(value) === wholeSeconds(mtimeMs);
}

/** HTTP dates have whole seconds: a file's time is compared at that precision. */
function wholeSeconds(mtimeMs: number): number {
    return Math.floor(mtimeMs / 1000) * 1000;
}

/**
 * Compares a list of entity tags with ours (`tag`, without its quotes); the weak comparison ignores
 * `W/` (RFC 9110 8.8.3.2).
 */
function matchesTag(header: string, tag: string | null, weak: boolean): boolean {
    // The usual revalidation sends back exactly the one tag it was given: no list to split, no quoted
    // copy of the tag to build.
    if (tag !== null && isQuoted(header, tag)) {
        return true;
    }

    if (header.trim() === '*') {
        return true;
    }

    if (tag === null) {
        return false;
    }

    for (let candidate of header.split(',')) {
        candidate = candidate.trim();
        if (weak && candidate.startsWith('W/')) {
            candidate = candidate.slice(2);
        }

        if (isQuoted(candidate, tag)) {
            return true;
        }
    }

    return false;
}

/** True when `value` is `tag` in double quotes. */
function isQuoted(value: string, tag: string): boolean {
    return (
        value.length === tag.length + 2 &&
        value.charCodeAt(0) === doubleQuote &&
        value.charCodeAt(value.length - 1) === doubleQuote &&
        value.startsWith(tag, 1)
    );
}

const doubleQuote = 0x22;
