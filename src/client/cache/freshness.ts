import type { CachedResponse } from '../contract/cache-store.js';
import type { CacheDirectives } from './directives.js';
import { fieldLines } from './fields.js';
import { parseHttpDate } from './http-date.js';
import { ListMemo } from './list-memo.js';

/** How a stored response stands at a given time (RFC 9111 4.2), in seconds. */
export interface Freshness {
    /** The response's current age (4.2.3). */
    age: number;
    /** Its freshness lifetime (4.2.1). */
    lifetime: number;
}

// RFC 9111 4.2.2: statuses a cache may give a heuristic lifetime without explicit freshness.
const heuristicallyCacheable = new Set([200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]);

// An Age that cannot be read makes the response as old as can be: stale, never fresher than it is.
const unreadableAge = 2_147_483_648;

// A heuristic lifetime is 10% of the time since Last-Modified (4.2.2), capped at a day.
const heuristicFraction = 0.1;
const heuristicCap = 86_400;

/** The age and freshness lifetime of `entry` at `now` (epoch ms); `shared` lets `s-maxage` apply. */
export function freshnessOf(
    entry: CachedResponse,
    directives: CacheDirectives,
    shared: boolean,
    now: number
): Freshness {
    return { age: currentAge(entry, now), lifetime: freshnessLifetime(entry, directives, shared) };
}

/** RFC 9111 4.2.3: what the origin and caches before us say, corrected by the round trip, plus the time stored. */
export function currentAge(entry: CachedResponse, now: number): number {
    // Worked out each time from what is kept per field list: an entry a 304 updated is a new object on
    // the same list, and a memo per entry object cost a weak map's write for each (which every young
    // collection then had to visit).
    const { date, age } = ageFieldsOf(entry.rawHeaders);
    const responseTime = entry.responseTime;
    const apparentAge = Math.max(0, responseTime - (date ?? responseTime)) / 1000;
    const responseDelay = (responseTime - entry.requestTime) / 1000;
    const initialAge = Math.max(apparentAge, age + responseDelay);
    return initialAge + (now - responseTime) / 1000;
}

/** What the age of a response is worked out from in its fields: `Date` (epoch ms) and `Age` (seconds). */
interface AgeFields {
    readonly date: number | undefined;
    readonly age: number;
}

// Read once per field list: a 304 that repeats the stored fields makes a new entry (new times) on the
// same list (validators.ts).
const ageFields = new ListMemo<AgeFields>();

function ageFieldsOf(rawHeaders: readonly string[]): AgeFields {
    return ageFields.of(rawHeaders, readAgeFields);
}

function readAgeFields(rawHeaders: readonly string[]): AgeFields {
    return { date: parseHttpDate(fieldLines(rawHeaders, 'date')[0]), age: ageValue(rawHeaders) };
}

/** RFC 9111 4.2.1: s-maxage (shared caches), max-age, Expires - Date, else the Last-Modified heuristic. */
export function freshnessLifetime(entry: CachedResponse, directives: CacheDirectives, shared: boolean): number {
    if (shared && directives.sMaxage !== undefined) {
        return directives.sMaxage;
    }

    if (directives.maxAge !== undefined) {
        return directives.maxAge;
    }

    const raw = entry.rawHeaders;
    const expiresLines = fieldLines(raw, 'expires');
    const date = ageFieldsOf(raw).date ?? entry.responseTime;
    if (expiresLines.length > 0) {
        // An invalid Expires (or several) means already expired (5.3).
        const expires = expiresLines.length === 1 ? parseHttpDate(expiresLines[0]) : undefined;
        return expires === undefined ? 0 : Math.max(0, (expires - date) / 1000);
    }

    const lastModified = parseHttpDate(fieldLines(raw, 'last-modified')[0]);
    if (lastModified !== undefined && (heuristicallyCacheable.has(entry.statusCode) || directives.public)) {
        return Math.min(heuristicCap, Math.max(0, ((date - lastModified) / 1000) * heuristicFraction));
    }

    return 0;
}

/** True when the status may be stored on a heuristic lifetime (RFC 9111 4.2.2). */
export function isHeuristicallyCacheable(statusCode: number): boolean {
    return heuristicallyCacheable.has(statusCode);
}

/**
 * The Age field as seconds: one line of digits. Anything else (a list, several lines) is read as
 * unreadable, so stale: never fresher than it might be (RFC 9111 5.1; docs/cache.md).
 */
function ageValue(rawHeaders: readonly string[]): number {
    const lines = fieldLines(rawHeaders, 'age');
    if (lines.length === 0) {
        return 0;
    }

    const value = lines[0]!.trim();
    return lines.length === 1 && /^\d+$/.test(value) ? Math.min(Number(value), unreadableAge) : unreadableAge;
}
