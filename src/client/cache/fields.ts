import type { IncomingHttpHeaders } from 'node:http';

/**
 * Header fields read from a raw list (name, value, name, value...), the form a stored response keeps
 * them in (`CachedResponse.rawHeaders`, contract/cache-store.ts): every line of a field, in order,
 * names compared case-insensitively.
 */
export function fieldLines(rawHeaders: readonly string[], name: string): string[] {
    const lines: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) {
        if (rawHeaders[i]!.toLowerCase() === name) {
            lines.push(rawHeaders[i + 1]!);
        }
    }

    return lines;
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

/**
 * The fields a cache never stores or forwards from a stored response (RFC 9111 3.1): the hop-by-hop
 * ones and those `Connection` names.
 */
export function hopByHopFields(rawHeaders: readonly string[]): Set<string> {
    const names = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'transfer-encoding', 'upgrade']);
    for (const line of fieldLines(rawHeaders, 'connection')) {
        for (const name of line.split(',')) {
            names.add(name.trim().toLowerCase());
        }
    }

    return names;
}
