import type { HttpError } from '../../errors/index.js';
import type { PayloadReplay } from '../bodies/payload-replay.js';
import type { Agents, EffectiveOptions, HopRequest, HopResponse, ProgressCallback } from '../contract/types.js';
import type { Destination } from './destination.js';
import type { ProxyRoute } from './proxy.js';

/**
 * The seam between a hop and a protocol (docs/architecture.md, "The transport seam"). A hop drives
 * one exchange — a request out, a response or a failure back — through a `Transport`, and learns of
 * the connection only the moments it reports. Everything above (redirects, retries, the cache, the
 * timings, the phase bounds, the pipeline and the spans it feeds) is written once, for any transport;
 * `http1/` is the implementation on `node:http`/`node:https` agents.
 */
export interface Transport {
    /**
     * Opens one exchange for `hop`: gets a connection for its destination (a new one or a reused
     * one), creates the request and reports back to `hop` from then on. Throws when the request
     * cannot be made at all (a header the runtime refuses): the hop fails with that.
     */
    open(hop: ExchangeHop): Exchange;
}

/** What a transport is given for one exchange, and what it reports to: the hop. */
export interface ExchangeHop {
    readonly method: string;
    readonly destination: Destination;
    /** The headers to send (those of the hop's `uri` once `preRequest` listeners had them). */
    readonly headers: EffectiveOptions['headers'];
    /** The hop's options: the connection settings (TLS, lookup, `socketPath`, `agent`) among them. */
    readonly options: EffectiveOptions;
    /** The proxy the hop goes through, decided for every transport alike (proxy.ts). */
    readonly proxy: ProxyRoute | undefined;
    /**
     * What an instrumentation may have left its request scope on (the hop's `uri`), for a transport
     * whose request it must create in that scope; undefined without a pipeline.
     */
    readonly scope: object | undefined;
    /** The client's connection pools. */
    readonly agents: Agents;
    /** The hop's clock (and, through it, its phase bounds): told each moment as it happens. */
    readonly moments: ConnectionMoments;
    /** The response head arrived: the body follows on `res`. */
    responded(res: HopResponse): void;
    /** The exchange failed before a response: a network error, a refused proxy, the caller's cancel. */
    failed(err: HttpError): void;
    /** The caller's `onUploadProgress` threw while the body went out. */
    uploadFailed(err: HttpError): void;
}

/** One exchange under way, as the hop holds it. */
export interface Exchange {
    /** The request as the public API shows it: `promise.req`, the `request` event, `details.req`. */
    readonly request: HopRequest;
    /** True when the exchange went out on a connection that had carried earlier exchanges. */
    readonly reused: boolean;
    /** The bytes of response the connection received during this exchange: 0 while nothing came back. */
    responseBytes(): number;
    /** Sends the body (none, a string or a Buffer) and ends the request; with `onProgress`, counted as it goes. */
    sendBody(body: string | Buffer | undefined, onProgress: ProgressCallback | undefined): void;
    /** Sends a stream payload through its replay once the connection is up: not a byte is read before. */
    sendStream(replay: PayloadReplay, onProgress: ProgressCallback | undefined): void;
    /**
     * The error to fail the hop with when `res` is not the origin's answer but a proxy's refusal (a
     * CONNECT answered with anything but 200, a 407 to a forwarded request); undefined for the origin's.
     */
    refusalOf(res: HopResponse): HttpError | undefined;
    /** Drops the request before its response (the hop failed or was stopped); no report follows. */
    cancel(): void;
    /** The exchange failed on a connection the server had closed: retire the pool's connections idle as long. */
    retireIdlePeers(): void;
}

/**
 * The moments of an exchange that the hop's timings and phase bounds need (README "Timings"). A
 * transport tells them in order; a moment that does not happen (a reused connection has no lookup,
 * connect or handshake) is not told.
 */
export interface ConnectionMoments {
    /**
     * The transport of the exchange, which loads with the first hop that needs it (load-http2.ts), is
     * there: the time before was the load's, which is no phase of the hop.
     */
    transportReady(): void;
    /** The exchange got a connection that had carried exchanges before. */
    connectionReused(): void;
    /** The exchange waits for a new connection, whose first step is `lookup` (a host name) or `connect`. */
    connectionOpening(firstStep: 'lookup' | 'connect'): void;
    /** The exchange got a connection made elsewhere, already up (a custom agent's): nothing of its making to time. */
    connectionReady(): void;
    /** A tunnel through a proxy is being opened (its CONNECT is the connect phase; the proxy resolves the name). */
    tunnelOpening(): void;
    /** The tunnel's connection is the exchange's (once CONNECT succeeded): the origin's TLS handshake runs in it. */
    tunnelAssigned(): void;
    /** The proxy answered the tunnel's CONNECT with `statusCode`. */
    tunnelConnected(statusCode: number | undefined): void;
    /** The host name was resolved. */
    lookedUp(): void;
    /** The connection is established; `secure` when a TLS handshake follows. */
    connected(secure: boolean): void;
    /** The TLS handshake finished. */
    secured(): void;
    /** The request, body included, was handed to the connection. */
    uploaded(): void;
}

/**
 * A stand-in for the network (docs/testing.md): `tracewire/testing`'s mock origins and recorder. A hop
 * whose client has one (the `mock` option, or the one installed for the process) asks it first; it
 * opens the hop's exchange itself (answering as an origin would, or through `network`, the transport
 * the hop would have used), or returns undefined to let the hop go to the network. `http2` is what
 * the hop offers (`offersHttp2`).
 */
export interface StandInTransport {
    openExchange(hop: ExchangeHop, http2: boolean, network: Transport): Exchange | undefined;
}

// Installed by `MockNetwork.install()`; one slot, read once per hop, so a process without
// tracewire/testing pays a property read.
let processStandIn: StandInTransport | undefined;

/** The stand-in of every client of the process that has none of its own (the `mock` option). */
export function standInForProcess(): StandInTransport | undefined {
    return processStandIn;
}

/** Installs `standIn` for the process, or with undefined removes the one installed. */
export function setStandInForProcess(standIn: StandInTransport | undefined): void {
    processStandIn = standIn;
}
