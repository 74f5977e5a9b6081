import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { declaredLength } from '../../../common/message-body.js';
import type { HttpError } from '../../../errors/index.js';
import type { PayloadReplay } from '../../bodies/payload-replay.js';
import { trackUpload, type UploadOwner } from '../../bodies/progress.js';
import { aborted, type CodedError, requestError } from '../../contract/errors.js';
import type { HopRequest, HopResponse, ProgressCallback } from '../../contract/types.js';
import { agentFor, tlsSettingsFor } from '../connection-settings.js';
import { http1, http1OverSocket } from '../http1/exchange.js';
import { proxyRequestError, tunnelRefusal } from '../proxy.js';
import type { ConnectionMoments, Exchange, ExchangeHop, Transport } from '../transport.js';
import type { ConnectionTarget } from './connect.js';
import { requestHeaders, responseFields } from './headers.js';
import { type SessionClaim, type SessionPool, sessionPoolOf } from './pool.js';
import { Http2Request, type StoppableExchange } from './request.js';
import { cutResponse, responseOfStream } from './response.js';
import type { LiveSession } from './session.js';
import { sessionKey } from './session-key.js';
import { type Http2Settings, http2SettingsOf } from './settings.js';

/**
 * HTTP/2 under the transport seam (transport.ts; README "HTTP/2"): an exchange is one stream of a
 * session from the client's pool (pool.ts). The first stream to an origin waits for the connection
 * its hop opens (the moments are that hop's) or another hop is opening; a stream on a session that
 * was there is on a reused connection. When ALPN answers `http/1.1`, the exchange goes on over
 * HTTP/1.1 (http1/exchange.ts) on that very connection, and the origin's later hops go to the agents.
 */
export const http2: Transport = {
    open(hop: ExchangeHop): Exchange {
        const { destination, options } = hop;
        const settings = http2SettingsOf(options.http2 as true | object);
        const agent = agentFor(destination, options, hop.agents);
        const target: ConnectionTarget = {
            destination,
            options,
            proxy: hop.proxy,
            tls: destination.isHttps ? tlsSettingsFor(destination, options, agent) : undefined,
            // Over TLS, ALPN decides; in cleartext (h2c), HTTP/2 with prior knowledge.
            alpn: ['h2', 'http/1.1']
        };
        const key = sessionKey(target, agent, settings);
        const pool = sessionPoolOf(hop.agents);
        if (pool.speaksHttp1(key)) {
            return http1.open(hop);
        }

        return new Http2Exchange(hop, pool, key, target, settings);
    }
};

// The HTTP/2 error codes read here (RFC 9113 7).
const refusedStream = 0x7;
const cancel = 0x8;

/** What the body waits as, while the stream does not exist yet. */
type PendingBody =
    | {
          readonly stream: false;
          readonly body: string | Buffer | undefined;
          readonly onProgress: ProgressCallback | undefined;
      }
    | { readonly stream: true; readonly replay: PayloadReplay; readonly onProgress: ProgressCallback | undefined };

// The exchange rides on its stream, so the listeners below are shared functions rather than closures.
const exchangeOf = Symbol('tracewire.http2Exchange');
type ExchangeStream = ClientHttp2Stream & { [exchangeOf]: Http2Exchange };

class Http2Exchange implements Exchange, SessionClaim, StoppableExchange, UploadOwner {
    /**
     * The stream's handle, shown where the public types say `ClientRequest`: it has the members of one
     * that mean something for a stream (request.ts), and `isHttp2Request()` tells it apart.
     */
    readonly request: HopRequest;
    private readonly handle: Http2Request;
    reused = false;
    private stream: ClientHttp2Stream | undefined;
    private session: LiveSession | undefined;
    // The HTTP/1.1 exchange this one became, when ALPN answered `http/1.1`.
    private http1: Exchange | undefined;
    private body: PendingBody | undefined;
    private waiting = true;
    private cancelled = false;
    private responded = false;
    private readonly fields: OutgoingHttpHeaders;

