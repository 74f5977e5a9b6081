import type { HttpError } from '../../errors/index.js';
import { isStream, type PreparedPayload, preparePayload } from '../bodies/payload.js';
import type { PayloadReplay } from '../bodies/payload-replay.js';
import { clientFailure } from '../contract/errors.js';
import type {
    Agents,
    EffectiveOptions,
    HopRequest,
    HopResponse,
    RequestUri,
    ResendReason,
    TimedResponse
} from '../contract/types.js';
import { usesProxy } from '../options/proxy.js';
import { announceHop, announceRequest, type Pipeline, reportHop, requestUriOf } from '../pipeline/pipeline.js';
import type { HopTrace } from '../pipeline/tracing.js';
import { type Destination, destinationOf } from './destination.js';
import { HopClock } from './hop-timings.js';
import { PhaseGuard, type PhaseGuardOwner } from './phase-guard.js';
import { originHeaders, type ProxyRoute, proxyRouteOf } from './proxy.js';
import type { ConnectionMoments, Exchange, ExchangeHop } from './transport.js';
import { openExchange } from './transport-choice.js';

/** What a hop needs from the call it belongs to (flow/hop-loop.ts), and how it hands its end back. */
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
    requestCreated(req: HopRequest, options: EffectiveOptions): void;
    /** The hop got a response, reported: follow it, retry it or finish with it. */
    hopResponded(hop: AnsweredHop, res: HopResponse): void;
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
    responseArrived?(hop: Hop, res: HopResponse): void;
    /** The hop's request failed before a response: retry or fail. */
    hopFailed(hop: Hop, err: HttpError): void;
    /** True for a hop no call waits for: a cache's background revalidation (its tracing says so). */
    readonly background?: boolean;
    /** The request fails with `err`, nothing more to try. */
    fail(err: HttpError): void;
}

/** What the flow needs of a hop that got its response: a hop on the wire, or one the cache answered (cache/layer.ts). */
export type AnsweredHop = Pick<Hop, 'method' | 'options' | 'destination' | 'clock'>;

/**
 * One attempt on the wire: the first request, a redirect or a retry. It reports itself on the
 * pipeline (`preRequest` -> `request` -> `response`), decides its destination and its proxy, drives
 * one exchange through its transport (transport.ts), keeps its timings and phase bounds, and ends
 * exactly once, through `end()`, whatever happens first.
 */
export class Hop implements ExchangeHop, PhaseGuardOwner {
    /** When each phase of the hop happened: its `timings` (README "Timings"). */
    readonly clock = new HopClock();
    /** The method as sent (a `preRequest` listener may change it). */
    method: string;
    /** Undefined until the request exists; stays so when it could not be created. */
    req: HopRequest | undefined;
    /** Where the request goes; set before the request is created. */
    destination!: Destination;
    /** The headers sent; set before the request is created. */
    headers!: EffectiveOptions['headers'];
    /** The proxy the hop goes through, if any; set before the request is created. */
    proxy: ProxyRoute | undefined;
    ended = false;

    private exchange: Exchange | undefined;
    // The stream payload this hop sends, through the request's replay of it.
    private stream: PayloadReplay | undefined;
    // With a pipeline: the hop's URL as the listeners see it, and when the hop began.
    private uri: RequestUri | undefined;
    private start = 0;
    // When the call is traced (pipeline/tracing.ts).
    private trace: HopTrace | undefined;

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

    get agents(): Agents {
        return this.owner.agents;
    }

    get moments(): ConnectionMoments {
        return this.clock;
    }

    get scope(): object | undefined {
        return this.uri;
    }

    /** The `uri` of the hop's events, once it is announced; undefined without a pipeline. */
    get eventUri(): RequestUri | undefined {
        return this.uri;
    }

    /** Announces the hop and sends its request; `target` is a URL or the cached destination of a string URI. */
    send(target: URL | Destination): void {
        const tracing = this.pipeline?.tracing;
        if (tracing === undefined) {
            this.sendNow(target);
            return;
        }

        // Traced: the hop's start wraps all it does before its request is sent (its events included).
        const uri = this.announcedUri(target);
        const trace = tracing.hop(uri, this.options, this.clock.timings, false, this.owner.background === true);
        this.trace = trace;
        trace.begin(() => this.sendNow(target));
    }

    private announcedUri(target: URL | Destination): RequestUri {
        this.start = Date.now();
        const uri = requestUriOf(target, this.method, this.options.headers, this.owner, this.resendReason);
        this.uri = uri;
        return uri;
    }

