import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { net } from '../../common/node-modules.js';
import type { HttpError } from '../../errors/index.js';
import { isStream, type PreparedPayload, preparePayload } from '../bodies/payload.js';
import type { PayloadReplay } from '../bodies/payload-replay.js';
import { trackUpload, type UploadOwner } from '../bodies/progress.js';
import { aborted, clientFailure, requestError } from '../contract/errors.js';
import type { Agents, EffectiveOptions, RequestUri, ResendReason, TimedResponse } from '../contract/types.js';
import { usesProxy } from '../options/proxy.js';
import { announceHop, announceRequest, type Pipeline, reportHop, requestUriOf } from '../pipeline/pipeline.js';
import { type Destination, destinationOf } from './destination.js';
import { type ConnectionRoute, HopClock } from './hop-timings.js';
import { createNodeRequest } from './http1/node-http.js';
import { toNodeOptions } from './http1/node-options.js';
import { bytesSinceRelease, governSocketRelease, retireIdlePeers } from './http1/socket-release.js';
import { PhaseGuard, type PhaseGuardOwner } from './phase-guard.js';
import { type ProxyRoute, proxyRefusal, proxyRequestError, routeThroughProxy, watchProxy } from './proxy.js';

/** What a hop needs from the request it belongs to (request-flow.ts), and how it hands its end back. */
export interface HopOwner {
    readonly agents: Agents;
    readonly redirectCount: number;
    readonly retryCount: number;
    readonly staleResends: number;
    /**
     * The replay that sends this hop's stream payload, or why the stream cannot be sent; undefined
     * for a payload that is not a stream.
     */
    streamFor(payload: PreparedPayload, options: EffectiveOptions): PayloadReplay | HttpError | undefined;
    /** The hop's request exists, its listeners on: the first one is the promise's `req`. */
    requestCreated(req: ClientRequest, options: EffectiveOptions): void;
    /** The hop got a response, reported: follow it, retry it or finish with it. */
    hopResponded(hop: AnsweredHop, res: IncomingMessage): void;
    /**
     * True when the response the request ends with is read whole by the request's own reader (a
     * helper's) before any caller's code can see it: a hop with no pipeline then leaves noting the
     * end of its body to that reader (through its clock's `BodyNotes`) instead of listening for it.
     */
    readonly readsResponseBody?: boolean;
    /**
     * Optional: the response headers arrived, before the hop reports them: the owner may add fields
     * for the listeners to see (the cache layer its Cache-Status). Must not throw.
     */
    responseArrived?(hop: Hop, res: IncomingMessage): void;
    /** The hop's request failed before a response: retry or fail. */
    hopFailed(hop: Hop, err: HttpError): void;
    /** The request fails with `err`, nothing more to try. */
    fail(err: HttpError): void;
}

/** What the flow needs of a hop that got its response: a hop on the wire, or one the cache answered (cache/layer.ts). */
export type AnsweredHop = Pick<Hop, 'method' | 'options' | 'destination' | 'clock'>;

// The hop rides on its ClientRequest so the listeners below can be shared functions rather than
// closures made for every request.
const hopOf = Symbol('tracewire.hop');
type HopRequest = ClientRequest & { [hopOf]: Hop };

/**
 * One attempt on the wire: the first request, a redirect or a retry. It reports itself on the
 * pipeline (`preRequest` -> `request` -> `response`), owns its ClientRequest, destination and proxy
 * route, sends its payload, and ends exactly once, through `end()`, whatever happens first.
 */
export class Hop implements UploadOwner, PhaseGuardOwner {
    /** When each phase of the hop happened: its `timings` (README "Timings"). */
    readonly clock = new HopClock();
    /** The method as sent (a `preRequest` listener may change it). */
    method: string;
    /** Undefined until the request exists; stays so when it could not be created. */
    req: ClientRequest | undefined;
    /** Where the request goes; set before the request is created. */
    destination!: Destination;
    ended = false;

    private agent: Agent | undefined;
    private proxy: ProxyRoute | undefined;
    // The stream payload this hop sends, through the request's replay of it.
    private stream: PayloadReplay | undefined;
    // With a pipeline: the hop's URL as the listeners see it, and when the hop began.
    private uri: RequestUri | undefined;
    private start = 0;

    constructor(
        private readonly owner: HopOwner,
        method: string,
        /** The hop's effective options (`preRequest` listeners may edit them). */
        readonly options: EffectiveOptions,
        private readonly pipeline: Pipeline | undefined,
        /** Why this hop re-sends the one before it, when it is a stale connection's re-send. */
        readonly resendReason: ResendReason | undefined = undefined
    ) {
        this.method = method;
    }

