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
    // Joined as it is read: no list made for the one line most fields have.
    let value: string | undefined;
    for (let i = 0; i < rawHeaders.length; i += 2) {
        if (isName(rawHeaders[i]!, name)) {
            value = value === undefined ? rawHeaders[i + 1]! : `${value}, ${rawHeaders[i + 1]!}`;
        }
    }

    return value;
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
    for (let i = 0; i < rawHeaders.length; i += 2) {
        if (!isName(rawHeaders[i]!, 'connection')) {
            continue;
        }

        for (const name of rawHeaders[i + 1]!.split(',')) {
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

// The most lines `holdsExactly` compares: its walk is quadratic in them, and a response of a few dozen
// fields is the usual; past that (a hostile server's thousand lines) it answers false at once.
const comparedLines = 64;

/**
 * True when `stored` holds, for each name of `lines` (name, value, name, value... with `names` their
 * lower-case names), exactly those lines of it, in their order: no line more, none fewer, none other.
 * False, without comparing, past `comparedLines` lines on either side.
 */
export function holdsExactly(stored: readonly string[], lines: readonly string[], names: readonly string[]): boolean {
    if (names.length > comparedLines || stored.length > 2 * comparedLines) {
        return false;
    }

    for (let first = 0; first < names.length; first++) {
        const name = names[first]!;
        if (names.indexOf(name) < first) {
            // Its lines were compared with the name's first line.
            continue;
        }

        // The index (in `names`) of the next line of `name` the stored lines must match, or -1 past its last.
        let next = first;
        for (let i = 0; i < stored.length; i += 2) {
            if (isName(stored[i]!, name)) {
                if (next === -1 || stored[i + 1] !== lines[2 * next + 1]) {
                    return false;
                }

                next = names.indexOf(name, next + 1);
            }
        }

        if (next !== -1) {
            return false;
        }
    }

    return true;
}
