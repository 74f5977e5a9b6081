import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { PhaseGuard } from './phase-timeouts.js';
import type { Timings } from './timings.js';
import type { TimedResponse } from './types.js';

/**
 * The `timings` of one hop (README "Timings"), filled where the facts happen: by listeners on the
 * request, on the socket it gets (only while a new connection is being made) and on the response.
 * The phases are derived from the moments in one place, `derivePhases`; nothing measures elsewhere.
 * With the `timeouts` option, the same moments move the hop's phase guard (phase-timeouts.ts).
 */

const origin = performance.timeOrigin;

/** Epoch milliseconds with sub-millisecond precision, from the monotonic clock. */
export function timestamp(): number {
    return origin + performance.now();
}

// The clock rides on the request, the connecting socket and the response it listens to, so the
// listeners are shared functions rather than closures made for every hop.
const clockOf = Symbol('tracewire.hopClock');
type Clocked<T> = T & { [clockOf]?: HopClock | undefined };

/**
 * How the hop's connection is made, as far as the hop knows before it has a socket: `'named'`, a
 * connection of its own (or to a forwarding proxy) to a host name to resolve; `'address'`, to an IP
 * literal or a UNIX socket (no lookup); `'tunnel'`, a CONNECT tunnel through a proxy (the tunnel is
 * the connect phase; the proxy resolves the name).
 */
export type ConnectionRoute = 'named' | 'address' | 'tunnel';

export class HopClock {
    readonly timings: Timings;
    // The phase bounds of the hop, with the `timeouts` option.
    private guard: PhaseGuard | undefined;
    private route: ConnectionRoute = 'named';
    private tunnelStart = 0;

    constructor() {
        this.timings = {
            start: timestamp(),
            socket: undefined,
            lookup: undefined,
            connect: undefined,
            secureConnect: undefined,
            upload: undefined,
            response: undefined,
            end: undefined,
            error: undefined,
            abort: undefined,
            phases: {
                wait: undefined,
                dns: undefined,
                tcp: undefined,
                tls: undefined,
                request: undefined,
                firstByte: undefined,
                download: undefined,
                total: undefined
            }
        };
    }

    /** Follows the hop's request from its creation: its socket, the end of its upload, a tunnel. */
    watch(req: ClientRequest, route: ConnectionRoute, guard: PhaseGuard | undefined): void {
        (req as Clocked<ClientRequest>)[clockOf] = this;
        this.route = route;
        this.guard = guard;
        req.on('socket', onSocket);
        req.on('finish', onUpload);
        if (route === 'tunnel') {
            // The proxy agent opens the tunnel at once (its pool has no queue): the socket's wait is over.
            this.tunnelStart = timestamp();
            req.on('proxyConnect', onTunnel);
            guard?.enter('connect');
        }
    }

    /** The request got its socket: a pooled one, or one still connecting, whose moments are then followed. */
    socketAssigned(req: ClientRequest, socket: Socket): void {
        const timings = this.timings;
        const guard = this.guard;
        if (req.reusedSocket) {
            timings.socket = timestamp();
            guard?.enter('send');
            return;
        }

        if (this.route === 'tunnel') {
            // The tunnel is up (`proxyConnect`); TLS to the origin runs through it now.
            timings.socket = this.tunnelStart;
            (socket as Clocked<Socket>)[clockOf] = this;
            socket.on('secureConnect', onSecureConnect);
            return;
        }

        timings.socket = timestamp();
        if (!socket.connecting) {
            // A connected socket from a custom agent: nothing of its making to time.
            guard?.enter('send');
            return;
        }

        (socket as Clocked<Socket>)[clockOf] = this;
        socket.on('lookup', onLookup);
        socket.on('connect', onConnect);
        if ('encrypted' in socket) {
            socket.on('secureConnect', onSecureConnect);
        }

        guard?.enter(this.route === 'named' ? 'lookup' : 'connect');
    }

    tunnelConnected(): void {
        this.timings.connect = timestamp();
        this.guard?.enter('secureConnect');
    }

    looked(): void {
        // With several addresses to try, Node may report a lookup for each: the first one counts.
        if (this.timings.lookup === undefined) {
            this.timings.lookup = timestamp();
            this.guard?.enter('connect');
        }
    }

