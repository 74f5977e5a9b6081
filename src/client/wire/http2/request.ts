import { EventEmitter } from 'node:events';
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { http } from '../../../common/node-modules.js';
import { aborted, requestError } from '../../contract/errors.js';
import type { ExchangeHop } from '../transport.js';

/** What a request's handle needs of its exchange: to be stopped. */
export interface StoppableExchange {
    /** The caller stopped the request: with `err`, as a failure; without, as an abort. */
    stop(err: Error | undefined): void;
}

/**
 * What stopping an exchange means for the caller (`StoppableExchange.stop`): before the response, its hop
 * fails with the abort or the error (unless the exchange is already over); after it, the response's body
 * does, if it is still coming.
 */
export function stopForCaller(
    hop: Pick<ExchangeHop, 'failed'>,
    res: IncomingMessage | undefined,
    over: boolean,
    err: Error | undefined
): void {
    const failure = err === undefined ? aborted(undefined, 'request') : requestError(err);
    if (res !== undefined) {
        if (!res.complete && !res.destroyed) {
            res.destroy(failure);
        }
    } else if (!over) {
        hop.failed(failure);
    }
}

/**
 * The request of an HTTP/2 exchange as the client shows it (`promise.req`, the `request` event,
 * `details.req`; README "HTTP/2"): the stream's handle, with the members of a `ClientRequest` that
 * mean something for a stream, and no others (no `write()`: the client sends the body).
 *
 * - `method`, `path`, `host`, `protocol`; the fields sent, pseudo-header fields included
 *   (`getHeader()`, `getHeaders()`, `getHeaderNames()`, `hasHeader()`), which a `request` listener may
 *   still change (`setHeader()`, `removeHeader()`) until the stream goes out (`headersSent`).
 * - `abort()` and `destroy(err?)` reset the stream with CANCEL and keep the session for the other
 *   streams: before the response the request fails (aborted, or a 502 with `err`), after it the
 *   response's body does. `aborted`, `destroyed`.
 * - `socket` is the session's connection, shared by its streams (null until the stream has one, as a
 *   `ClientRequest`'s until it has its socket); `reusedSocket` is true on a session that had carried
 *   streams before; `stream` is the `ClientHttp2Stream`, once the session had room.
 * - `writableEnded`, `writableFinished`, `closed`; the events `response` (the response), `finish` (the
 *   request is out) and `close` (the exchange is over), once each.
 *
 * When ALPN chose HTTP/1.1, it stands for the `ClientRequest` that carries the exchange: the same
 * members, taken from that request.
 *
 * Its state is held in private fields (`#`), not TypeScript's `private` members: where the public types
 * say `ClientRequest`, `isHttp2Request(req)` narrows to `ClientRequest & Http2Request`, which a private
 * member named as one of `ClientRequest`'s (`connection`) would reduce to `never`; and its members mean
 * what the `ClientRequest` members of the same name mean (`socket` null, `closed` a boolean), so the
 * narrowed type says what `req` holds (test/client/contract/types.test.ts).
 */
export class Http2Request extends EventEmitter {
    readonly method: string;
    readonly path: string;
    readonly host: string;
    readonly protocol: string;
    /** The stream, once the session had room for it (undefined while the request waits for a session). */
    stream: ClientHttp2Stream | undefined;
    /** True when the stream went out on a session that had carried streams before. */
    reusedSocket = false;
    aborted = false;
    destroyed = false;
    readonly #fields: OutgoingHttpHeaders;
    readonly #exchange: StoppableExchange;
    #connection: Socket | undefined;
    // The HTTP/1.1 request that carries the exchange, when ALPN chose HTTP/1.1.
    #http1: ClientRequest | undefined;
    #isClosed = false;

    constructor(
        fields: OutgoingHttpHeaders,
        exchange: StoppableExchange,
        /** The host connected to, without a port (as a `ClientRequest`'s; `:authority` has the header's). */
        host: string
    ) {
        super();
        this.#fields = fields;
        this.#exchange = exchange;
        this.method = String(fields[':method']);
        this.path = String(fields[':path']);
        this.host = host;
        this.protocol = `${String(fields[':scheme'])}:`;
    }

