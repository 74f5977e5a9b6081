/**
 * Characters a path segment may carry as they are (RFC 3986 pchar, plus `%` of the escapes already
 * there): nothing among them can start an authority once the path has a single leading slash.
 */
const segmentSafe = /[A-Za-z0-9\-._~!$&'()*+,;=:@%]/;

/** A decoded segment holding one of these is never echoed into a location: separators and controls. */
function hasSeparatorOrControl(decoded: string): boolean {
    for (let index = 0; index < decoded.length; ++index) {
        const code = decoded.charCodeAt(index);
        if (code <= 0x1f || code === 0x7f || code === 0x2f || code === 0x5c) {
            return true;
        }
    }

    return false;
}

/**
 * The request path as a same-origin absolute path for a `location` header or a listing link, or
 * null when it cannot be made one. Browsers read `//host`, `/\host` and tab- or newline-spliced
 * variants of them as another origin, so a path with an empty segment, an encoded or raw slash or
 * backslash, an encoded control character or a dot segment is refused outright rather than
 * repaired: whoever sent it is not following a link of this server. Whatever else is not a plain
 * path character is percent-encoded, so the result always starts with exactly one `/`.
 */
export function sameOriginPath(pathname: string): string | null {
    if (!pathname.startsWith('/')) {
        return null;
    }

    const segments = pathname.slice(1).split('/');
    const last = segments.length - 1;
    const safe: string[] = [];
    for (let index = 0; index <= last; ++index) {
        const segment = segments[index]!;
        if (segment === '') {
            // Only the final segment may be empty: that is the trailing slash itself.
            if (index !== last) {
                return null;
            }

            safe.push('');
            continue;
        }

        let decoded: string;
        try {
            decoded = decodeURIComponent(segment);
        } catch {
            return null;
        }

        if (decoded === '.' || decoded === '..' || hasSeparatorOrControl(decoded)) {
            return null;
        }

        const encoded = encodeUnsafe(segment);
        if (encoded === null) {
            return null;
        }

        safe.push(encoded);
    }

    return `/${safe.join('/')}`;
}

/**
 * Percent-encodes (as UTF-8) every character of a segment that is not a plain path character; null
 * for a lone surrogate, which has no UTF-8 form.
 */
function encodeUnsafe(segment: string): string | null {
    let encoded = '';
    for (const char of segment) {
        if (segmentSafe.test(char)) {
            encoded += char;
        } else if (char.length === 1 && char >= '\ud800' && char <= '\udfff') {
            return null;
        } else {
            encoded += encodeURIComponent(char);
        }
    }

    return encoded;
}
