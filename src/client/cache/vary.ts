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

/** What a stored response keeps of its request for `names` (store.ts `vary`): undefined when nothing varies. */
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
