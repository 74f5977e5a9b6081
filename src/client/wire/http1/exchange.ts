import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { declaredLength } from '../../../common/message-body.js';
import type { HttpError } from '../../../errors/index.js';
import type { PayloadReplay } from '../../bodies/payload-replay.js';
import { trackUpload, type UploadOwner } from '../../bodies/progress.js';
import { aborted, clientFailure, requestError } from '../../contract/errors.js';
import type { ProgressCallback } from '../../contract/types.js';
import { type ProxyRoute, proxyRefusal, proxyRequestError } from '../proxy.js';
import { followConnection, followHandshake } from '../socket-moments.js';
import type { Exchange, ExchangeHop, Transport } from '../transport.js';
import { createNodeRequest } from './node-http.js';
import { toNodeOptions } from './node-options.js';
import { throughProxy, watchProxy } from './proxy-agents.js';
import { bytesSinceRelease, governSocketRelease, retireIdlePeers } from './socket-release.js';
import { exchangeEnded, type QueuedWrite, writeThisTurn } from './turn-writes.js';

/**
 * HTTP/1.1 under the transport seam (transport.ts): an exchange is one `ClientRequest` on a
 * `node:http`/`node:https` agent (the client's pools, a caller's agent, or a proxy's), put under the
 * client's socket-release policy (socket-release.ts). Its listeners on the request and, while a new
 * connection is made, on the socket tell the hop the moments and the outcome.
 */
export const http1: Transport = {
    open(hop: ExchangeHop): Exchange {
        const { destination, options, proxy } = hop;
        const nodeOptions = toNodeOptions(destination, hop.method, hop.headers, options, hop.agents);
        if (proxy !== undefined) {
            throughProxy(nodeOptions, destination, proxy, hop.agents);
        }

        const agent = typeof nodeOptions.agent === 'object' ? nodeOptions.agent : undefined;
        if (agent !== undefined) {
            governSocketRelease(agent);
        }

        return new Http1Exchange(hop, createNodeRequest(destination.isHttps, nodeOptions, hop.scope), agent, proxy);
    }
};

/**
 * An HTTP/1.1 exchange on a connection made and timed already: the one an `http2` hop opened, whose
 * server answered ALPN with `http/1.1` (http2/pool.ts). No agent: the connection carries this one
 * exchange and closes after it, as with `agent: false`; the origin's later hops go to the agents.
 */
export function http1OverSocket(hop: ExchangeHop, socket: Socket): Exchange {
    const nodeOptions = toNodeOptions(hop.destination, hop.method, hop.headers, hop.options, hop.agents);
    nodeOptions.agent = undefined;
    nodeOptions.createConnection = () => socket;
    const req = createNodeRequest(hop.destination.isHttps, nodeOptions, hop.scope);
    return new Http1Exchange(hop, req, undefined, undefined, true);
}

// The exchange rides on its request, so the listeners below can be shared functions rather than
// closures made for every request (the connection's moments are followed the same way: socket-moments.ts).
const exchangeOf = Symbol('tracewire.exchange');
type ExchangeRequest = ClientRequest & { [exchangeOf]: Http1Exchange };

class Http1Exchange implements Exchange, UploadOwner, QueuedWrite {
    // Set once the hop let go of the exchange (it failed or was stopped): nothing more is reported or sent.
    private cancelled = false;
    // The response arrived: the request's `close` that follows every exchange then reports nothing.
    private answered = false;
    // The body the request ends with, while it waits for its turn's writes (turn-writes.ts).
    private queuedBody: string | Buffer | undefined;
    // Counted among the requests awaiting a response (turn-writes.ts) until the exchange ends.
    private awaiting = false;

    constructor(
        readonly hop: ExchangeHop,
        readonly request: ClientRequest,
        private readonly agent: Agent | undefined,
        private readonly proxy: ProxyRoute | undefined,
        /** True for a connection whose moments were told as it was made (`http1OverSocket`). */
        connected = false
    ) {
        const req = request as ExchangeRequest;
        req[exchangeOf] = this;
        if (proxy !== undefined) {
            watchProxy(req, proxy);
        }

        req.on('response', onResponse);
        req.on('error', onRequestError);
        req.on('close', onRequestClose);
        req.on('finish', onFinish);
        if (connected) {
            // Nothing of the connection to follow.
        } else if (proxy?.tunnel) {
            hop.moments.tunnelOpening();
            req.on('socket', onSocket);
            req.on('proxyConnect', onTunnelConnect);
        } else if (req.reusedSocket) {
            // The agent handed over a pooled socket inside http.request(): that is the moment (Node
            // tells the request a tick later), and there is no connection to follow.
            hop.moments.connectionReused();
        } else {
            req.on('socket', onSocket);
        }
    }

    get reused(): boolean {
        return this.request.reusedSocket === true;
    }

    /**
     * The socket-release policy marks each pooled socket with what it had read, so no per-request
     * listener is needed to learn where this exchange's response would begin.
     */
    responseBytes(): number {
        const socket = this.request.socket;
        return socket == null ? 0 : bytesSinceRelease(socket);
    }

    retireIdlePeers(): void {
        const socket = this.request.socket;
        if (this.agent !== undefined && socket != null) {
            retireIdlePeers(this.agent, socket);
        }
    }

