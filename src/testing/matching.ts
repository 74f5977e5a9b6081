import { isDeepStrictEqual } from 'node:util';
import type { InterceptOptions, TextMatcher } from './types.js';

/**
 * How an interceptor's `InterceptOptions` compare with a request (docs/testing.md, "Matching"): each
 * field gives the reason it does not match, in words, so that an unmatched request can name the
 * closest interceptor and what differs.
 */

/** What a request's head says, for the matching: everything but the body. */
export interface RequestHead {
    readonly method: string;
    readonly origin: string;
    /** The path with its query. */
    readonly path: string;
    readonly pathname: string;
    readonly query: URLSearchParams;
    /** Lower-case names; a repeated header's values joined with `, `. */
    readonly headers: Readonly<Record<string, string>>;
}

/** The fields of a request an interceptor compares, worth more the more they say which interceptor a test meant. */
const fieldWeights = { origin: 8, method: 4, path: 4, query: 2, headers: 1, body: 1 } as const;
type Field = keyof typeof fieldWeights;

/** A field that differs, and why. */
export interface Mismatch {
    readonly field: Field;
    readonly reason: string;
}

/** The fields of the request's head that `options` does not match (the body apart). */
export function headMismatches(options: InterceptOptions, head: RequestHead): Mismatch[] {
    const found: Mismatch[] = [];
    if (!matchesText(options.origin, head.origin)) {
        found.push({ field: 'origin', reason: `origin ${head.origin} is not ${describeMatcher(options.origin)}` });
    }

    const method = options.method ?? 'GET';
    if (!(typeof method === 'string' ? method.toUpperCase() === head.method : matchesText(method, head.method))) {
        found.push({ field: 'method', reason: `method ${head.method} is not ${describeMatcher(method)}` });
    }

    const path = options.path;
    if (path !== undefined && !pathMatches(path, head)) {
        found.push({ field: 'path', reason: `path ${head.path} is not ${describeMatcher(path)}` });
    }

    const query = options.query === undefined ? undefined : queryMismatch(options.query, head.query);
    if (query !== undefined) {
        found.push({ field: 'query', reason: query });
    }

    const headers = options.headers === undefined ? undefined : headersMismatch(options.headers, head.headers);
    if (headers !== undefined) {
        found.push({ field: 'headers', reason: headers });
    }

    return found;
}

/** Why `body` does not match the interceptor's `body`, or undefined when it does. */
export function bodyMismatch(expected: InterceptOptions['body'], body: Buffer): Mismatch | undefined {
    if (expected === undefined || bodyMatches(expected, body)) {
        return undefined;
    }

    const text = body.toString('utf8');
    const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
    return { field: 'body', reason: `body ${JSON.stringify(shown)} is not ${describeBody(expected)}` };
}

/** How close a request came to an interceptor: the weight of the fields that matched. */
export function closeness(mismatches: readonly Mismatch[]): number {
    let score = 0;
    for (const field of Object.keys(fieldWeights) as Field[]) {
        if (!mismatches.some((mismatch) => mismatch.field === field)) {
            score += fieldWeights[field];
        }
    }

    return score;
}

/** An interceptor's request, in words: `GET https://api.example.com/users/1`. */
export function describeIntercept(options: InterceptOptions): string {
    const method = options.method ?? 'GET';
    const origin = typeof options.origin === 'string' ? options.origin : describeMatcher(options.origin);
    const path = options.path === undefined ? ' (any path)' : describePath(options.path);
    const query = options.query === undefined ? '' : ` query ${describeQuery(options.query)}`;
    const body = options.body === undefined ? '' : ` with body ${describeBody(options.body)}`;
    return `${typeof method === 'string' ? method.toUpperCase() : describeMatcher(method)} ${origin}${path}${query}${body}`;
}

function describePath(path: TextMatcher): string {
    return typeof path === 'string' ? path : ` ${describeMatcher(path)}`;
}

