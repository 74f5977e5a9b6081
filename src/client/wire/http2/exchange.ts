import { AsyncResource } from 'node:async_hooks';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { declaredLength } from '../../../common/message-body.js';
import type { HttpError } from '../../../errors/index.js';
import type { PayloadReplay } from '../../bodies/payload-replay.js';
import { trackUpload, type UploadOwner } from '../../bodies/progress.js';
import { type CodedError, requestError } from '../../contract/errors.js';
import type { HopRequest, HopResponse, ProgressCallback } from '../../contract/types.js';
import { agentFor } from '../connection-settings.js';
import { http1, http1OverSocket } from '../http1/exchange.js';
import { type PendingBody, sendPendingBody } from '../pending-body.js';
import { proxyRequestError, tunnelRefusal } from '../proxy.js';
import type { ConnectionMoments, Exchange, ExchangeHop, Transport } from '../transport.js';
import type { ConnectionTarget } from './connect.js';
import { cancelStream } from './error-codes.js';
import { requestHeaders, responseFields } from './headers.js';
import { type SessionClaim, type SessionPool, sessionPoolOf } from './pool.js';
import { Http2Request, type StoppableExchange, stopForCaller } from './request.js';
import { cutResponse, releaseResponse, responseOfStream, watchStreamEnd } from './response.js';
import type { LiveSession } from './session.js';
import { sessionKey } from './session-key.js';
import { type Http2Settings, http2SettingsOf } from './settings.js';
import { streamFailure } from './stream-failure.js';

/**
 * HTTP/2 under the transport seam (transport.ts; README "HTTP/2"): an exchange is one stream of a
 * session from the client's pool (pool.ts). The stream is claimed as the body is sent (after the
 * `request` event, whose listeners may still set fields); the first stream to an origin waits for
 * the connection its hop opens (the moments are that hop's) or another hop is opening; a stream on a
 * session that was there is on a reused connection. When ALPN answers `http/1.1`, the exchange goes
 * on over HTTP/1.1 (http1/exchange.ts) on that very connection, and the origin's later hops go to the agents.
 */
export const http2: Transport = {
    open(hop: ExchangeHop): Exchange {
        return openWith(hop, undefined);
    }
};

/** The request a hop made while the transport loaded (load-http2.ts): the exchange takes it on as its own. */
export interface MadeRequest {
    /** The fields to send, as the hop's `request` listeners left them. */
    readonly fields: OutgoingHttpHeaders;
    /** The request's handle, whose exchange (its `stop()`) stays the one that made it. */
    readonly handle: Http2Request;
}

/**
 * The exchange of `hop`: a stream, or HTTP/1.1 for an origin that answered ALPN with it; with `made`,
 * carrying the request made before the transport had loaded.
 */
export function openWith(hop: ExchangeHop, made: MadeRequest | undefined): Exchange & Partial<StoppableExchange> {
    const { destination, options } = hop;
    const settings = http2SettingsOf(options.http2 as true | object);
    const agent = agentFor(destination, options, hop.agents);
    const target: ConnectionTarget = {
        destination,
        options,
        proxy: hop.proxy,
        agent,
        secure: destination.isHttps,
        // Over TLS, ALPN decides; in cleartext (h2c), HTTP/2 with prior knowledge.
        alpn: offeredProtocols
    };
    const key = sessionKey(target, settings);
    const pool = sessionPoolOf(hop.agents);
    if (pool.speaksHttp1(key)) {
        const exchange = http1.open(hop);
        // As when ALPN answers on the stream's own connection: the handle stands for the HTTP/1.1 request.
        made?.handle.carriedBy(exchange.request);
        return exchange;
    }

    return new Http2Exchange(hop, pool, key, target, settings, made);
}

const offeredProtocols = ['h2', 'http/1.1'] as const;

// The exchange rides on its stream, so the listeners below are shared functions rather than closures;
// until the stream closes (streamClosed).
const exchangeOf = Symbol('tracewire.http2Exchange');
type ExchangeStream = ClientHttp2Stream & { [exchangeOf]: Http2Exchange | undefined };

