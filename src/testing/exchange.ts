import type { IncomingMessage } from 'node:http';
import type { PayloadReplay } from '../client/bodies/payload-replay.js';
import type { UploadOwner } from '../client/bodies/progress.js';
import { type CodedError, clientFailure, requestError } from '../client/contract/errors.js';
import type { HopRequest, HopResponse, ProgressCallback } from '../client/contract/types.js';
import { requestHeaders } from '../client/wire/http2/headers.js';
import { type StoppableExchange, stopForCaller } from '../client/wire/http2/request.js';
import type { PendingBody } from '../client/wire/pending-body.js';
import type { Exchange, ExchangeHop } from '../client/wire/transport.js';
import { declaredLength } from '../common/message-body.js';
import type { HttpError } from '../errors/index.js';
import { type ConnectionOwner, type ConnectionSource, MockConnection } from './connection.js';
import { Interceptor } from './interceptor.js';
import type { RequestContext } from './interceptors.js';
import { mockedRequest, requestHead } from './mocked-request.js';
import { checkReply, prepareReply } from './reply.js';
import { receiveBody, sentHeaders } from './request-body.js';
import { MockHttp2Request, MockRequest } from './requests.js';
import { type BodyFeed, mockResponse, type ResponseOwner } from './response.js';
import type { MockedRequest, MockReplyFunction, MockResponse } from './types.js';

/** What an exchange needs of the mock it belongs to (mock-network.ts). */
export interface ExchangeHost {
    /**
     * The interceptor that answers a request by its head (counted as called), 'body' to wait for the
     * body, or undefined when none matches the head.
     */
    chooseByHead(context: RequestContext): Interceptor | 'body' | undefined;
    /** The interceptor that answers the request, its body read (counted as called); undefined when none does. */
    chooseByRequest(context: RequestContext, body: Buffer): Interceptor | undefined;
    /** The request was received: answered by `interceptor`, or by none (the error to fail it with is returned). */
    received(
        request: MockedRequest,
        interceptor: Interceptor | undefined,
        context: RequestContext
    ): HttpError | undefined;
    exchangeOver(exchange: MockExchange): void;
}

/**
 * One exchange a mock answers in place of the network (docs/testing.md), under the transport seam as
 * the HTTP/1.1 and HTTP/2 exchanges are (src/client/wire/transport.ts): it tells the hop the moments
 * of a connection that was there already (no lookup, connect or TLS handshake: those phases are not
 * measured), takes the body, and answers with the interceptor's reply or fault after its delay.
 */
export class MockExchange implements Exchange, StoppableExchange, UploadOwner, ConnectionOwner, ResponseOwner {
    readonly request: HopRequest;
    private readonly connection: MockConnection;
    private readonly handle: MockRequest | MockHttp2Request;
    private context: RequestContext;
    private interceptor: Interceptor | undefined;
    private pending: PendingBody | undefined;
    private received: MockedRequest | undefined;
    private body: Buffer = Buffer.alloc(0);
    private res: IncomingMessage | undefined;
    private feed: BodyFeed | undefined;
    private stopTimer: (() => void) | undefined;
    // Set once the hop let go of the exchange, or its response did: nothing more is reported or sent.
    private over = false;

    constructor(
        readonly hop: ExchangeHop,
        private readonly http2: boolean,
        source: ConnectionSource,
        private readonly host: ExchangeHost
    ) {
        this.connection = new MockConnection(source, http2, hop.moments, this);
        const { method, destination, headers } = hop;
        if (http2) {
            this.handle = new MockHttp2Request(
                requestHeaders(method, destination, headers),
                this,
                destination.hostname
            );
        } else {
            this.handle = new MockRequest(method, destination, headers, this);
        }

        this.request = this.handle as unknown as HopRequest;
        this.context = {
            head: requestHead(method, destination, {}),
            http2,
            secure: destination.isHttps,
            verifies: hop.options.rejectUnauthorized !== false
        };
    }

    // The hop's side (Exchange).

    sendBody(body: string | Buffer | undefined, onProgress: ProgressCallback | undefined): void {
        this.begin({ stream: false, body, onProgress });
    }

    sendStream(replay: PayloadReplay, onProgress: ProgressCallback | undefined): void {
        this.begin({ stream: true, replay, onProgress });
    }

    get reused(): boolean {
        return this.connection.reused;
    }

    responseBytes(): number {
        return this.res === undefined ? 0 : 1;
    }

    refusalOf(_res: HopResponse): HttpError | undefined {
        return undefined;
    }

    cancel(): void {
        this.end();
    }

    retireIdlePeers(): void {
        this.connection.retireIdle();
    }

    uploadFailed(err: HttpError): void {
        this.hop.uploadFailed(err);
    }

    /** The caller's `req.abort()` or `req.destroy(err)`: before the response the hop fails with it, after it the body does. */
    stop(err: Error | undefined): void {
        stopForCaller(this.hop, this.res, this.over, err);
    }

    /** The mock was closed under the exchange: it fails, as the request or as its body. */
    abandon(): void {
        const failure = clientFailure('The mock network was closed before the exchange ended');
        const res = this.res;
        if (res === undefined) {
            this.fail(failure);
        } else if (res.complete) {
            // Its body came whole, unread: nothing fails.
            this.end();
        } else if (!res.destroyed) {
            res.destroy(failure);
        }
    }

    // The request: the interceptor is chosen on the head when it can be, on the whole request otherwise.