    connected(socket: Socket): void {
        this.timings.connect = timestamp();
        socket.removeListener('lookup', onLookup);
        socket.removeListener('connect', onConnect);
        if ('encrypted' in socket) {
            this.guard?.enter('secureConnect');
        } else {
            (socket as Clocked<Socket>)[clockOf] = undefined;
            this.guard?.enter('send');
        }
    }

    secured(socket: Socket): void {
        this.timings.secureConnect = timestamp();
        socket.removeListener('secureConnect', onSecureConnect);
        (socket as Clocked<Socket>)[clockOf] = undefined;
        this.guard?.enter('send');
    }

    uploaded(): void {
        const timings = this.timings;
        timings.upload = timestamp();
        // A server may answer before it has read the whole request.
        if (timings.response === undefined) {
            this.guard?.enter('response');
        }
    }

    /** The response headers arrived: `res.timings` is the record, and the body's end will be noted. */
    responded(res: IncomingMessage): void {
        const timings = this.timings;
        timings.response = timestamp();
        this.guard?.stop();
        (res as TimedResponse).timings = timings;
        (res as Clocked<IncomingMessage>)[clockOf] = this;
        res.on('end', onBodyEnd);
        res.on('close', onBodyClose);
        derivePhases(timings);
    }

    /** The hop ended (before it is reported): with `err` when it failed, of an abort or of an error. */
    hopEnded(err: { data?: unknown } | undefined): void {
        this.guard?.stop();
        const timings = this.timings;
        if (err !== undefined) {
            if ((err.data as { code?: unknown } | undefined)?.code === 'ABORT_ERR') {
                timings.abort = timestamp();
            } else {
                timings.error = timestamp();
            }
        }

        derivePhases(timings);
    }

    bodyEnded(): void {
        this.timings.end = timestamp();
        derivePhases(this.timings);
    }

    /** The response closed: when its body was not read to the end, it was cut (error) or let go (abort). */
    bodyClosed(res: IncomingMessage): void {
        const timings = this.timings;
        if (timings.end !== undefined || timings.error !== undefined || timings.abort !== undefined) {
            return;
        }

        if (res.errored) {
            timings.error = timestamp();
        } else {
            timings.abort = timestamp();
        }

        derivePhases(timings);
    }
}

/** The durations between the moments that happened; a phase whose moments did not is undefined. */
export function derivePhases(timings: Timings): void {
    const phases = timings.phases;
    const { start, socket, lookup, connect, secureConnect, upload, response, end } = timings;
    phases.wait = since(start, socket);
    phases.dns = since(socket, lookup);
    phases.tcp = since(lookup ?? socket, connect);
    phases.tls = since(connect, secureConnect);
    phases.request = since(secureConnect ?? connect ?? socket, upload);
    phases.firstByte = since(upload, response);
    phases.download = since(response, end);
    phases.total = since(start, end ?? timings.error ?? timings.abort);
}

function since(from: number | undefined, to: number | undefined): number | undefined {
    return from === undefined || to === undefined ? undefined : to - from;
}

function onSocket(this: Clocked<ClientRequest>, socket: Socket): void {
    this[clockOf]!.socketAssigned(this, socket);
}

function onUpload(this: Clocked<ClientRequest>): void {
    this[clockOf]!.uploaded();
}

function onTunnel(this: Clocked<ClientRequest>, connect: { statusCode?: number }): void {
    if (connect.statusCode === 200) {
        this[clockOf]!.tunnelConnected();
    }
}

function onLookup(this: Clocked<Socket>, err: Error | null): void {
    if (err === null) {
        this[clockOf]?.looked();
    }
}

function onConnect(this: Clocked<Socket>): void {
    this[clockOf]?.connected(this);
}

function onSecureConnect(this: Clocked<Socket>): void {
    this[clockOf]?.secured(this);
}

function onBodyEnd(this: Clocked<IncomingMessage>): void {
    this[clockOf]!.bodyEnded();
}

function onBodyClose(this: Clocked<IncomingMessage>): void {
    this[clockOf]!.bodyClosed(this);
}
