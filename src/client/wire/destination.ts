import { BoundedMemo } from '../../common/bounded-memo.js';
import type { HttpError } from '../../errors/index.js';
import { invalidOption } from '../contract/errors.js';
import { hasDecodableCredentials } from '../options/values.js';

/** Where a request goes, in the shape `http(s).request()` needs. Never mutated once made: it may be cached. */
export interface Destination {
    readonly href: string;
    readonly origin: string;
    readonly isHttps: boolean;
    readonly protocol: string;
    /** Without the brackets a URL keeps around an IPv6 literal. */
    readonly hostname: string;
    readonly port: number;
    /** Path and query. */
    readonly path: string;
    /** `user:password` from the URL, decoded, when it has credentials. */
    readonly auth: string | undefined;
}

export function destinationOf(url: URL): Destination {
    const isHttps = url.protocol === 'https:';
    const hostname = url.hostname;
    return {
        href: url.href,
        origin: url.origin,
        isHttps,
        protocol: url.protocol,
        hostname: hostname.charCodeAt(0) === 91 ? hostname.slice(1, -1) : hostname,
        port: url.port === '' ? (isHttps ? 443 : 80) : Number(url.port),
        path: url.pathname + url.search,
        auth:
            url.username === '' && url.password === ''
                ? undefined
                : `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
    };
}

/** The destination's host as a URL or an authority writes it (RFC 3986 3.2.2): an IPv6 literal in brackets. */
export function authorityHostOf(destination: Destination): string {
    const hostname = destination.hostname;
    return hostname.includes(':') ? `[${hostname}]` : hostname;
}

/** Resolves the request URI (against `baseUrl` when given) or explains why it cannot be used. */
export function resolveUri(uri: unknown, baseUrl: string | undefined): URL | HttpError {
    if (baseUrl !== undefined && typeof uri !== 'string') {
        return invalidOption('Option baseUrl requires the request uri to be a string');
    }

    let url: URL;
    try {
        if (typeof uri === 'string') {
            url = new URL(uri, baseUrl);
        } else if (uri instanceof URL) {
            // A copy: with events the client adds method, headers and redirectCount to it.
            url = new URL(uri.href);
        } else {
            return invalidOption(`Request uri must be a string or a URL, got ${typeof uri}`);
        }
    } catch {
        const base = baseUrl === undefined ? '' : ` against baseUrl ${JSON.stringify(baseUrl)}`;
        return invalidOption(`Request uri ${JSON.stringify(uri)} is not a valid URL${base}`);
    }

    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return invalidOption(`Request uri must use http: or https:, got ${url.protocol}`);
    }

    if (!hasDecodableCredentials(url)) {
        return invalidOption('Request uri has a user name or password that is not valid percent-encoding');
    }

    return url;
}

// Services call the same few URIs over and over: parsing each once keeps URL parsing off the hot path.
const cache = new BoundedMemo<string, Destination>(1000);

/**
 * The destination of a string URI, parsed once and then served from a bounded cache. With events
 * each hop still gets its own `URL` object for the listeners, made from the cached `href`.
 */
export function cachedDestination(uri: string, baseUrl: string | undefined): Destination | HttpError {
    const key = baseUrl === undefined ? uri : `${baseUrl}\n${uri}`;
    let destination = cache.get(key);
    if (destination === undefined) {
        const url = resolveUri(uri, baseUrl);
        if (!(url instanceof URL)) {
            return url;
        }

        destination = cache.set(key, destinationOf(url));
    }

    return destination;
}
