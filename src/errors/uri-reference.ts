/**
 * URI references (RFC 3986, section 4.1), as a problem document carries them in `type` and
 * `instance`: the problem-details plugin sends only these, and the reader keeps only these.
 */

/** Every character a URI reference may hold as it is; anything else travels percent-encoded. */
const uriCharacters = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;
const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/;
/** A relative reference whose first segment holds a colon would read as a scheme. */
const colonInFirstSegment = /^[^/?#]*:/;
const authorityAndRest = /^(?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/[^/?#]*(.*)$/s;

/**
 * True for a non-empty URI reference: absolute (`https://example.com/probs/x`, `about:blank`) or
 * relative (`/orders/7`, `out-of-credit`). Brackets belong to an IP literal of the authority only;
 * a fragment holds no second `#`.
 */
export function isUriReference(value: string): boolean {
    if (!uriCharacters.test(value)) {
        return false;
    }

    if (!scheme.test(value) && colonInFirstSegment.test(value)) {
        return false;
    }

    if (value.indexOf('#') !== value.lastIndexOf('#')) {
        return false;
    }

    if (value.includes('[') || value.includes(']')) {
        const rest = authorityAndRest.exec(value)?.[1];
        return rest !== undefined && !rest.includes('[') && !rest.includes(']');
    }

    return true;
}

/** True when the reference names its scheme (`https:`, `urn:`, `about:`): nothing to resolve it against. */
export function isAbsoluteUri(value: string): boolean {
    return scheme.test(value);
}

/** What a path segment may hold as it is (RFC 3986 `pchar`) besides `/`: the rest is percent-encoded. */
const notPathCharacter = /%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/gu;

/**
 * `path` made a URI reference: every character a path cannot carry as it is (a space, `|`, `?`, a
 * non-ASCII letter, a `%` that starts no escape) percent-encoded as UTF-8. hapi's `request.path`
 * is already encoded for most of them, but not all, and a request whose URL hapi could not parse
 * keeps its raw target there.
 */
export function encodePath(path: string): string {
    return path.replace(notPathCharacter, (character) => {
        let encoded = '';
        for (const byte of Buffer.from(character, 'utf8')) {
            encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
        }

        return encoded;
    });
}
