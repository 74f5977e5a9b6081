// proxy-from-env ships no type declarations: this is the one function the client uses.
declare module 'proxy-from-env' {
    /** The proxy URL for `url` from HTTP(S)_PROXY / ALL_PROXY, or '' when none applies (NO_PROXY included). */
    export function getProxyForUrl(url: string | URL): string;
}