    /** The session's connection, once the stream has one (null before); its bytes are all the session's streams'. */
    get socket(): Socket | null {
        return this.#connection ?? this.#http1?.socket ?? null;
    }

    /** True once the exchange is over (the `close` event has been emitted). */
    get closed(): boolean {
        return this.#isClosed;
    }

    /** True once the fields went out: they can no longer be changed. */
    get headersSent(): boolean {
        return this.stream !== undefined || this.#http1?.headersSent === true;
    }

    get writableEnded(): boolean {
        return this.stream?.writableEnded ?? this.#http1?.writableEnded ?? false;
    }

    get writableFinished(): boolean {
        return this.stream?.writableFinished ?? this.#http1?.writableFinished ?? false;
    }

    getHeader(name: string): string | number | string[] | undefined {
        return this.#fields[name.toLowerCase()];
    }

    getHeaders(): OutgoingHttpHeaders {
        return { ...this.#fields };
    }

    getHeaderNames(): string[] {
        return Object.keys(this.#fields);
    }

    hasHeader(name: string): boolean {
        return this.#fields[name.toLowerCase()] !== undefined;
    }

    /** Sets a field before the stream goes out; throws as `ClientRequest` does after, or for a field no HTTP version can carry. */
    setHeader(name: string, value: string | number | readonly string[]): this {
        this.#assertUnsent('set');
        http.validateHeaderName(name);
        http.validateHeaderValue(name, value as string);
        this.#fields[name.toLowerCase()] = value as string | number | string[];
        return this;
    }

    removeHeader(name: string): void {
        this.#assertUnsent('remove');
        delete this.#fields[name.toLowerCase()];
    }

    /** Cancels the request: the stream is reset with CANCEL and the request (or its response's body) fails as aborted. */
    abort(): void {
        if (!this.aborted && !this.#isClosed) {
            this.aborted = true;
            this.#stop(undefined);
        }
    }

    /** Cancels the request, as a failure with `err` when given (a 502 carrying it), else as an abort. */
    destroy(err?: Error): this {
        if (!this.destroyed) {
            this.destroyed = true;
            this.#stop(err);
        }

        return this;
    }

    /** The stream is out, on `socket`'s session. */
    attached(stream: ClientHttp2Stream, socket: Socket, reused: boolean): void {
        this.stream = stream;
        this.#connection = socket;
        this.reusedSocket = reused;
    }

    /** The exchange goes over HTTP/1.1 (ALPN chose it): `request` carries it, on the connection it was negotiated on. */
    carriedBy(request: ClientRequest): void {
        this.#http1 = request;
        request.once('response', (res: IncomingMessage) => this.emit('response', res));
        request.once('finish', () => this.emit('finish'));
        request.once('close', () => this.exchangeClosed());
    }

    /** The exchange is over. */
    exchangeClosed(): void {
        if (!this.#isClosed) {
            this.#isClosed = true;
            this.destroyed = true;
            this.emit('close');
        }
    }

    #stop(err: Error | undefined): void {
        const http1 = this.#http1;
        if (http1 === undefined) {
            this.#exchange.stop(err);
        } else if (err === undefined) {
            http1.abort();
        } else {
            http1.destroy(err);
        }
    }

    #assertUnsent(what: string): void {
        if (this.headersSent) {
            throw Object.assign(new Error(`Cannot ${what} headers after they are sent to the client`), {
                code: 'ERR_HTTP_HEADERS_SENT'
            });
        }
    }
}

/**
 * True for the request of an HTTP/2 exchange (README "HTTP/2"): an `Http2Request`, where the public
 * types say `ClientRequest` (`promise.req`, the `request` event, `details.req`). It narrows such a
 * `req` to `ClientRequest & Http2Request`, whose members that are there are `Http2Request`'s (docs/client.md
 * "HTTP/2", telling a stream apart), and leaves a `ClientRequest` in the other branch.
 */
export function isHttp2Request(req: unknown): req is Http2Request {
    return req instanceof Http2Request;
}