function describeQuery(query: NonNullable<InterceptOptions['query']>): string {
    if (typeof query === 'function') {
        return describeMatcher(query);
    }

    return Object.entries(query)
        .map(
            ([name, value]) =>
                `${name}=${Array.isArray(value) ? value.join(',') : describeMatcher(value as TextMatcher)}`
        )
        .join('&');
}

function describeBody(body: NonNullable<InterceptOptions['body']>): string {
    if (typeof body === 'string') {
        return JSON.stringify(body);
    }

    if (Buffer.isBuffer(body)) {
        return `<${body.length} bytes>`;
    }

    if (body instanceof RegExp || typeof body === 'function') {
        return describeMatcher(body as TextMatcher);
    }

    return `JSON ${JSON.stringify(body)}`;
}

function describeMatcher(matcher: string | RegExp | Function): string {
    if (typeof matcher === 'string') {
        return matcher;
    }

    return matcher instanceof RegExp ? String(matcher) : `what ${matcher.name || 'a function'} accepts`;
}

export function matchesText(matcher: TextMatcher, value: string): boolean {
    if (typeof matcher === 'string') {
        return matcher === value;
    }

    if (matcher instanceof RegExp) {
        // A global or sticky RegExp keeps a position between tests: each match starts afresh.
        matcher.lastIndex = 0;
        return matcher.test(value);
    }

    return matcher(value) === true;
}

function pathMatches(path: TextMatcher, head: RequestHead): boolean {
    if (typeof path === 'string') {
        return path.includes('?') ? samePathAndQuery(path, head) : path === head.pathname;
    }

    return matchesText(path, head.path);
}

/** `/a?x=1&y=2` against the path sent: the same path, and the same parameters in any order. */
function samePathAndQuery(expected: string, head: RequestHead): boolean {
    const at = expected.indexOf('?');
    if (expected.slice(0, at) !== head.pathname) {
        return false;
    }

    const wanted = [...new URLSearchParams(expected.slice(at + 1))].map(String).sort();
    const sent = [...head.query].map(String).sort();
    return isDeepStrictEqual(wanted, sent);
}

function queryMismatch(query: NonNullable<InterceptOptions['query']>, sent: URLSearchParams): string | undefined {
    if (typeof query === 'function') {
        return query(sent) === true ? undefined : `query ?${sent} is not ${describeMatcher(query)}`;
    }

    for (const [name, expected] of Object.entries(query)) {
        const values = sent.getAll(name);
        const matches = Array.isArray(expected)
            ? isDeepStrictEqual(values, [...expected])
            : values.length > 0 && values.every((value) => matchesText(expected as TextMatcher, value));
        if (!matches) {
            const got = values.length === 0 ? 'missing' : values.join(',');
            return `query ${name} is ${got}, not ${describeQuery({ [name]: expected })}`;
        }
    }

    return undefined;
}

function headersMismatch(
    expected: NonNullable<InterceptOptions['headers']>,
    sent: Readonly<Record<string, string>>
): string | undefined {
    if (typeof expected === 'function') {
        return expected(sent) === true ? undefined : `headers are not ${describeMatcher(expected)}`;
    }

    for (const [name, matcher] of Object.entries(expected)) {
        const value = sent[name.toLowerCase()];
        if (value === undefined || !matchesText(matcher, value)) {
            const got = value === undefined ? 'missing' : JSON.stringify(value);
            return `header ${name.toLowerCase()} is ${got}, not ${describeMatcher(matcher)}`;
        }
    }

    return undefined;
}

function bodyMatches(expected: NonNullable<InterceptOptions['body']>, body: Buffer): boolean {
    if (typeof expected === 'string') {
        return body.toString('utf8') === expected;
    }

    if (Buffer.isBuffer(expected)) {
        return body.equals(expected);
    }

    if (expected instanceof RegExp || typeof expected === 'function') {
        return matchesText(expected as TextMatcher, body.toString('utf8'));
    }

    try {
        return isDeepStrictEqual(JSON.parse(body.toString('utf8')), expected);
    } catch {
        return false;
    }
}