    private sendNow(target: URL | Destination): void {
        const options = this.options;
        const pipeline = this.pipeline;
        let method = this.method;
        let headers = options.headers;
        // GET and HEAD carry no body (as with @hapi/wreck): a payload given for them is not sent.
        let payload = bodyless(method) ? undefined : preparePayload(options.payload, headers);
        let exchange: Exchange;
        try {
            let destination: Destination;
            if (pipeline === undefined) {
                destination = target instanceof URL ? destinationOf(target) : target;
            } else {
                const uri = this.uri ?? this.announcedUri(target);
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
            if (usesProxy(options.proxy)) {
                const route = proxyRouteOf(options.proxy as string | URL | true, destination, headers);
                if (route instanceof Error) {
                    this.end(route, undefined);
                    return;
                }

                this.proxy = route;
                headers = originHeaders(headers, route);
            }

            this.headers = headers;
            this.clock.boundBy(PhaseGuard.of(options.timeouts, this));
            exchange = openExchange(this);
        } catch (err) {
            // Only reachable when a preRequest listener threw or made the request impossible (e.g. a
            // header Node refuses): the hop began, so it still gets its response event, without a request.
            this.end(clientFailure(`Request could not be created: ${(err as Error).message}`, err), undefined);
            return;
        }

        this.exchange = exchange;
        const req = exchange.request;
        this.req = req;
        this.trace?.requested(req);
        this.owner.requestCreated(req, options);
        if (pipeline !== undefined) {
            const failure = announceRequest(pipeline, req);
            if (failure !== undefined) {
                this.end(failure, undefined);
                return;
            }
        }

        if (isStream(payload)) {
            exchange.sendStream(this.stream as PayloadReplay, options.onUploadProgress);
        } else {
            exchange.sendBody(payload, options.onUploadProgress);
        }
    }

    /** The caller's `onUploadProgress` threw: the hop fails with that error, or the request when the hop is over. */
    uploadFailed(err: HttpError): void {
        if (this.ended) {
            this.owner.fail(err);
        } else {
            this.end(err, undefined);
        }
    }

    /**
     * Ends the hop, once: reports it (`response`), lets go of an exchange that got no response, and
     * hands the outcome to the owner. `err` is the failure, or undefined with the response `res`.
     */
    end(err: HttpError | undefined, res: HopResponse | undefined): void {
        if (this.ended) {
            return;
        }

        this.ended = true;
        this.clock.hopEnded(err);
        const trace = this.trace;
        const listenerFailure =
            trace === undefined
                ? this.report(err, res)
                : trace.ended(err, res as TimedResponse | undefined, () => this.report(err, res));
        this.handOver(err, res, listenerFailure);
        trace?.handedOver();
    }

    /** The hop's `response` event, when it has a pipeline: the error a throwing listener makes, if one did. */
    private report(err: HttpError | undefined, res: HopResponse | undefined): HttpError | undefined {
        const pipeline = this.pipeline;
        return pipeline === undefined
            ? undefined
            : reportHop(
                  pipeline,
                  err,
                  this.req,
                  res as TimedResponse | undefined,
                  this.start,
                  this.uri!,
                  this.clock.timings
              );
    }

    /** Hands the hop's outcome to its owner, once reported; an exchange that got no response is let go. */
    private handOver(
        err: HttpError | undefined,
        res: HopResponse | undefined,
        listenerFailure: HttpError | undefined
    ): void {
        if (res !== undefined) {
            if (listenerFailure === undefined) {
                this.owner.hopResponded(this, res);
            } else {
                res.destroy();
                this.owner.fail(listenerFailure);
            }

            return;
        }

        const exchange = this.exchange;
        if (exchange === undefined) {
            // Nothing was sent: nothing to cancel or retry.
            this.owner.fail(listenerFailure ?? (err as HttpError));
            return;
        }

        this.stream?.detach();
        exchange.cancel();
        this.owner.hopFailed(this, err as HttpError);
    }

    /** The response headers arrived. */
    responded(res: HopResponse): void {
        if (this.ended) {
            // A response racing an abort or a timeout that already ended this hop.
            res.destroy();
            return;
        }

        this.clock.responded(res, this.pipeline !== undefined || this.owner.readsResponseBody !== true);
        const refusal = this.exchange?.refusalOf(res);
        if (refusal !== undefined) {
            res.destroy();
            this.end(refusal, undefined);
            return;
        }

        this.owner.responseArrived?.(this, res);
        this.end(undefined, res);
    }

    /** The exchange failed before a response. */
    failed(err: HttpError): void {
        this.end(err, undefined);
    }

    /** A phase outlasted its bound in the `timeouts` option: the hop fails with that 504. */
    phaseExpired(err: HttpError): void {
        this.end(err, undefined);
    }

    /** True when the request got a connection that had carried earlier exchanges rather than a new one. */
    get reusedSocket(): boolean {
        return this.exchange?.reused === true;
    }

    /** The bytes of response the hop's connection received: 0 while nothing of a response came. */
    responseBytes(): number {
        return this.exchange?.responseBytes() ?? 0;
    }

    /** The hop's connection was stale: retire the idle connections of its pool that are older still. */
    retireIdlePeers(): void {
        this.exchange?.retireIdlePeers();
    }
}

function bodyless(method: string): boolean {
    return method === 'GET' || method === 'HEAD';
}
