import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { http } from '../../../common/node-modules.js';
import type { EffectiveOptions } from '../../contract/types.js';
import { authorityHostOf, type Destination } from '../destination.js';

/**
 * Headers between HTTP/1.1's shape, which the client and its callers speak, and HTTP/2's (RFC 9113
 * 8.2, 8.3): the request's pseudo-header fields, the connection-specific fields HTTP/2 forbids, the
 * response's `:status` and a `rawHeaders` list made from its fields.
 */

// Fields that describe an HTTP/1.1 connection: meaningless on a stream, and a malformed request in HTTP/2
// (Node refuses to send them).
const connectionSpecific = new Set([
    'connection',
    'keep-alive',
    'proxy-connection',
    'transfer-encoding',
    'upgrade',
    'http2-settings'
]);

/**
 * The HEADERS of a request: the pseudo-header fields, then the caller's fields fit for HTTP/2. Throws,
 * as `http.request()` does for HTTP/1.1, on a field name or value no HTTP version can carry (one a
 * `preRequest` listener set after the options were checked): the hop fails with that at once, before
 * the stream waits for a session.
 */
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
        http.validateHeaderName(name);
        // Typed for a string, Node's check takes what a field may be set to (a number, a list of strings).
        http.validateHeaderValue(name, value as string);
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
    const host = authorityHostOf(destination);
    const defaultPort = destination.isHttps ? 443 : 80;
    return destination.port === defaultPort ? host : `${host}:${destination.port}`;
}

/**
 * A response's (or its trailers') fields without the pseudo-header fields, as a plain object like
 * HTTP/1.1's, and its `rawHeaders` list: `raw` as Node received it (its third argument to the
 * 'response' and 'trailers' events), in order and with every repeated field.
 */
export function responseFields(
    received: IncomingHttpHeaders,
    raw: readonly string[]
): {
    headers: IncomingHttpHeaders;
    rawHeaders: string[];
} {
    const headers: IncomingHttpHeaders = {};
    for (const name in received) {
        // `:status` and any other pseudo-header field start with a colon.
        if (name.charCodeAt(0) !== 58) {
            headers[name] = received[name];
        }
    }

    const rawHeaders: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
        const name = raw[i] as string;
        if (name.charCodeAt(0) !== 58) {
            rawHeaders.push(name, raw[i + 1] as string);
        }
    }

    return { headers, rawHeaders };
}
