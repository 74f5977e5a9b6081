import type { Attributes } from '@opentelemetry/api';
import {
    ATTR_HTTP_REQUEST_HEADER,
    ATTR_HTTP_RESPONSE_HEADER,
    HTTP_REQUEST_METHOD_VALUE_CONNECT,
    HTTP_REQUEST_METHOD_VALUE_DELETE,
    HTTP_REQUEST_METHOD_VALUE_GET,
    HTTP_REQUEST_METHOD_VALUE_HEAD,
    HTTP_REQUEST_METHOD_VALUE_OPTIONS,
    HTTP_REQUEST_METHOD_VALUE_OTHER,
    HTTP_REQUEST_METHOD_VALUE_PATCH,
    HTTP_REQUEST_METHOD_VALUE_POST,
    HTTP_REQUEST_METHOD_VALUE_PUT,
    HTTP_REQUEST_METHOD_VALUE_TRACE
} from './semconv.js';

/**
 * `url.template` is still incubating in the conventions; instrumentations are asked to copy such
 * names rather than import the unstable entry point (a test checks it against that entry point).
 */
export const ATTR_URL_TEMPLATE = 'url.template';

/** What the conventions make of a request method: the attribute value and the span name prefix. */
export interface NormalizedMethod {
    /** `http.request.method`: the canonical name, or `_OTHER`. */
    readonly value: string;
    /** `http.request.method_original`, set only when the method as sent differs from `value`. */
    readonly original: string | undefined;
    /** The first word of the span name: the canonical method, or `HTTP` for an unknown one. */
    readonly spanName: string;
}

const knownMethods = new Set<string>([
    HTTP_REQUEST_METHOD_VALUE_CONNECT,
    HTTP_REQUEST_METHOD_VALUE_DELETE,
    HTTP_REQUEST_METHOD_VALUE_GET,
    HTTP_REQUEST_METHOD_VALUE_HEAD,
    HTTP_REQUEST_METHOD_VALUE_OPTIONS,
    HTTP_REQUEST_METHOD_VALUE_PATCH,
    HTTP_REQUEST_METHOD_VALUE_POST,
    HTTP_REQUEST_METHOD_VALUE_PUT,
    HTTP_REQUEST_METHOD_VALUE_TRACE
]);

// Methods repeat endlessly and are few, so each spelling is normalised once; the cap keeps a client
// that invents methods from growing the cache without bound.
const methodCache = new Map<string, NormalizedMethod>();
const methodCacheLimit = 64;

export function normalizeMethod(method: string): NormalizedMethod {
    const cached = methodCache.get(method);
    if (cached) {
        return cached;
    }

    const upper = method.toUpperCase();
    const normalized: NormalizedMethod = knownMethods.has(upper)
        ? { value: upper, original: upper === method ? undefined : method, spanName: upper }
        : { value: HTTP_REQUEST_METHOD_VALUE_OTHER, original: method, spanName: 'HTTP' };
    if (methodCache.size < methodCacheLimit) {
        methodCache.set(method, normalized);
    }

    return normalized;
}

// Query parameters the conventions ask to redact from `url.full` because they carry signatures.
const sensitiveQuery = /[?&](?:AWSAccessKeyId|Signature|sig|X-Goog-Signature)=/;
const sensitiveKeys = ['AWSAccessKeyId', 'Signature', 'sig', 'X-Goog-Signature'];

/** `url.full` for a request URL: credentials and signature query values replaced by `REDACTED`. */
export function redactedUrl(url: URL): string {
    const hasCredentials = url.username !== '' || url.password !== '';
    const search = url.search;
    if (!hasCredentials && (search === '' || !sensitiveQuery.test(search))) {
        return url.href;
    }

    const copy = new URL(url.href);
    if (hasCredentials) {
        copy.username = 'REDACTED';
        copy.password = 'REDACTED';
    }

    for (const key of sensitiveKeys) {
        if (copy.searchParams.has(key)) {
            copy.searchParams.set(key, 'REDACTED');
        }
    }

    return copy.href;
}

/** `server.address`: the host name, without the brackets URL puts around an IPv6 address. */
export function serverAddress(url: URL): string {
    const host = url.hostname;
    return host.startsWith('[') ? host.slice(1, -1) : host;
}

/** `server.port`: the explicit port, else the scheme's default one. */
export function serverPort(url: URL): number {
    if (url.port !== '') {
        return Number(url.port);
    }

    return url.protocol === 'https:' ? 443 : 80;
}

type HeaderValue = string | number | readonly string[] | undefined | null;

/** A header list from the config, paired with the attribute names it produces, computed once. */
export interface CapturedHeaders {
    readonly names: readonly string[];
    readonly keys: readonly string[];
    /** Per name: whether its values are credentials, recorded as `REDACTED`. */
    readonly redacted: readonly boolean[];
}

/**
 * Headers whose values are credentials. A span is read by far more people than the service's
 * secrets are, and some of these the caller never wrote: `proxy-authorization` comes from a proxy
 * URL's credentials. Listing one of them records that the header was there, never its value.
 */
export const credentialHeaders: ReadonlySet<string> = new Set([
    'authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie'
]);

export function capturedHeaders(names: readonly string[] | undefined, side: 'request' | 'response'): CapturedHeaders {
    const lower = (names ?? []).map((name) => name.toLowerCase());
    const keyOf = side === 'request' ? ATTR_HTTP_REQUEST_HEADER : ATTR_HTTP_RESPONSE_HEADER;
    return {
        names: lower,
        keys: lower.map((name) => keyOf(name)),
        redacted: lower.map((name) => credentialHeaders.has(name))
    };
}

/** Adds `http.{request,response}.header.<name>` (string arrays, as the conventions want) to `attributes`. */
export function addHeaderAttributes(
    attributes: Attributes,
    captured: CapturedHeaders,
    get: (name: string) => HeaderValue
): void {
    for (let i = 0; i < captured.names.length; i++) {
        const value = get(captured.names[i]!);
        if (value === undefined || value === null) {
            continue;
        }

        const values = Array.isArray(value) ? value.map(String) : [String(value)];
        attributes[captured.keys[i]!] = captured.redacted[i] ? values.map(() => 'REDACTED') : values;
    }
}
