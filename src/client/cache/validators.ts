import type { CachedResponse } from '../contract/cache-store.js';
import { fieldValue, holdsExactly, hopByHopFields, withoutFields } from './fields.js';
import { ListMemo } from './list-memo.js';

/**
 * Validation (RFC 9111 4.3): the conditional fields that ask the origin whether a stored response
 * is still good, and the update of that response from the 304 that says it is.
 */

/**
 * `If-None-Match` / `If-Modified-Since` from the stored validators; empty when it has none. One frozen
 * record per stored field list, which never changes: each revalidation of a key read them again.
 */
export function conditionalFields(entry: CachedResponse): Readonly<Record<string, string>> {
    return conditionalOf.of(entry.rawHeaders, validatorsOf);
}

const conditionalOf = new ListMemo<Readonly<Record<string, string>>>();

function validatorsOf(rawHeaders: readonly string[]): Readonly<Record<string, string>> {
    const fields: Record<string, string> = {};
    const etag = fieldValue(rawHeaders, 'etag');
    if (etag !== undefined) {
        fields['if-none-match'] = etag;
    }

    const lastModified = fieldValue(rawHeaders, 'last-modified');
    if (lastModified !== undefined) {
        fields['if-modified-since'] = lastModified;
    }

    return Object.freeze(fields);
}

// 3.2: a 304's Content-Length describes no body: it never replaces the stored one (nor do the
// fields that describe how the stored body was sent).
const keptOn304 = new Set(['content-length', 'content-encoding', 'content-range', 'content-md5']);

/**
 * The stored response updated by a 304 (RFC 9111 3.2 and 4.3.4): each field the 304 carries replaces
 * every line of that field; the body, status and the other fields stay. The times are the 304's. (A 304
 * repeating one that updated the list is known before: `validatedBy304`.)
 */
export function updatedBy304(
    entry: CachedResponse,
    rawHeaders: readonly string[],
    requestTime: number,
    responseTime: number
): CachedResponse {
    return { ...entry, rawHeaders: merged(entry.rawHeaders, rawHeaders), requestTime, responseTime };
}

/**
 * The stored response as a 304 updates it (`updatedBy304`), or undefined when the 304 does not validate
 * it (`matches304`). A 304 that repeats, line for line, the lines of one that updated this list carries
 * the validator that one did: it needs no other look.
 */
export function validatedBy304(
    entry: CachedResponse,
    rawHeaders: readonly string[],
    requestTime: number,
    responseTime: number
): CachedResponse | undefined {
    const repeated = repeatedBy.get(entry.rawHeaders);
    if (repeated !== undefined && sameLines(repeated, rawHeaders)) {
        return { ...entry, requestTime, responseTime };
    }

    return matches304(entry, rawHeaders) ? updatedBy304(entry, rawHeaders, requestTime, responseTime) : undefined;
}

// The lines of a 304 found to repeat a stored list (below), per list, as they came: the next 304 with
// the same lines, name for name and value for value (a key revalidated many times a second gets the same
// 304 within the second), repeats it too, known without each name lower-cased and looked up again,
// which was most of what a 304's update cost. Written once per list.
const repeatedBy = new ListMemo<readonly string[]>();

function sameLines(a: readonly string[], b: readonly string[]): boolean {
    if (a.length !== b.length) {
        return false;
    }

    for (let i = 0; i < a.length; i++) {
        if (a[i] !== b[i]) {
            return false;
        }
    }

    return true;
}

/** The stored fields with those of the 304 in place of theirs: `stored` itself when the 304 changes none. */
function merged(stored: readonly string[], rawHeaders: readonly string[]): readonly string[] {
    const skip = hopByHopFields(rawHeaders);
    const added: string[] = [];
    // The lower-case name of each added line.
    const addedNames: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) {
        const name = rawHeaders[i]!.toLowerCase();
        if (!keptOn304.has(name) && !skip.has(name) && name !== 'cache-status') {
            added.push(rawHeaders[i]!, rawHeaders[i + 1]!);
            addedNames.push(name);
        }
    }

    // A 304 that repeats the stored fields line for line (a key revalidated many times a second gets
    // such: the same validators, directives and `Date` within the second) changes nothing: the stored
    // list stands, with what was worked out from it, which is kept per list (its directives, its age,
    // the fields of an answer).
    if (!holdsExactly(stored, added, addedNames)) {
        return [...withoutFields(stored, new Set(addedNames)), ...added];
    }

    // A copy: the 304's own list is its response's, which may change (its Cache-Status added).
    repeatedBy.set(stored, rawHeaders.slice());
    return stored;
}

/**
 * True when a 304 may update `entry` (4.3.4): its strong validator matches the stored one, or it
 * carries none and the stored response is the one validated.
 */
function matches304(entry: CachedResponse, rawHeaders: readonly string[]): boolean {
    const etag = fieldValue(rawHeaders, 'etag');
    // The stored one as the conditional fields kept it for the list (the ETag is `If-None-Match`'s value).
    return etag === undefined || etag === conditionalFields(entry)['if-none-match'];
}

/**
 * True when the caller's own `If-None-Match` / `If-Modified-Since` is met by a stored response
 * (RFC 9110 13.1.2, 13.1.3): the cache then answers 304 itself.
 */
export function satisfiesCallerCondition(
    entry: CachedResponse,
    ifNoneMatch: string | undefined,
    ifModifiedSince: string | undefined,
    parseDate: (value: string | undefined) => number | undefined
): boolean {
    if (ifNoneMatch !== undefined) {
        const etag = fieldValue(entry.rawHeaders, 'etag');
        if (etag === undefined) {
            return false;
        }

        const wanted = ifNoneMatch.trim();
        // Weak comparison (13.1.2): W/ prefixes do not matter.
        const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
        return wanted === '*' || wanted.split(',').some((tag) => opaque(tag) === opaque(etag));
    }

    const since = parseDate(ifModifiedSince);
    const lastModified = parseDate(fieldValue(entry.rawHeaders, 'last-modified'));
    return since !== undefined && lastModified !== undefined && lastModified <= since;
}