    private begin(body: PendingBody): void {
        this.handle.sent();
        this.context = {
            ...this.context,
            head: requestHead(this.hop.method, this.hop.destination, sentHeaders(this.handle.getHeaders()))
        };
        this.pending = body;
        const chosen = this.host.chooseByHead(this.context);
        if (chosen instanceof Interceptor) {
            this.interceptor = chosen;
            const action = chosen.action;
            if (action?.kind === 'fault' && (action.fault === 'connection-refused' || action.fault === 'tls')) {
                // No connection: not a byte of the body is read.
                this.connection.attempt();
                this.record();
                this.after(chosen.headersDelay, () => this.act(chosen));
                return;
            }
        }

        this.connection.open();
        this.handle.reusedSocket = this.connection.reused;
        this.upload();
    }

    private upload(): void {
        const pending = this.pending as PendingBody;
        this.pending = undefined;
        const declared = declaredLength(this.handle.getHeader('content-length'));
        receiveBody(pending, declared, this, (body) => this.uploaded(body));
    }

    private uploaded(body: Buffer): void {
        if (this.over) {
            return;
        }

        this.body = body;
        this.hop.moments.uploaded();
        process.nextTick(finished, this.handle);
        if (this.interceptor === undefined) {
            this.interceptor = this.host.chooseByRequest(this.context, body);
        }

        const unmatched = this.record();
        const interceptor = this.interceptor;
        if (interceptor === undefined) {
            this.fail(unmatched as HttpError);
            return;
        }

        this.after(interceptor.headersDelay, () => this.act(interceptor));
    }

    /** The request as received, kept by the mock; the error of an unmatched one. */
    private record(): HttpError | undefined {
        const request = mockedRequest(this.hop.method, this.hop.destination, this.context.head, this.body, this.http2);
        this.received = request;
        return this.host.received(request, this.interceptor, this.context);
    }

    /** Runs `then` after `delay` ms (on the next turn of the loop for 0), unless the exchange is over by then. */
    private after(delay: number, then: () => void): void {
        const run = () => {
            this.stopTimer = undefined;
            if (!this.over) {
                then();
            }
        };
        if (delay > 0) {
            const timer = setTimeout(run, delay);
            this.stopTimer = () => clearTimeout(timer);
        } else {
            const immediate = setImmediate(run);
            this.stopTimer = () => clearImmediate(immediate);
        }
    }

    // The answer.

    private act(interceptor: Interceptor): void {
        const action = interceptor.action;
        if (action === undefined) {
            return;
        }

        if (action.kind === 'fault') {
            this.connection.fault(action.fault, action.details, this.hop.destination);
            return;
        }

        const reply = action.reply;
        if (typeof reply !== 'function') {
            this.respond(reply, interceptor);
            return;
        }

        madeReply(reply, this.received as MockedRequest).then(
            (response) => {
                if (!this.over) {
                    this.respond(response, interceptor);
                }
            },
            (err: unknown) => this.replyFailed(err)
        );
    }

    private replyFailed(err: unknown): void {
        const message = err instanceof Error ? err.message : String(err);
        this.fail(clientFailure(`The mock's reply function failed: ${message}`, err));
    }

    private respond(response: MockResponse, interceptor: Interceptor): void {
        const reply = prepareReply(response, this.hop.method, this.http2);
        const { res, feed } = mockResponse(reply, this.http2 ? '2.0' : '1.1', interceptor.cut, this);
        if (!this.http2) {
            // As Node's HTTP/1.1 client: the response knows its request (a HEAD's body is then known to be none).
            (res as IncomingMessage & { req?: unknown }).req = this.handle;
        }

        this.res = res;
        this.feed = feed;
        const close = reply.fields.some(([name, value]) => name.toLowerCase() === 'connection' && /close/i.test(value));
        res.once('end', () => this.responseEnded(close));
        this.handle.emit('response', res);
        this.hop.responded(res);
        feed.start(interceptor.bodyDelay);
    }

    // The connection's side (ConnectionOwner).

    failedBeforeResponse(err: CodedError): void {
        this.fail(requestError(err));
    }

    cutResponse(err: CodedError): boolean {
        const res = this.res;
        if (res === undefined) {
            return false;
        }

        if (!res.complete && !res.destroyed) {
            res.destroy(err);
        }

        return true;
    }

    // The response's side (ResponseOwner).

    bodyCut(): void {
        this.connection.cut();
    }

    responseDestroyed(): void {
        this.end();
    }

    private responseEnded(close: boolean): void {
        if (!this.over) {
            this.connection.responseEnded(close);
        }

        this.end();
    }

    private fail(err: HttpError): void {
        if (!this.over) {
            this.hop.failed(err);
        }
    }

    /** The exchange is over, whatever ended it: nothing more is sent, and its stream leaves its session. */
    private end(): void {
        if (this.over) {
            return;
        }

        this.over = true;
        this.stopTimer?.();
        this.feed?.stop();
        this.connection.close();
        this.handle.exchangeClosed();
        this.host.exchangeOver(this);
    }
}

/** What a reply function makes of `request`, checked: a rejection when it throws or gives a reply that cannot be sent. */
function madeReply(reply: MockReplyFunction, request: MockedRequest): Promise<MockResponse> {
    return new Promise<MockResponse>((resolve) => resolve(reply(request))).then((response) => {
        checkReply(response);
        return response;
    });
}

function finished(handle: MockRequest | MockHttp2Request): void {
    handle.finished();
}