    /** Announces the hop and sends its request; `target` is a URL or the cached destination of a string URI. */
    send(target: URL | Destination): void {
        const options = this.options;
        const pipeline = this.pipeline;
        let method = this.method;
        let headers = options.headers;
        // GET and HEAD carry no body (as with @hapi/wreck): a payload given for them is not sent.
        let payload = bodyless(method) ? undefined : preparePayload(options.payload, headers);
        let req: ClientRequest;
        try {
            let destination: Destination;
            if (pipeline === undefined) {
                destination = target instanceof URL ? destinationOf(target) : target;
            } else {
                this.start = Date.now();
                const uri = requestUriOf(target, method, headers, this.owner, this.resendReason);
                this.uri = uri;
                const givenPayload = options.payload;
                announceHop(pipeline, uri, options);
                if (this.ended) {
                    // A listener aborted the signal: nothing to send.
                    return;
                }

                // Listeners may have changed anything: read it all back.
                method = uri.method;
                headers = uri.headers;
                this.method = method;
                if (options.payload !== givenPayload) {
                    // The length described the old body.
                    delete headers['content-length'];
                    payload = bodyless(method) ? undefined : preparePayload(options.payload, headers);
                }

                // Listeners rarely touch the URL: when its href is unchanged, so is the destination made from it.
                destination = !(target instanceof URL) && uri.href === target.href ? target : destinationOf(uri);
            }

            if (payload instanceof Error) {
                // An object payload that has no JSON (a cycle, a BigInt).
                this.end(payload, undefined);
                return;
            }

            const stream = this.owner.streamFor(payload, options);
            if (stream instanceof Error) {
                this.end(stream, undefined);
                return;
            }

            this.stream = stream;
            this.destination = destination;
            const nodeOptions = toNodeOptions(destination, method, headers, options, this.owner.agents);
            // Each hop decides anew: a redirect may lead to a host NO_PROXY exempts, or the other way round.
            const route = usesProxy(options.proxy)
                ? routeThroughProxy(nodeOptions, destination, options.proxy as string | URL | true, this.owner.agents)
                : undefined;
            if (route instanceof Error) {
                this.end(route, undefined);
                return;
            }

            this.proxy = route;
            if (typeof nodeOptions.agent === 'object') {
                this.agent = nodeOptions.agent;
                governSocketRelease(this.agent);
            }

            req = createNodeRequest(destination.isHttps, nodeOptions, this.uri);
        } catch (err) {
            // Only reachable when a preRequest listener threw or made the request impossible (e.g. a
            // header Node refuses): the hop began, so it still gets its response event, without a request.
            this.end(clientFailure(`Request could not be created: ${(err as Error).message}`, err), undefined);
            return;
        }

        (req as HopRequest)[hopOf] = this;
        this.req = req;
        if (this.proxy !== undefined) {
            watchProxy(req, this.proxy);
        }

        req.on('response', onResponse);
        req.on('error', onRequestError);
        req.on('close', onRequestClose);
        // The moments of the hop's timings (hop-timings.ts) that the request tells.
        req.on('finish', onUpload);
        const guard = PhaseGuard.of(options.timeouts, this);
        if (this.proxy?.tunnel) {
            req.on('socket', onSocket);
            req.on('proxyConnect', onTunnelConnect);
            this.clock.requestCreated('tunnel', guard);
        } else {
            this.clock.requestCreated(guard === undefined ? 'named' : this.route(), guard);
            if (req.reusedSocket) {
                // The agent handed over a pooled socket inside http.request(): that is the moment (Node
                // tells the request a tick later), and there is no connection to follow.
                this.clock.socketReused();
            } else {
                req.on('socket', onSocket);
            }
        }
        this.owner.requestCreated(req, options);
        if (pipeline !== undefined) {
            const failure = announceRequest(pipeline, req);
            if (failure !== undefined) {
                this.end(failure, undefined);
                return;
            }
        }

        const upload =
            options.onUploadProgress === undefined ? undefined : trackUpload(req, options.onUploadProgress, this);
        if (isStream(payload)) {
            // Not a byte is read before the connection exists: a request that cannot connect leaves the stream whole.
            whenConnected(req, sendStreamPayload);
        } else if (upload !== undefined) {
            upload.send(payload);
        } else {
            req.end(payload);
        }
    }

    /** The caller's `onUploadProgress` threw: the hop fails with that error, or the request when the hop is over. */
    uploadFailed(_req: ClientRequest, err: HttpError): void {
        if (this.ended) {
            this.owner.fail(err);
        } else {
            this.end(err, undefined);
        }
    }

