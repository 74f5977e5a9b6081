import { tokenSource } from '../../common/http-token.js';

/** Directives of a `cache-control` header: `true` for flags, a number for delta-seconds, else the string value. */
export type CacheControl = Record<string, string | number | boolean>;

// The directives whose value is a number of seconds (RFC 9111 5.2).
const numericDirectives = new Set([
    'max-age',
    's-maxage',
    'max-stale',
    'min-fresh',
    'stale-while-revalidate',
    'stale-if-error'
]);

// One directive: a token name, optionally `=` and a token or a quoted string, then a comma or the end.
const directive = new RegExp(
    String.raw`[ \t]*(${tokenSource})(?:=(?:(${tokenSource})|"((?:[^"\\]|\\.)*)"))?[ \t]*(?:,|$)`,
    'y'
);

/**
 * Parses a `cache-control` header value into one property per directive (lower-cased names).
 * Returns null for a malformed value rather than throwing: headers come from other servers.
 */
export function parseCacheControl(field: string): CacheControl | null {
    if (typeof field !== 'string') {
        return null;
    }

    const result: CacheControl = {};
    directive.lastIndex = 0;
    while (directive.lastIndex < field.length) {
        const start = directive.lastIndex;
        const match = directive.exec(field);
        if (match === null || directive.lastIndex === start) {
            return null;
        }

        const name = match[1]!.toLowerCase();
        const value = match[2] ?? match[3]?.replace(/\\(.)/g, '$1');
        if (name === '__proto__') {
            return null;
        }

        if (value === undefined) {
            result[name] = true;
        } else if (numericDirectives.has(name)) {
            if (!/^\d+$/.test(value)) {
                return null;
            }

            result[name] = Number.parseInt(value, 10);
        } else {
            result[name] = value;
        }
    }

    return result;
}
