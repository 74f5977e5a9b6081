import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { EffectiveOptions } from '../../contract/types.js';
import type { Destination } from '../destination.js';

/**
 * Headers between HTTP/1.1's shape, which the client and its callers speak, and HTTP/2's (RFC 9113
 * 8.2, 8.3): the request's pseudo-header fields, the connection-specific fields HTTP/2 forbids, the
 * response's `:status` and a `rawHeaders` list made from its fields.
 */

// Fields that describe an HTTP/1.1 connection: meaningless on a stream, and a malformed request in HTTP/2.
const connectionSpecific = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** The HEADERS of a request: the pseudo-header fields, then the caller's fields fit for HTTP/2. */
export function requestHeaders(
    method: string,
    destination: Destination,
    headers: EffectiveOptions['headers']
): OutgoingHttpHeaders {
    const authority = headers.host;
    const fields: OutgoingHttpHeaders = {
        ':method': method,
        ':scheme': destination.isHttps ? 'https' : 'http',
        ':authority': authority === undefined ? authorityOf(destination) : String(authority),
        ':path': destination.path
    };
    for (const name in headers) {
        if (name === 'host' || connectionSpecific.has(name)) {
            continue;
        }

        const value = headers[name];
        // `te` may only say trailers (RFC 9113 8.2.2).
        if (name === 'te' && String(value).trim().toLowerCase() !== 'trailers') {
            continue;
        }

        fields[name] = value as string | string[];
    }

    if (destination.auth !== undefined && fields.authorization === undefined) {
        // What Node's `auth` option does for HTTP/1.1: the URL's credentials as Basic authentication.
        fields.authorization = `Basic ${Buffer.from(destination.auth).toString('base64')}`;
    }

    return fields;
}

function authorityOf(destination: Destination): string {
    const host = destination.hostname.includes(':') ? `[${destination.hostname}]` : destination.hostname;
    const defaultPort = destination.isHttps ? 443 : 80;
    return destination.port === defaultPort ? host : `${host}:${destination.port}`;
}

/** A response's fields without the pseudo-header fields, and the `rawHeaders` list of them, in order. */
export function responseFields(received: IncomingHttpHeaders): {
    headers: IncomingHttpHeaders;
    rawHeaders: string[];
} {
    const headers: IncomingHttpHeaders = {};
    const rawHeaders: string[] = [];
    for (const name in received) {
        if (name.charCodeAt(0) === 58) {
            // `:status` and any other pseudo-header field.
            continue;
        }

        const value = received[name];
        if (value === undefined) {
            continue;
        }

        headers[name] = value;
        if (Array.isArray(value)) {
            for (const one of value) {
                rawHeaders.push(name, one);
            }
        } else {
            rawHeaders.push(name, value);
        }
    }

    return { headers, rawHeaders };
}
