import type { Readable } from 'node:stream';

/** A text a mock compares: equal to a string, matched by a RegExp, or accepted by a function. */
export type TextMatcher = string | RegExp | ((value: string) => boolean);

/**
 * What an interceptor matches (docs/testing.md, "Matching"). Only what it names is compared: a
 * request with more headers, or more query parameters, still matches.
 */
export interface InterceptOptions {
    /**
     * The origin: `https://api.example.com` (a port only when it is not the scheme's default), or a
     * RegExp or function of the origin as the request has it.
     */
    origin: TextMatcher;
    /** The method; a string compares without regard to case. Default `'GET'`. */
    method?: TextMatcher | undefined;
    /**
     * The path. A string without `?` compares with the path alone, whatever the query (unless `query`
     * says); a string with `?` compares with the path and its query as sent. A RegExp or a function is
     * given the path with its query. Default: any path.
     */
    path?: TextMatcher | undefined;
    /**
     * The query parameters that must be there: a name to its value (a list for a repeated parameter, in
     * order), or to a RegExp or function of it; or a function of all of them.
     */
    query?: Record<string, TextMatcher | readonly string[]> | ((query: URLSearchParams) => boolean) | undefined;
    /**
     * The headers that must be there: a name (any case) to its value, a RegExp or a function of it (a
     * repeated header's values joined with `, `); or a function of all of them (lower-case names).
     */
    headers?: Record<string, TextMatcher> | ((headers: Readonly<Record<string, string>>) => boolean) | undefined;
    /**
     * The request body: a string (the exact text), a Buffer (the exact bytes), a RegExp or a function of
     * the text, or any other value, which the body parsed as JSON must equal.
     */
    body?: string | Buffer | RegExp | ((text: string) => boolean) | object | undefined;
}

/** A request as the mock received it: given to a reply function, and listed by `MockNetwork.requests`. */
export interface MockedRequest {
    readonly method: string;
    /** The whole URL, as the request went. */
    readonly url: string;
    readonly origin: string;
    /** The path with its query. */
    readonly path: string;
    readonly query: URLSearchParams;
    /** The headers sent, lower-case names (the values of a repeated one joined with `, `); over HTTP/2 without the pseudo-header fields. */
    readonly headers: Readonly<Record<string, string>>;
    /** The body as received (empty when there was none). */
    readonly body: Buffer;
    /** The protocol the mock answered in: `'2.0'` when the request offered HTTP/2 and the origin speaks it. */
    readonly httpVersion: '1.1' | '2.0';
    /** The body as UTF-8 text. */
    text(): string;
    /** The body parsed as JSON (throws as `JSON.parse` does). */
    json(): unknown;
}

/**
 * A reply's body: a string or bytes as they are, a stream as it flows (its own pace, its errors
 * cutting the body short), any other value as JSON (with `content-type: application/json` unless the
 * reply says another).
 */
export type MockBody = string | Uint8Array | Readable | object | number | boolean | null;

/** A reply, as a reply function returns it. */
export interface MockResponse {
    status: number;
    /** Response headers; a list of values for a repeated one. `content-length` is added for a body that is not a stream. */
    headers?: Record<string, string | number | readonly string[]> | undefined;
    body?: MockBody | undefined;
    /** HTTP/1.1's reason phrase. Default the status's standard text; HTTP/2 carries none. */
    statusMessage?: string | undefined;
}

/** A reply made from the request (its body read whole); may be async. */
export type MockReplyFunction = (request: MockedRequest) => MockResponse | Promise<MockResponse>;

/**
 * A fault before any response (docs/testing.md, "Faults"), each failing the request with the error
 * the network would give:
 * - `'connection-refused'`: nothing listens (`ECONNREFUSED`); the request body is not read.
 * - `'connection-reset'`: the server closes the connection without answering (`ECONNRESET` over
 *   HTTP/1.1; over HTTP/2 every stream of the session fails, `ERR_HTTP2_STREAM_CLOSED`).
 * - `'tls'`: the certificate does not verify (https only; not with `rejectUnauthorized: false`).
 * - `'goaway'`: HTTP/2 only: the server sends GOAWAY and closes the session; the streams above its
 *   last stream id were not processed (`ERR_HTTP2_GOAWAY`, sent again by the client).
 * - `'refused-stream'`: HTTP/2 only: RST_STREAM REFUSED_STREAM (`ERR_HTTP2_REFUSED_STREAM`, sent again).
 */
export type MockFault = 'connection-refused' | 'connection-reset' | 'tls' | 'goaway' | 'refused-stream';

/** The certificate errors a `'tls'` fault can give, as Node's TLS names them. */
export type TlsFailureCode =
    | 'DEPTH_ZERO_SELF_SIGNED_CERT'
    | 'SELF_SIGNED_CERT_IN_CHAIN'
    | 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'
    | 'CERT_HAS_EXPIRED';

/** The details of a fault: `code` for `'tls'` (default `DEPTH_ZERO_SELF_SIGNED_CERT`), the GOAWAY's for `'goaway'`. */
export interface MockFaultDetails {
    code?: TlsFailureCode | undefined;
    /** The GOAWAY's error code (RFC 9113 7). Default 0, NO_ERROR. */
    errorCode?: number | undefined;
    /**
     * The last stream the server says it processed; those above fail as not processed. Default: the
     * stream before this request's, so this one and any opened after it are sent again.
     */
    lastStreamId?: number | undefined;
}

/** Waits before the response headers (or the fault) and before the first byte of the body, in ms. */
export interface MockDelays {
    headers?: number | undefined;
    body?: number | undefined;
}

/** What an origin speaks (`MockNetwork.origin()`). */
export interface MockOriginSettings {
    /**
     * Whether it answers ALPN (or prior knowledge) with HTTP/2: a request that offers it (the `http2`
     * option) then goes over HTTP/2. Default true; false answers every request over HTTP/1.1.
     */
    http2?: boolean | undefined;
}
