/**
 * The `token` of HTTP's grammar (RFC 9110, section 5.6.2): method names, header field names, auth
 * schemes and the names and bare values of cache directives are all tokens.
 */
export const tokenSource = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";

const token = new RegExp(`^${tokenSource}$`);

/** True when `value` is one whole token. */
export function isToken(value: string): boolean {
    return token.test(value);
}