    constructor(
        readonly hop: ExchangeHop,
        private readonly pool: SessionPool,
        private readonly key: string,
        readonly target: ConnectionTarget,
        settings: Http2Settings
    ) {
        this.fields = requestHeaders(hop.method, hop.destination, hop.headers);
        this.handle = new Http2Request(this.fields, this);
        this.request = this.handle as unknown as HopRequest;
        pool.claim(key, settings, this);
    }

    get moments(): ConnectionMoments | undefined {
        return this.cancelled ? undefined : this.hop.moments;
    }

    // The pool's side (SessionClaim).

    granted(session: LiveSession, opened: boolean): void {
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
        this.handle.attached(stream, session.socket, !opened);
        stream.on('response', onResponse);
        stream.on('error', onStreamError);
        stream.on('close', onStreamClose);
        if (bodyless) {
            // The HEADERS carry END_STREAM: the request is out as they are.
            stream.once('ready', onUploaded);
        } else {
            stream.once('finish', onUploaded);
        }

        const body = this.body;
        this.body = undefined;
        if (body?.stream === true) {
            this.sendStream(body.replay, body.onProgress);
        } else if (body !== undefined && !bodyless) {
            this.sendBody(body.body, body.onProgress);
        }
    }

    refused(err: Error, opened: boolean): void {
        this.waiting = false;
        if (this.cancelled) {
            return;
        }

        const proxy = this.hop.proxy;
        const failure =
            opened && proxy !== undefined
                ? (tunnelRefusal(proxy) ?? proxyRequestError(proxy, err))
                : requestError(err as CodedError);
        this.hop.failed(failure);
    }

    speaksHttp1(socket: Socket | undefined): void {
        this.waiting = false;
        if (this.cancelled) {
            socket?.destroy();
            return;
        }

        const exchange = socket === undefined ? http1.open(this.hop) : http1OverSocket(this.hop, socket);
        this.http1 = exchange;
        this.handle.carriedBy(exchange.request);
        const body = this.body;
        this.body = undefined;
        if (body?.stream === true) {
            exchange.sendStream(body.replay, body.onProgress);
        } else if (body !== undefined) {
            exchange.sendBody(body.body, body.onProgress);
        }
    }

    // The hop's side (Exchange).

    responseBytes(): number {
        return this.http1 !== undefined ? this.http1.responseBytes() : this.responded ? 1 : 0;
    }

    sendBody(body: string | Buffer | undefined, onProgress: ProgressCallback | undefined): void {
        const stream = this.stream;
        if (this.http1 !== undefined) {
            this.http1.sendBody(body, onProgress);
        } else if (stream === undefined) {
            this.body = { stream: false, body, onProgress };
        } else if (stream.writableEnded) {
            // A bodyless request: its HEADERS ended the stream.
        } else if (onProgress === undefined) {
            stream.end(body);
        } else {
            trackUpload(stream, declaredLength(this.fields['content-length']), onProgress, this).send(body);
        }
    }

    sendStream(replay: PayloadReplay, onProgress: ProgressCallback | undefined): void {
        const stream = this.stream;
        if (this.http1 !== undefined) {
            this.http1.sendStream(replay, onProgress);
        } else if (stream === undefined) {
            // Not a byte is read before the stream exists: a request that gets no session leaves the stream whole.
            this.body = { stream: true, replay, onProgress };
        } else {
            if (onProgress !== undefined) {
                trackUpload(stream, declaredLength(this.fields['content-length']), onProgress, this);
            }

            replay.sendTo(stream);
        }
    }

    refusalOf(res: HopResponse): HttpError | undefined {
        return this.http1?.refusalOf(res);
    }

    cancel(): void {
        if (this.cancelled) {
            return;
        }

        this.cancelled = true;
        this.body = undefined;
        if (this.http1 !== undefined) {
            this.http1.cancel();
        } else if (this.waiting) {
            this.pool.release(this.key, this);
        } else {
            const stream = this.stream;
            if (stream !== undefined && !stream.closed && !stream.destroyed) {
                // RST_STREAM CANCEL: the server stops; the session carries on with its other streams.
                stream.close(cancel);
            }
        }
    }

