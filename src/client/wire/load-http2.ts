import type { OutgoingHttpHeaders } from 'node:http';
import type { HttpError } from '../../errors/index.js';
import type { PayloadReplay } from '../bodies/payload-replay.js';
import { aborted, clientFailure, requestError } from '../contract/errors.js';
import type { HopRequest, HopResponse, ProgressCallback } from '../contract/types.js';
import { requestHeaders } from './http2/headers.js';
import { Http2Request, type StoppableExchange } from './http2/request.js';
import { type PendingBody, sendPendingBody } from './pending-body.js';
import type { Exchange, ExchangeHop, Transport } from './transport.js';

/**
 * The HTTP/2 transport (http2/: sessions, streams, ALPN, and Node's `node:http2`) loads with the first
 * hop that goes over HTTP/2, not with the client: a process that never speaks HTTP/2 does not hold it
 * (README "Import footprint"). Until it has loaded, a hop's exchange is a `LoadingExchange`: its
 * request exists at once (`promise.req`, the `request` event), as over HTTP/1.1, and goes out once the
 * transport is there; the hop's clock is told when, so that no phase counts the load (docs/client.md
 * "Timings"). The request's fields and its handle are the stream's (request.ts), made here with
 * the two modules of http2/ that load with the client.
 */

type Http2Module = typeof import('./http2/exchange.js');

let loaded: Http2Module | undefined;
let loading: Promise<Http2Module> | undefined;

/** The HTTP/2 transport once it has loaded; before, the one that makes the request and waits for it. */
export function http2Transport(): Transport {
    return loaded?.http2 ?? untilLoaded;
}

function loadHttp2(): Promise<Http2Module> {
    loading ??= import('./http2/exchange.js').then((module) => {
        loaded = module;
        return module;
    });
    return loading;
}

const untilLoaded: Transport = {
    open(hop: ExchangeHop): Exchange {
        return new LoadingExchange(hop);
    }
};

/**
 * An exchange whose transport is loading: the request is made now, the exchange that carries it
 * (an HTTP/2 stream, or HTTP/1.1 where the origin answered ALPN with it) once the transport is there,
 * taking on the request, its fields as the `request` listeners left them, and the body.
 */
class LoadingExchange implements Exchange, StoppableExchange {
    readonly request: HopRequest;
    private readonly fields: OutgoingHttpHeaders;
    private readonly handle: Http2Request;
    // The exchange the loaded transport made; an HTTP/1.1 one is not stoppable through this one (below).
    private carrier: (Exchange & Partial<StoppableExchange>) | undefined;
    private body: PendingBody | undefined;
    // Set once the hop let go of the exchange: nothing is sent when the transport arrives.
    private cancelled = false;

    constructor(private readonly hop: ExchangeHop) {
        // Throws, as the loaded transport would, for a field no HTTP version can carry: the hop fails at once.
        this.fields = requestHeaders(hop.method, hop.destination, hop.headers);
        this.handle = new Http2Request(this.fields, this, hop.destination.hostname);
        this.request = this.handle as unknown as HopRequest;
        loadHttp2().then(
            (module) => this.loaded(module),
            (err: unknown) => this.failed(clientFailure('The HTTP/2 transport could not be loaded', err))
        );
    }

    get reused(): boolean {
        return this.carrier?.reused ?? false;
    }

    responseBytes(): number {
        return this.carrier?.responseBytes() ?? 0;
    }

    sendBody(body: string | Buffer | undefined, onProgress: ProgressCallback | undefined): void {
        if (this.carrier === undefined) {
            this.body = this.cancelled ? undefined : { stream: false, body, onProgress };
        } else {
            this.carrier.sendBody(body, onProgress);
        }
    }

    sendStream(replay: PayloadReplay, onProgress: ProgressCallback | undefined): void {
        if (this.carrier === undefined) {
            this.body = this.cancelled ? undefined : { stream: true, replay, onProgress };
        } else {
            this.carrier.sendStream(replay, onProgress);
        }
    }

    refusalOf(res: HopResponse): HttpError | undefined {
        return this.carrier?.refusalOf(res);
    }

    cancel(): void {
        this.cancelled = true;
        this.body = undefined;
        this.carrier?.cancel();
    }

    retireIdlePeers(): void {
        this.carrier?.retireIdlePeers();
    }

    /**
     * The caller's `req.abort()` or `req.destroy(err)`: before the transport has loaded the hop fails
     * with it, as a stream's would before its response; after, the stream's exchange stops. (Once an
     * HTTP/1.1 request carries the exchange, the handle stops that request itself: request.ts.)
     */
    stop(err: Error | undefined): void {
        if (this.carrier !== undefined) {
            this.carrier.stop?.(err);
        } else if (!this.cancelled) {
            this.hop.failed(err === undefined ? aborted(undefined, 'request') : requestError(err));
        }
    }

    private loaded(module: Http2Module): void {
        if (this.cancelled) {
            return;
        }

        this.hop.moments.transportReady();
        let carrier: Exchange & Partial<StoppableExchange>;
        try {
            carrier = module.openWith(this.hop, { fields: this.fields, handle: this.handle });
        } catch (err) {
            // What `http2.open()` throws in a hop's send (a field the runtime refuses), failing the hop the same way.
            this.failed(clientFailure(`Request could not be created: ${(err as Error).message}`, err));
            return;
        }

        this.carrier = carrier;
        const body = this.body;
        this.body = undefined;
        if (body !== undefined) {
            sendPendingBody(body, carrier);
        }
    }

    private failed(err: HttpError): void {
        if (!this.cancelled) {
            this.hop.failed(err);
        }
    }
}