class Http2Exchange implements Exchange, SessionClaim, StoppableExchange, UploadOwner {
    /**
     * The stream's handle, shown where the public types say `ClientRequest`: it has the members of one
     * that mean something for a stream (request.ts).
     */
    readonly request: HopRequest;
    reused = false;
    private readonly handle: Http2Request;
    private readonly fields: OutgoingHttpHeaders;
    private stream: ClientHttp2Stream | undefined;
    private session: LiveSession | undefined;
    private res: HopResponse | undefined;
    // The HTTP/1.1 exchange this one became, when ALPN answered `http/1.1`.
    private http1: Exchange | undefined;
    private body: PendingBody | undefined;
    // True while the claim is in the pool's hands (waiting for a session or a connection).
    private waiting = false;
    // Set once the hop let go of the exchange (it failed or was stopped): nothing more is reported or sent.
    private cancelled = false;
    /**
     * The async context the exchange began in, its hop's: a session's callbacks run in the context of
     * the call that opened it, so what the session and the stream tell this exchange is told in this
     * one, as node:http tells an HTTP/1.1 request's events in its own (the next hop of a redirect or a
     * re-send starts from there: its caller's context, and its span's parent, stay its own).
     */
    readonly scope = new AsyncResource('tracewire:http2-exchange');

    constructor(
        readonly hop: ExchangeHop,
        private readonly pool: SessionPool,
        private readonly key: string,
        readonly target: ConnectionTarget,
        private readonly settings: Http2Settings,
        made: MadeRequest | undefined
    ) {
        if (made === undefined) {
            this.fields = requestHeaders(hop.method, hop.destination, hop.headers);
            this.handle = new Http2Request(this.fields, this, hop.destination.hostname);
        } else {
            this.fields = made.fields;
            this.handle = made.handle;
        }

        this.request = this.handle as unknown as HopRequest;
    }

    get moments(): ConnectionMoments | undefined {
        return this.cancelled ? undefined : this.hop.moments;
    }

    // The hop's side (Exchange).

    /** The body waits for the stream, which is claimed now: the `request` listeners have had the request. */
    sendBody(body: string | Buffer | undefined, onProgress: ProgressCallback | undefined): void {
        this.body = { stream: false, body, onProgress };
        this.claim();
    }

    /** As `sendBody`; not a byte is read before the stream exists: a request that gets no session leaves the stream whole. */
    sendStream(replay: PayloadReplay, onProgress: ProgressCallback | undefined): void {
        this.body = { stream: true, replay, onProgress };
        this.claim();
    }

    /** The stream of a received response: the bytes of it are there once its HEADERS came. */
    responseBytes(): number {
        return this.http1 !== undefined ? this.http1.responseBytes() : this.res === undefined ? 0 : 1;
    }

    refusalOf(res: HopResponse): HttpError | undefined {
        return this.http1?.refusalOf(res);
    }

    cancel(): void {
        this.cancelled = true;
        this.body = undefined;
        if (this.http1 !== undefined) {
            this.http1.cancel();
        } else if (this.waiting) {
            this.waiting = false;
            this.pool.release(this.key, this);
        } else {
            cancelStream(this.stream);
        }
    }

    retireIdlePeers(): void {
        this.http1?.retireIdlePeers();
    }

    uploadFailed(err: HttpError): void {
        this.hop.uploadFailed(err);
    }

    /**
     * The caller's `req.abort()` or `req.destroy(err)` (request.ts): before the response, the hop
     * fails with it; after, the response's body does (the stream is reset with CANCEL either way).
     */
    stop(err: Error | undefined): void {
        stopForCaller(this.hop, this.res, this.cancelled, err);
    }

    // The pool's side (SessionClaim).

    private claim(): void {
        this.waiting = true;
        this.pool.claim(this.key, this.settings, this);
    }

    granted(session: LiveSession, opened: boolean): void {
        this.scope.runInAsyncScope(this.open, this, session, opened);
    }

    private open(session: LiveSession, opened: boolean): void {
        this.waiting = false;
        this.session = session;
        this.reused = !opened;
        if (!opened) {
            this.hop.moments.connectionReused();
        }

        const method = this.hop.method;
        const bodyless = method === 'GET' || method === 'HEAD';
        let stream: ExchangeStream;
        try {
            stream = session.open(this.fields, bodyless) as ExchangeStream;
        } catch (err) {
            // The fields were checked as the exchange began: what is left is the session's state.
            this.body = undefined;
            this.hop.failed(requestError(err as CodedError));
            return;
        }

        stream[exchangeOf] = this;
        this.stream = stream;
        watchStreamEnd(stream);
        this.handle.attached(stream, session.socket, !opened);
        stream.on('response', onResponse);
        stream.on('error', onStreamError);
        stream.on('close', onStreamClose);
        const body = this.body as PendingBody;
        this.body = undefined;
        if (bodyless) {
            // END_STREAM on the HEADERS: the request is out with them (on a session that is up, Node
            // gives the stream its id, and emits 'ready', inside request()).
            this.uploaded();
            return;
        }

        stream.once('finish', onUploaded);
        if (body.stream) {
            if (body.onProgress !== undefined) {
                trackUpload(stream, declaredLength(this.fields['content-length']), body.onProgress, this);
            }

            body.replay.sendTo(stream);
        } else if (body.onProgress === undefined) {
            stream.end(body.body);
        } else {
            trackUpload(stream, declaredLength(this.fields['content-length']), body.onProgress, this).send(body.body);
        }
    }