    sendBody(body: string | Buffer | undefined, onProgress: ProgressCallback | undefined): void {
        if (onProgress === undefined) {
            this.queuedBody = body;
            this.awaiting = true;
            writeThisTurn(this);
        } else {
            this.upload(onProgress).send(body);
        }
    }

    writeQueued(): void {
        const body = this.queuedBody;
        this.queuedBody = undefined;
        // Dropped while it waited: an abort, a timeout, a failed connection, a listener's destroy().
        if (this.cancelled || this.request.destroyed) {
            return;
        }

        try {
            this.request.end(body);
        } catch (err) {
            // Node checked the body and the headers when they were given: nothing is known to throw here, but
            // one request's throw must neither leave its hop waiting nor stop the turn's other writes.
            this.hop.failed(clientFailure(`Request could not be sent: ${(err as Error).message}`, err));
        }
    }

    sendStream(replay: PayloadReplay, onProgress: ProgressCallback | undefined): void {
        if (onProgress !== undefined) {
            this.upload(onProgress);
        }

        // Not a byte is read before the connection exists: a request that cannot connect leaves the stream whole.
        whenConnected(this.request, () => {
            if (!this.cancelled) {
                replay.sendTo(this.request);
            }
        });
    }

    cancel(): void {
        this.cancelled = true;
        this.ended();
        this.request.destroy();
    }

    /** The exchange is over for the turn's writes: answered, failed or dropped (the first of these only). */
    private ended(): void {
        if (this.awaiting) {
            this.awaiting = false;
            exchangeEnded();
        }
    }

    uploadFailed(err: HttpError): void {
        this.hop.uploadFailed(err);
    }

    private upload(onProgress: ProgressCallback) {
        return trackUpload(this.request, declaredLength(this.request.getHeader('content-length')), onProgress, this);
    }

    refusalOf(res: IncomingMessage): HttpError | undefined {
        return this.proxy === undefined ? undefined : proxyRefusal(this.proxy, res);
    }

    responded(res: IncomingMessage): void {
        this.ended();
        if (this.cancelled) {
            // A response racing an abort or a timeout that already ended the hop.
            res.destroy();
            return;
        }

        this.answered = true;
        this.hop.responded(res);
    }

    requestFailed(err: Error): void {
        this.ended();
        // Errors after the hop let go (the destroy that follows a timeout or an abort) are already reported.
        if (!this.cancelled) {
            // req.abort() shows as a 'socket hang up' once the request is on the wire: report what the caller did.
            this.hop.failed(this.request.aborted ? aborted(undefined, 'request') : this.networkError(err));
        }
    }

    requestClosed(): void {
        this.ended();
        // Closed before a response and without an error: the caller called req.abort() (Node reports no error for it).
        // Checked before the error is made: every exchange's request closes, and an error costs its stack.
        if (!this.cancelled && !this.answered) {
            this.hop.failed(aborted(undefined, 'request'));
        }
    }

    /** The request got its socket: a pooled one (after a wait in the agent's queue), or one still connecting, whose moments are then followed. */
    socketAssigned(socket: Socket): void {
        const moments = this.hop.moments;
        if (this.request.reusedSocket) {
            moments.connectionReused();
            return;
        }

        if (this.proxy?.tunnel) {
            // The tunnel is up (`proxyConnect`); TLS to the origin runs through it now.
            moments.tunnelAssigned();
            followHandshake(socket, this.hop);
            return;
        }

        if (!socket.connecting) {
            // A connected socket from a custom agent: nothing of its making to time.
            moments.connectionReady();
            return;
        }

        // The host it connects to: the proxy's, if any; none over a UNIX socket.
        const host =
            this.proxy?.hostname ?? (this.hop.options.socketPath === undefined ? this.hop.destination.hostname : '');
        followConnection(socket, host, this.hop);
    }

    /** The 502 of a network error, naming the proxy when that could not be reached. */
    private networkError(err: Error): HttpError {
        return this.proxy === undefined ? requestError(err) : proxyRequestError(this.proxy, err);
    }
}

function onResponse(this: ExchangeRequest, res: IncomingMessage): void {
    this[exchangeOf].responded(res);
}

function onRequestError(this: ExchangeRequest, err: Error): void {
    this[exchangeOf].requestFailed(err);
}

function onRequestClose(this: ExchangeRequest): void {
    this[exchangeOf].requestClosed();
}

function onFinish(this: ExchangeRequest): void {
    this[exchangeOf].hop.moments.uploaded();
}

function onSocket(this: ExchangeRequest, socket: Socket): void {
    this[exchangeOf].socketAssigned(socket);
}

function onTunnelConnect(this: ExchangeRequest, connect: { statusCode?: number }): void {
    this[exchangeOf].hop.moments.tunnelConnected(connect.statusCode);
}

/**
 * Calls `callback` once `req` has a connected socket (TLS handshake done): at once for a socket
 * reused from the pool. Never called when the request fails first.
 */
function whenConnected(req: ClientRequest, callback: () => void): void {
    req.once('socket', (socket) => {
        if (!socket.connecting) {
            callback();
            return;
        }

        const connected = () => {
            req.removeListener('close', abandoned);
            callback();
        };
        const abandoned = () => {
            socket.removeListener('secureConnect', connected);
            socket.removeListener('connect', connected);
        };
        socket.once('encrypted' in socket ? 'secureConnect' : 'connect', connected);
        req.once('close', abandoned);
    });
}
