import { EventEmitter } from 'node:events';
import type { OutgoingHttpHeaders } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';

/** What a request's handle needs of its exchange: to be stopped. */
export interface StoppableExchange {
    /** The caller stopped the request: with `err`, as a failure; without, as an abort. */
    stop(err: Error | undefined): void;
}

/**
 * The request of an HTTP/2 exchange as the client shows it (`promise.req`, the `request` event,
 * `details.req`; README "HTTP/2"): the stream's handle, with the members of a `ClientRequest` that
 * mean something for a stream. `abort()` and `destroy()` reset the stream with CANCEL and keep the
 * session for the other streams; the headers are those sent, pseudo-header fields included; `socket`
 * is the session's connection, shared by its streams; `stream` is the `ClientHttp2Stream`, once the
 * session had room for it. It emits `close` once, when the exchange is over.
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
    private connection: Socket | undefined;
    // The HTTP/1.1 request that carries the exchange, when ALPN chose HTTP/1.1.
    private http1: { readonly socket: Socket | null } | undefined;

    constructor(
        private readonly fields: OutgoingHttpHeaders,
        private readonly exchange: StoppableExchange
    ) {
        super();
        this.method = String(fields[':method']);
        this.path = String(fields[':path']);
        this.host = String(fields[':authority']);
        this.protocol = `${String(fields[':scheme'])}:`;
    }

    /** The session's connection, once the stream has one; its bytes are all the session's streams'. */
    get socket(): Socket | undefined {
        return this.connection ?? this.http1?.socket ?? undefined;
    }

    getHeader(name: string): string | number | string[] | undefined {
        return this.fields[name.toLowerCase()];
    }

    getHeaders(): OutgoingHttpHeaders {
        return { ...this.fields };
    }

    getHeaderNames(): string[] {
        return Object.keys(this.fields);
    }

    hasHeader(name: string): boolean {
        return this.fields[name.toLowerCase()] !== undefined;
    }

    /** Cancels the request: the stream is reset with CANCEL and the request rejects as aborted. */
    abort(): void {
        if (!this.aborted && !this.destroyed) {
            this.aborted = true;
            this.exchange.stop(undefined);
        }
    }

    /** Cancels the request, as a failure with `err` when given (a 502 carrying it), else as an abort. */
    destroy(err?: Error): this {
        if (!this.destroyed) {
            this.destroyed = true;
            this.exchange.stop(err);
        }

        return this;
    }

    /** The stream is out, on `socket`'s session. */
    attached(stream: ClientHttp2Stream, socket: Socket, reused: boolean): void {
        this.stream = stream;
        this.connection = socket;
        this.reusedSocket = reused;
    }

    /** The exchange goes over HTTP/1.1 (ALPN chose it): `request` carries it, on the connection it was negotiated on. */
    carriedBy(request: { readonly socket: Socket | null }): void {
        this.http1 = request;
    }

    /** The exchange is over. */
    closed(): void {
        this.destroyed = true;
        this.emit('close');
    }
}