    refused(err: Error, opened: boolean): void {
        this.scope.runInAsyncScope(this.openFailed, this, err, opened);
    }

    private openFailed(err: Error, opened: boolean): void {
        this.waiting = false;
        const proxy = this.hop.proxy;
        const failure =
            opened && proxy !== undefined
                ? (tunnelRefusal(proxy) ?? proxyRequestError(proxy, err))
                : requestError(err as CodedError);
        this.hop.failed(failure);
    }

    speaksHttp1(socket: Socket | undefined): void {
        this.scope.runInAsyncScope(this.goOnOverHttp1, this, socket);
    }

    private goOnOverHttp1(socket: Socket | undefined): void {
        this.waiting = false;
        const exchange = socket === undefined ? http1.open(this.hop) : http1OverSocket(this.hop, socket);
        this.http1 = exchange;
        this.handle.carriedBy(exchange.request);
        const body = this.body as PendingBody;
        this.body = undefined;
        sendPendingBody(body, exchange);
    }

    // The stream's side.

    streamResponded(received: IncomingHttpHeaders, raw: string[]): void {
        if (this.cancelled) {
            return;
        }

        const { headers, rawHeaders } = responseFields(received, raw);
        const res = responseOfStream(
            this.stream as ClientHttp2Stream,
            this.hop.method,
            Number(received[':status']),
            headers,
            rawHeaders
        );
        this.res = res;
        this.handle.emit('response', res);
        this.hop.responded(res);
    }

    /** The stream failed (`err`), or closed before its response ended (no `err`: reset without an error of Node's). */
    streamFailed(err: Error | undefined): void {
        if (this.cancelled && this.res === undefined) {
            return;
        }

        const stream = this.stream as ClientHttp2Stream;
        const failure = streamFailure(stream, this.session, err);
        if (this.res === undefined) {
            this.hop.failed(requestError(failure));
        } else {
            cutResponse(stream, failure);
        }
    }

    streamClosed(): void {
        const stream = this.stream as ClientHttp2Stream;
        if (!stream.errored && (this.res === undefined || !this.res.complete)) {
            // Closed without an error of Node's before the exchange was over: reset by the server with
            // NO_ERROR or CANCEL, or cut with its session.
            this.streamFailed(undefined);
        }

        this.handle.exchangeClosed();
        // Node's http2 core keeps a closed stream reachable for a while, often past a young-generation
        // collection: still pointing at the exchange, it would keep the whole call (hop, flow, response,
        // body) alive with it, and the collections would copy and promote all of it (docs/performance.md).
        (stream as ExchangeStream)[exchangeOf] = undefined;
        releaseResponse(stream);
    }

    uploaded(): void {
        this.hop.moments.uploaded();
        // As a ClientRequest's, never inside the call that sends it: its caller listens after that call.
        process.nextTick(emitFinish, this.handle);
    }
}

// Each in the exchange's own async context (Http2Exchange.scope).
function onResponse(this: ExchangeStream, headers: IncomingHttpHeaders, _flags: number, raw: string[]): void {
    const exchange = this[exchangeOf];
    exchange?.scope.runInAsyncScope(exchange.streamResponded, exchange, headers, raw);
}

function onStreamError(this: ExchangeStream, err: Error): void {
    const exchange = this[exchangeOf];
    exchange?.scope.runInAsyncScope(exchange.streamFailed, exchange, err);
}

function onStreamClose(this: ExchangeStream): void {
    const exchange = this[exchangeOf];
    exchange?.scope.runInAsyncScope(exchange.streamClosed, exchange);
}

function emitFinish(handle: Http2Request): void {
    handle.emit('finish');
}

function onUploaded(this: ExchangeStream): void {
    this[exchangeOf]?.uploaded();
}
