import type { IncomingHttpHeaders } from 'node:http';

/**
 * Header fields read from a raw list (name, value, name, value...), the form a stored response keeps
 * them in (`CachedResponse.rawHeaders`, contract/cache-store.ts): every line of a field, in order,
 * names compared case-insensitively.
 */
export function fieldLines(rawHeaders: readonly string[], name: string): string[] {
    const lines: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) {
        if (isName(rawHeaders[i]!, name)) {
            lines.push(rawHeaders[i + 1]!);
        }
    }

    return lines;
}

/**
 * True when the field name `raw`, as received, is `lower` (a lower-case name) in any case. Compared in
 * place: lower-casing every name of a response for each field a lookup reads made a string per name
 * per read, most of what reading a stored response's fields cost.
 */
function isName(raw: string, lower: string): boolean {
    if (raw.length !== lower.length) {
        return false;
    }

    for (let i = 0; i < raw.length; i++) {
        const char = raw.charCodeAt(i);
        // ASCII letters only: A-Z is a-z less 32; field names are tokens (RFC 9110 5.1).
        if ((char >= 65 && char <= 90 ? char + 32 : char) !== lower.charCodeAt(i)) {
            return false;
        }
    }

    return true;
}

/** A field's lines joined as one list value, or undefined when it is absent. */
export function fieldValue(rawHeaders: readonly string[], name: string): string | undefined {
    const lines = fieldLines(rawHeaders, name);
    return lines.length === 0 ? undefined : lines.join(', ');
}

/** The raw list without the fields `drop` names (lower-case). */
export function withoutFields(rawHeaders: readonly string[], drop: ReadonlySet<string>): string[] {
    const kept: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) {
        if (!drop.has(rawHeaders[i]!.toLowerCase())) {
            kept.push(rawHeaders[i]!, rawHeaders[i + 1]!);
        }
    }

    return kept;
}

/** The `headers` object Node gives a response for these raw fields: lower-case names, repeated lines joined, `set-cookie` an array. */
export function headersOf(rawHeaders: readonly string[]): IncomingHttpHeaders {
    const headers: Record<string, string | string[]> = {};
    for (let i = 0; i < rawHeaders.length; i += 2) {
        const name = rawHeaders[i]!.toLowerCase();
        const value = rawHeaders[i + 1]!;
        const existing = headers[name];
        if (name === 'set-cookie') {
            headers[name] = existing === undefined ? [value] : [...(existing as string[]), value];
        } else {
            headers[name] = existing === undefined ? value : `${existing}, ${value}`;
        }
    }

    return headers as IncomingHttpHeaders;
}

// The hop-by-hop fields of every message (RFC 9110 7.6.1), shared by the responses that name no others.
const hopByHop: ReadonlySet<string> = new Set([
    'connection',
    'keep-alive',
    'proxy-connection',
    'te',
    'transfer-encoding',
    'upgrade'
]);

/**
 * The fields a cache never stores or forwards from a stored response (RFC 9111 3.1): the hop-by-hop
 * ones and those `Connection` names.
 */
export function hopByHopFields(rawHeaders: readonly string[]): ReadonlySet<string> {
    let names = hopByHop;
    for (const line of fieldLines(rawHeaders, 'connection')) {
        for (const name of line.split(',')) {
            const lower = name.trim().toLowerCase();
            if (!names.has(lower)) {
                // A copy only for a name of its own: `Connection: keep-alive`, on most responses, adds none.
                names = names === hopByHop ? new Set(hopByHop) : names;
                (names as Set<string>).add(lower);
            }
        }
    }

    return names;
}
