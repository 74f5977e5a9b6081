import { EventEmitter } from 'node:events';
import type { OutgoingHttpHeaders } from 'node:http';
import type { EffectiveOptions } from '../client/contract/types.js';
import type { Destination } from '../client/wire/destination.js';
import { Http2Request, type StoppableExchange } from '../client/wire/http2/request.js';
import { http } from '../common/node-modules.js';

/**
 * The request of a mocked HTTP/1.1 exchange, where the public types say `ClientRequest`
 * (`promise.req`, the `request` event, `details.req`): the members of one that mean something without
 * a connection — `method`, `path`, `host`, `protocol`, the headers as Node would send them (`host`
 * added, the URL's credentials as `authorization`; a header Node refuses throws as the request is made),
 * which a `request` listener may still change until they are sent, `abort()`, `destroy(err?)`,
 * `reusedSocket`, and the events `response`, `finish` and `close`. `socket` is null: no connection was made.
 */
export class MockRequest extends EventEmitter {
    readonly method: string;
    readonly path: string;
    readonly host: string;
    readonly protocol: string;
    readonly socket = null;
    reusedSocket = false;
    aborted = false;
    destroyed = false;
    headersSent = false;
    writableEnded = false;
    writableFinished = false;
    private readonly fields: OutgoingHttpHeaders;
    private isClosed = false;

    constructor(
        method: string,
        destination: Destination,
        headers: EffectiveOptions['headers'],
        private readonly exchange: StoppableExchange
    ) {
        super();
        this.method = method;
        this.path = destination.path;
        this.host = destination.hostname;
        this.protocol = destination.protocol;
        this.fields = { ...(headers as OutgoingHttpHeaders) };
        for (const name in this.fields) {
            // As Node's ClientRequest sets each as it is made: a header it cannot send fails the request there.
            http.validateHeaderName(name);
            http.validateHeaderValue(name, this.fields[name] as string);
        }

        if (this.fields.host === undefined) {
            const defaultPort = destination.isHttps ? 443 : 80;
            const host = destination.hostname.includes(':') ? `[${destination.hostname}]` : destination.hostname;
            this.fields.host = destination.port === defaultPort ? host : `${host}:${destination.port}`;
        }

        if (destination.auth !== undefined && this.fields.authorization === undefined) {
            // What Node's `auth` option does: the URL's credentials as Basic authentication.
            this.fields.authorization = `Basic ${Buffer.from(destination.auth).toString('base64')}`;
        }
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

    setHeader(name: string, value: string | number | readonly string[]): this {
        this.assertUnsent('set');
        http.validateHeaderName(name);
        http.validateHeaderValue(name, value as string);
        this.fields[name.toLowerCase()] = value as string | number | string[];
        return this;
    }

    removeHeader(name: string): void {
        this.assertUnsent('remove');
        delete this.fields[name.toLowerCase()];
    }

    abort(): void {
        if (!this.aborted && !this.isClosed) {
            this.aborted = true;
            this.exchange.stop(undefined);
        }
    }

    destroy(err?: Error): this {
        if (!this.destroyed) {
            this.destroyed = true;
            this.exchange.stop(err);
        }

        return this;
    }

    /** The headers and body went out. */
    sent(): void {
        this.headersSent = true;
        this.writableEnded = true;
    }

    /** The body was taken whole. */
    finished(): void {
        this.writableFinished = true;
        this.emit('finish');
    }

    /** True once the exchange is over, as a ClientRequest's `closed` says. */
    get closed(): boolean {
        return this.isClosed;
    }

    /** The exchange is over (the name `Http2Request` gives it too). */
    exchangeClosed(): void {
        if (!this.isClosed) {
            this.isClosed = true;
            this.destroyed = true;
            this.emit('close');
        }
    }

    private assertUnsent(what: string): void {
        if (this.headersSent) {
            throw Object.assign(new Error(`Cannot ${what} headers after they are sent to the client`), {
                code: 'ERR_HTTP_HEADERS_SENT'
            });
        }
    }
}

/**
 * The request of a mocked HTTP/2 exchange: an `Http2Request` as over the network (`isHttp2Request`
 * is true, the same members), without a stream: the mock answers in-process.
 */
export class MockHttp2Request extends Http2Request {
    private isSent = false;
    private isFinished = false;

    override get headersSent(): boolean {
        return this.isSent;
    }

    override get writableEnded(): boolean {
        return this.isSent;
    }

    override get writableFinished(): boolean {
        return this.isFinished;
    }

    /** The fields went out; a `request` listener can no longer change them. */
    sent(): void {
        this.isSent = true;
    }

    /** The body was taken whole. */
    finished(): void {
        this.isFinished = true;
        this.emit('finish');
    }
}
