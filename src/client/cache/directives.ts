import { BoundedMemo } from '../../common/bounded-memo.js';

/**
 * The `Cache-Control` directives the cache acts on (RFC 9111 section 5.2), read leniently: a cache
 * must make the best of what servers send, so a bad directive costs that directive, never the field.
 * (The client's public `parseCacheControl` is strict: it returns null for a malformed value.)
 */
export interface CacheDirectives {
    /** delta-seconds directives: the first occurrence wins; an invalid value reads as 0 (stale). */
    readonly maxAge: number | undefined;
    readonly sMaxage: number | undefined;
    /** `max-stale` without a value accepts any staleness: Infinity. */
    readonly maxStale: number | undefined;
    readonly minFresh: number | undefined;
    readonly staleWhileRevalidate: number | undefined;
    readonly staleIfError: number | undefined;
    readonly noStore: boolean;
    /** `no-cache` (true), or the field names of its qualified form (RFC 9111 5.2.2.4). */
    readonly noCache: boolean;
    readonly private: boolean;
    readonly public: boolean;
    readonly mustRevalidate: boolean;
    readonly proxyRevalidate: boolean;
    readonly onlyIfCached: boolean;
    readonly immutable: boolean;
    /** Store only a status whose caching rules the cache knows; `no-store` then gives way (5.2.2.3). */
    readonly mustUnderstand: boolean;
}

// RFC 9111 1.2.2: a delta-seconds too large to represent is taken as 2^31.
const maxDelta = 2_147_483_648;

const noDirectives: CacheDirectives = Object.freeze({
    maxAge: undefined,
    sMaxage: undefined,
    maxStale: undefined,
    minFresh: undefined,
    staleWhileRevalidate: undefined,
    staleIfError: undefined,
    noStore: false,
    noCache: false,
    private: false,
    public: false,
    mustRevalidate: false,
    proxyRevalidate: false,
    onlyIfCached: false,
    immutable: false,
    mustUnderstand: false
});

/**
 * The directives of a `Cache-Control` field (its lines joined); all absent for undefined. One object
 * per field value, kept: a server sends the same few values on every response, and a 304's update or a
 * stored response read back from a shared store makes a new field list each time, which parsed the
 * value again (a sixth of a revalidation's instructions).
 */
export function parseDirectives(field: string | readonly string[] | undefined): CacheDirectives {
    const text = typeof field === 'string' ? field : field === undefined ? '' : field.join(',');
    if (text === '') {
        // Most requests carry no Cache-Control: one shared answer for them.
        return noDirectives;
    }

    return parsedValues.get(text) ?? parsedValues.set(text, parseText(text));
}

// Bounded: the values come from servers; a flood of distinct ones costs memory once (bounded-memo.ts).
const parsedValues = new BoundedMemo<string, CacheDirectives>(1000);

function parseText(text: string): CacheDirectives {
    const values = new Map<string, string | true>();
    for (const item of splitList(text)) {
        const equals = item.indexOf('=');
        const name = (equals === -1 ? item : item.slice(0, equals)).trim().toLowerCase();
        if (name === '' || values.has(name)) {
            continue;
        }

        values.set(name, equals === -1 ? true : unquote(item.slice(equals + 1)));
    }

    return Object.freeze({
        maxAge: seconds(values.get('max-age')),
        sMaxage: seconds(values.get('s-maxage')),
        maxStale: values.get('max-stale') === true ? Number.POSITIVE_INFINITY : seconds(values.get('max-stale')),
        minFresh: seconds(values.get('min-fresh')),
        staleWhileRevalidate: seconds(values.get('stale-while-revalidate')),
        staleIfError: seconds(values.get('stale-if-error')),
        noStore: values.has('no-store'),
        noCache: values.has('no-cache'),
        private: values.has('private'),
        public: values.has('public'),
        mustRevalidate: values.has('must-revalidate'),
        proxyRevalidate: values.has('proxy-revalidate'),
        onlyIfCached: values.has('only-if-cached'),
        immutable: values.has('immutable'),
        mustUnderstand: values.has('must-understand')
    });
}

/** The members of a comma-separated list, commas inside a quoted string kept. */
export function splitList(text: string): string[] {
    const items: string[] = [];
    let start = 0;
    let quoted = false;
    for (let i = 0; i < text.length; i++) {
        const char = text.charCodeAt(i);
        if (char === 34) {
            quoted = !quoted;
        } else if (char === 92 && quoted) {
            i++;
        } else if (char === 44 && !quoted) {
            items.push(text.slice(start, i).trim());
            start = i + 1;
        }
    }

    items.push(text.slice(start).trim());
    return items.filter((item) => item !== '');
}

function unquote(value: string): string {
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"')
        ? value.slice(1, -1).replace(/\\(.)/g, '$1')
        : value;
}

/** A delta-seconds value; a directive present with a value that is not one reads as 0, so it never extends freshness. */
function seconds(value: string | true | undefined): number | undefined {
    if (value === undefined) {
        return undefined;
    }

    if (value === true || !/^\d+$/.test(value)) {
        return 0;
    }

    return Math.min(Number.parseInt(value, 10), maxDelta);
}
