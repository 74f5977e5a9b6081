import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { responseHasNoBody } from '../common/message-body.js';
import { http } from '../common/node-modules.js';
import type { MockBody, MockResponse } from './types.js';

/**
 * A reply made ready to send (docs/testing.md, "Replies"), with the fields a Node.js server would
 * add: `date`, `content-length` for a body of known length (0 for none; not for a HEAD), `transfer-encoding: chunked` for a stream over
 * HTTP/1.1, `content-type: application/json` for a value sent as JSON. Over HTTP/2 the fields are
 * lower-case and those of an HTTP/1.1 connection are left out (RFC 9113 8.2.2: a server may not send them).
 */
export interface PreparedReply {
    readonly status: number;
    readonly statusMessage: string;
    /** Field names as given (lower-case over HTTP/2) and values, in order; a repeated field appears once per value. */
    readonly fields: readonly (readonly [string, string])[];
    /** Undefined when the response has no body (none given, a HEAD, a 204 or 304). */
    readonly body: Buffer | Readable | undefined;
}

const connectionSpecific = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

// Fields Node keeps the first of when a response repeats them (the others are joined with ', ').
const singleValued = new Set([
    'age',
    'authorization',
    'content-length',
    'content-type',
    'etag',
    'expires',
    'from',
    'host',
    'if-modified-since',
    'if-unmodified-since',
    'last-modified',
    'location',
    'max-forwards',
    'proxy-authorization',
    'referer',
    'retry-after',
    'server',
    'user-agent'
]);

/** Checks a reply as given (the status, the fields, the body's type); throws a TypeError naming what is wrong. */
export function checkReply(response: MockResponse): void {
    const { status, headers } = response;
    if (!Number.isInteger(status) || status < 100 || status > 999) {
        throw new TypeError(`A mocked reply's status must be an integer from 100 to 999, got ${String(status)}`);
    }

    for (const name in headers) {
        http.validateHeaderName(name);
        for (const value of valuesOf(headers[name])) {
            http.validateHeaderValue(name, value);
        }
    }

    bodyBytes(response.body);
}

/** The reply of `response` to a request of `method`, over HTTP/2 or HTTP/1.1 (checked by `checkReply` first). */
export function prepareReply(response: MockResponse, method: string, http2: boolean): PreparedReply {
    const status = response.status;
    const given = response.headers ?? {};
    const fields: [string, string][] = [];
    const names = new Set<string>();
    for (const name in given) {
        const lower = name.toLowerCase();
        if (http2 && connectionSpecific.has(lower)) {
            continue;
        }

        names.add(lower);
        for (const value of valuesOf(given[name])) {
            fields.push([http2 ? lower : name, value]);
        }
    }

    const json = isJsonValue(response.body);
    if (json && !names.has('content-type')) {
        fields.push(['content-type', 'application/json']);
    }

    if (!names.has('date')) {
        // An origin server with a clock sends one (RFC 9110 6.6.1), as Node.js's do: the cache reads a response's age from it.
        fields.push(['date', new Date().toUTCString()]);
    }

    const body = bodyBytes(response.body);
    const framed = names.has('content-length') || names.has('transfer-encoding');
    const mayHaveBody = status !== 204 && status !== 304 && status >= 200 && method !== 'HEAD';
    if ((Buffer.isBuffer(body) || body === undefined) && !framed && mayHaveBody) {
        // A server that ends a response without a body frames it as empty.
        fields.push(['content-length', String(body?.length ?? 0)]);
    } else if (body instanceof Readable && !framed && !http2) {
        fields.push(['transfer-encoding', 'chunked']);
    }

    return {
        status,
        statusMessage: http2
            ? (http.STATUS_CODES[status] ?? '')
            : (response.statusMessage ?? http.STATUS_CODES[status] ?? ''),
        fields,
        body: responseHasNoBody(method, status) ? undefined : body
    };
}

/** The headers object of a response with `fields`, as Node builds it: lower-case names, repeats joined. */
export function headersOf(fields: PreparedReply['fields']): IncomingHttpHeaders {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of fields) {
        const lower = name.toLowerCase();
        const existing = headers[lower];
        if (lower === 'set-cookie') {
            headers[lower] = [...((existing as string[] | undefined) ?? []), value];
        } else if (existing === undefined) {
            headers[lower] = value;
        } else if (!singleValued.has(lower)) {
            headers[lower] = `${existing as string}, ${value}`;
        }
    }

    return headers;
}

function valuesOf(value: string | number | readonly string[] | undefined): string[] {
    if (value === undefined) {
        return [];
    }

    return Array.isArray(value) ? value.map(String) : [String(value)];
}

function isJsonValue(body: MockBody | undefined): boolean {
    return !(body === undefined || typeof body === 'string' || body instanceof Uint8Array || body instanceof Readable);
}

function bodyBytes(body: MockBody | undefined): Buffer | Readable | undefined {
    if (body === undefined) {
        return undefined;
    }

    if (typeof body === 'string') {
        return Buffer.from(body);
    }

    if (body instanceof Readable) {
        return body;
    }

    if (body instanceof Uint8Array) {
        return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    }

    const text = JSON.stringify(body);
    if (text === undefined) {
        throw new TypeError(
            `A mocked reply's body must be a string, bytes, a stream or a JSON value, got ${typeof body}`
        );
    }

    return Buffer.from(text);
}