    retireIdlePeers(): void {
        this.http1?.retireIdlePeers();
    }

    uploadFailed(err: HttpError): void {
        this.hop.uploadFailed(err);
    }

    /** The caller's `req.abort()` or `req.destroy(err)` (request.ts). */
    stop(err: Error | undefined): void {
        if (!this.cancelled) {
            this.hop.failed(err === undefined ? aborted(undefined, 'request') : requestError(err));
        }
    }

    // The stream's side.

    streamResponded(received: IncomingHttpHeaders, raw: string[] | undefined): void {
        const stream = this.stream as ClientHttp2Stream;
        if (this.cancelled) {
            return;
        }

        this.responded = true;
        const { headers, rawHeaders } = responseFields(received, raw);
        const res = responseOfStream(stream, Number(received[':status']), headers, rawHeaders);
        this.handle.emit('response', res);
        this.hop.responded(res);
    }

    streamFailed(err: Error): void {
        const stream = this.stream as ClientHttp2Stream;
        if (this.responded) {
            cutResponse(stream, this.failure(err));
        } else if (!this.cancelled) {
            this.hop.failed(requestError(this.failure(err)));
        }
    }

    streamClosed(): void {
        const stream = this.stream as ClientHttp2Stream;
        // Closed without an error of its own before the exchange was over: reset by the server with
        // NO_ERROR, or cut with the session. A CANCEL is ours: the hop let the stream go.
        if (!stream.errored && stream.rstCode !== cancel) {
            this.streamFailed(
                coded(
                    `The HTTP/2 stream closed before the response ended (RST_STREAM code ${stream.rstCode ?? 0})`,
                    'ERR_HTTP2_STREAM_CLOSED',
                    new Error('stream closed')
                )
            );
        }

        this.handle.closed();
    }

    /**
     * The error a failed stream reports, its cause kept: a refusal says the request was never
     * processed (REFUSED_STREAM, or a stream above the last one a GOAWAY says the server processed),
     * which the flow may send again (flow/stale-connection.ts); a session that went away tells why.
     */
    private failure(err: Error): CodedError {
        const stream = this.stream as ClientHttp2Stream;
        const end = this.session?.end;
        const id = stream.id;
        let failure: CodedError = err;
        if (stream.rstCode === refusedStream) {
            const goaway = end?.event === 'goaway' && id !== undefined && id > (end.lastStreamId ?? 0);
            failure = goaway
                ? coded(
                      `The HTTP/2 server closed the session (GOAWAY, error code ${end?.errorCode}) before processing stream ${id} (it processed up to ${end?.lastStreamId})`,
                      'ERR_HTTP2_GOAWAY',
                      err
                  )
                : coded(
                      'The HTTP/2 server refused the stream (REFUSED_STREAM): it did not process it',
                      'ERR_HTTP2_REFUSED_STREAM',
                      err
                  );
        }

        if (end !== undefined || stream.rstCode !== undefined) {
            (failure as CodedError & { http2?: unknown }).http2 = {
                streamId: id,
                rstCode: stream.rstCode,
                session: end
            };
        }

        return failure;
    }
}

function coded(message: string, code: string, cause: Error): CodedError {
    return Object.assign(new Error(message, { cause }), { code });
}

function onResponse(this: ExchangeStream, headers: IncomingHttpHeaders, _flags: number, raw?: string[]): void {
    this[exchangeOf].streamResponded(headers, raw);
}

function onStreamError(this: ExchangeStream, err: Error): void {
    this[exchangeOf].streamFailed(err);
}

function onStreamClose(this: ExchangeStream): void {
    this[exchangeOf].streamClosed();
}

function onUploaded(this: ExchangeStream): void {
    this[exchangeOf].hop.moments.uploaded();
}