    /**
     * Ends the hop, once: reports it (`response`), lets go of a request that got no response, and
     * hands the outcome to the owner. `err` is the failure, or undefined with the response `res`.
     */
    end(err: HttpError | undefined, res: IncomingMessage | undefined): void {
        if (this.ended) {
            return;
        }

        this.ended = true;
        this.clock.hopEnded(err);
        const listenerFailure =
            this.pipeline === undefined
                ? undefined
                : reportHop(
                      this.pipeline,
                      err,
                      this.req,
                      res as TimedResponse | undefined,
                      this.start,
                      this.uri!,
                      this.clock.timings
                  );
        if (res !== undefined) {
            if (listenerFailure === undefined) {
                this.owner.hopResponded(this, res);
            } else {
                res.destroy();
                this.owner.fail(listenerFailure);
            }

            return;
        }

        const req = this.req;
        if (req === undefined) {
            // Nothing was sent: nothing to cancel or retry.
            this.owner.fail(listenerFailure ?? (err as HttpError));
            return;
        }

        this.stream?.detach();
        req.destroy();
        this.owner.hopFailed(this, err as HttpError);
    }

    /** The response headers arrived. */
    responded(res: IncomingMessage): void {
        if (this.ended) {
            // A response racing an abort or a timeout that already ended this hop.
            res.destroy();
            return;
        }

        this.clock.responded(res, this.pipeline !== undefined || this.owner.readsResponseBody !== true);
        const refusal = this.proxy === undefined ? undefined : proxyRefusal(this.proxy, res);
        if (refusal !== undefined) {
            res.destroy();
            this.end(refusal, undefined);
            return;
        }

        this.owner.responseArrived?.(this, res);
        this.end(undefined, res);
    }

    /** A phase outlasted its bound in the `timeouts` option: the hop fails with that 504. */
    phaseExpired(err: HttpError): void {
        this.end(err, undefined);
    }

    /** Whether a new connection of this hop starts with a lookup (the host it connects to is a name). */
    private route(): ConnectionRoute {
        const host = this.proxy?.hostname ?? (this.options.socketPath === undefined ? this.destination.hostname : '');
        return host !== '' && net.isIP(host) === 0 ? 'named' : 'address';
    }

    /** True when the request got a connection from the pool rather than a new one (Node tells). */
    get reusedSocket(): boolean {
        return this.req?.reusedSocket === true;
    }

    /**
     * The bytes the hop's connection read since the hop got it: 0 while no byte of a response came.
     * The socket-release policy marks each pooled socket with what it had read, so no per-request
     * listener is needed to learn where this hop's response would begin.
     */
    responseBytes(): number {
        const socket = this.req?.socket;
        return socket == null ? 0 : bytesSinceRelease(socket);
    }

    /** The hop's connection was stale: retire the idle connections of its pool that are older still. */
    retireIdlePeers(): void {
        const socket = this.req?.socket;
        if (this.agent !== undefined && socket != null) {
            retireIdlePeers(this.agent, socket);
        }
    }

    /** The 502 of a network error, naming the proxy when that could not be reached. */
    networkError(err: Error): HttpError {
        return this.proxy === undefined ? requestError(err) : proxyRequestError(this.proxy, err);
    }

    /** The request is connected: send the stream payload into it. */
    sendStream(req: ClientRequest): void {
        if (!this.ended) {
            this.stream!.sendTo(req);
        }
    }
}

function bodyless(method: string): boolean {
    return method === 'GET' || method === 'HEAD';
}

function onResponse(this: HopRequest, res: IncomingMessage): void {
    this[hopOf].responded(res);
}

function onRequestError(this: HopRequest, err: Error): void {
    const hop = this[hopOf];
    // Errors after the hop ended (the destroy that follows a timeout or an abort) are already reported.
    if (!hop.ended) {
        // req.abort() shows as a 'socket hang up' once the request is on the wire: report what the caller did.
        hop.end(this.aborted ? aborted(undefined, 'request') : hop.networkError(err), undefined);
    }
}

function onRequestClose(this: HopRequest): void {
    const hop = this[hopOf];
    // Closed before a response and without an error: the caller called req.abort() (Node reports no error for it).
    if (!hop.ended) {
        hop.end(aborted(undefined, 'request'), undefined);
    }
}

function onSocket(this: HopRequest, socket: Socket): void {
    this[hopOf].clock.socketAssigned(this, socket);
}

function onUpload(this: HopRequest): void {
    this[hopOf].clock.uploaded();
}

function onTunnelConnect(this: HopRequest, connect: { statusCode?: number }): void {
    this[hopOf].clock.tunnelConnected(connect.statusCode);
}

function sendStreamPayload(req: ClientRequest): void {
    (req as HopRequest)[hopOf].sendStream(req);
}

/**
 * Calls `callback` once `req` has a connected socket (TLS handshake done): at once for a socket
 * reused from the pool. Never called when the request fails first.
 */
function whenConnected(req: ClientRequest, callback: (req: ClientRequest) => void): void {
    req.once('socket', (socket) => {
        if (!socket.connecting) {
            callback(req);
            return;
        }

        const connected = () => {
            req.removeListener('close', abandoned);
            callback(req);
        };
        const abandoned = () => {
            socket.removeListener('secureConnect', connected);
            socket.removeListener('connect', connected);
        };
        socket.once('encrypted' in socket ? 'secureConnect' : 'connect', connected);
        req.once('close', abandoned);
    });
}
