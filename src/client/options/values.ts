/** True for a non-negative integer: a count, a size in bytes or a time in milliseconds. */
export function isCount(value: unknown): boolean {
    return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/**
 * Credentials are sent decoded (in the `authorization` header, or by a proxy agent): a URL whose
 * user name or password is a malformed escape cannot be used.
 */
export function hasDecodableCredentials(url: URL): boolean {
    try {
        decodeURIComponent(url.username);
        decodeURIComponent(url.password);
        return true;
    } catch {
        return false;
    }
}

/**
 * True for an option that is off unless given: `true` or an object of settings turns it on, `false` (or
 * not set) leaves it off — `cache` and `http2`.
 */
export function isOn<T>(option: T | false | null | undefined): option is T {
    return option !== undefined && option !== null && option !== false;
}
