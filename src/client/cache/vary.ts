import { splitList } from './directives.js';
import { fieldLines } from './fields.js';

/** The request headers as the client sends them: lower-case names. */
export type RequestHeaders = Readonly<Record<string, string | number | readonly string[]>>;

/** The lower-case field names a response's `Vary` lists; `['*']` for a response that matches no later request. */
export function varyNames(rawHeaders: readonly string[]): string[] {
    const names = new Set<string>();
    for (const line of fieldLines(rawHeaders, 'vary')) {
        for (const name of splitList(line)) {
            names.add(name.toLowerCase());
        }
    }

    return names.has('*') ? ['*'] : [...names];
}

/** What a stored response keeps of its request for `names` (`CachedResponse.vary`): undefined when nothing varies. */
export function varyValues(
    names: readonly string[],
    headers: RequestHeaders
): Record<string, string | undefined> | undefined {
    if (names.length === 0) {
        return undefined;
    }

    const values: Record<string, string | undefined> = {};
    for (const name of names) {
        values[name] = normalized(headers[name]);
    }

    return values;
}

/** True when the request presents the same values as the one that got a stored response (RFC 9111 4.1). */
export function varyMatches(
    stored: Readonly<Record<string, string | undefined>> | undefined,
    headers: RequestHeaders
): boolean {
    if (stored === undefined) {
        return true;
    }

    for (const name in stored) {
        if (name === '*' || stored[name] !== normalized(headers[name])) {
            return false;
        }
    }

    return true;
}

// Values are compared after joining lines and dropping the whitespace around list members (4.1).
function normalized(value: string | number | readonly string[] | undefined): string | undefined {
    if (value === undefined) {
        return undefined;
    }

    const text = Array.isArray(value) ? value.join(',') : String(value);
    return text
        .split(',')
        .map((member) => member.trim())
        .join(',');
}

/**
 * One text per set of vary values whatever the order of their names (a store's key for a variant, so
 * the same variant is found and replaced): a header the request did not have is null, apart from one
 * sent empty. `varyRecord` reads it back.
 */
export function varyText(vary: Readonly<Record<string, string | undefined>>): string {
    const pairs = Object.keys(vary)
        .sort()
        .map((name) => [name, vary[name] ?? null]);
    return JSON.stringify(pairs);
}

/** The vary values a `varyText` holds. */
export function varyRecord(text: string): Record<string, string | undefined> {
    const vary: Record<string, string | undefined> = {};
    for (const [name, value] of JSON.parse(text) as [string, string | null][]) {
        vary[name] = value ?? undefined;
    }

    return vary;
}
