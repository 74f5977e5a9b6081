import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { BodyNotes } from '../bodies/read.js';
import type { Timings } from '../contract/timings.js';
import type { TimedResponse } from '../contract/types.js';
import type { PhaseGuard } from './phase-guard.js';

/**
 * The `timings` of one hop (README "Timings"), filled where the facts happen: by the hop's listeners
 * on its request (hop.ts), by listeners here on the socket it gets (only while a new connection is
 * being made) and on the response. The phases are derived from the moments in one place,
 * `derivePhases`; nothing measures elsewhere. With the `timeouts` option, the same moments move the
 * hop's phase guard (phase-timeouts.ts).
 */

// Epoch milliseconds are the monotonic clock plus an anchor that follows the wall clock: the anchor
// `performance.timeOrigin` gives is fixed at start-up, and the monotonic clock drifts from
// `Date.now()` over a long uptime (clock slewing, a suspended machine). The anchor is re-read at most
// once a second and moved only when the wall clock has left it by more than 2 ms, so that
// `Date.now()`'s whole milliseconds never jitter the moments of one hop.
let anchor = Date.now() - performance.now();
let anchorReadAt = performance.now();

/** Epoch milliseconds with sub-millisecond precision, comparable with `Date.now()`. */
export function timestamp(): number {
    const now = performance.now();
    if (now - anchorReadAt > 1000) {
        anchorReadAt = now;
        const wall = Date.now() - now;
        if (Math.abs(wall - anchor) > 2) {
            anchor = wall;
        }
    }

    return anchor + now;
}

/**
 * The monotonic clock's reading (`performance.now()`) at the epoch time `at` of a timings record:
 * OpenTelemetry places such a reading on a span's own timeline, which it anchors to the wall clock
 * when the span starts, so phase events line up with the span's start and end exactly.
 */
export function monotonicAt(at: number): number {
    return at - anchor;
}

// The clock rides on a socket while it connects, so its listeners are shared functions rather than
// closures made for every connection; a response's listeners find the record as `res.timings`.
const clockOf = Symbol('tracewire.hopClock');
type ClockedSocket = Socket & { [clockOf]?: HopClock | undefined };

/**
 * How the hop's connection is made, as far as the hop knows before it has a socket: `'named'`, a
 * connection of its own (or to a forwarding proxy) to a host name to resolve; `'address'`, to an IP
 * literal or a UNIX socket (no lookup); `'tunnel'`, a CONNECT tunnel through a proxy (the tunnel is
 * the connect phase; the proxy resolves the name).
 */
export type ConnectionRoute = 'named' | 'address' | 'tunnel';

export class HopClock implements BodyNotes {
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

    /**
     * The hop's request exists: how its connection will be made, and its phase bounds. The hop then
     * tells the clock of its request's socket (`socketAssigned`), upload (`uploaded`) and a tunnel's
     * answer (`tunnelConnected`).
     */
    requestCreated(route: ConnectionRoute, guard: PhaseGuard | undefined): void {
        this.route = route;
        this.guard = guard;
        if (route === 'tunnel') {
            // The proxy agent opens the tunnel at once (its pool has no queue): the socket's wait is over.
            this.tunnelStart = timestamp();
            guard?.enter('connect');
        }
    }

    /** The request got a pooled socket as it was made. */
    socketReused(): void {
        this.timings.socket = timestamp();
        this.guard?.enter('send');
    }

    /** The request got its socket: a pooled one (after a wait in the agent's queue), or one still connecting, whose moments are then followed. */
    socketAssigned(req: ClientRequest, socket: Socket): void {
        const timings = this.timings;
        const guard = this.guard;
        if (req.reusedSocket) {
            this.socketReused();
            return;
        }

        if (this.route === 'tunnel') {
            // The tunnel is up (`proxyConnect`); TLS to the origin runs through it now.
            timings.socket = this.tunnelStart;
            (socket as ClockedSocket)[clockOf] = this;
            socket.on('secureConnect', onSecureConnect);
            return;
        }

        timings.socket = timestamp();
        if (!socket.connecting) {
            // A connected socket from a custom agent: nothing of its making to time.
            guard?.enter('send');
            return;
        }

        (socket as ClockedSocket)[clockOf] = this;
        socket.on('lookup', onLookup);
        socket.on('connect', onConnect);
        if ('encrypted' in socket) {
            socket.on('secureConnect', onSecureConnect);
        }

        guard?.enter(this.route === 'named' ? 'lookup' : 'connect');
    }

    /** The proxy answered the tunnel's CONNECT (`statusCode`): a 200 is the tunnel's connect. */
    tunnelConnected(statusCode: number | undefined): void {
        if (statusCode === 200) {
            this.timings.connect = timestamp();
            this.guard?.enter('secureConnect');
        }
    }

    looked(socket: Socket): void {
        // With several addresses to try, Node may report more than one lookup: the first one counts.
        socket.removeListener('lookup', onLookup);
        this.timings.lookup = timestamp();
        this.guard?.enter('connect');
    }

    connected(socket: Socket): void {
        this.timings.connect = timestamp();
        socket.removeListener('lookup', onLookup);
        socket.removeListener('connect', onConnect);
        if ('encrypted' in socket) {
            this.guard?.enter('secureConnect');
        } else {
            (socket as ClockedSocket)[clockOf] = undefined;
            this.guard?.enter('send');
        }
    }

    secured(socket: Socket): void {
        this.timings.secureConnect = timestamp();
        socket.removeListener('secureConnect', onSecureConnect);
        (socket as ClockedSocket)[clockOf] = undefined;
        this.guard?.enter('send');
    }

    uploaded(): void {
        const timings = this.timings;
        timings.upload = timestamp();
        if (timings.response === undefined) {
            this.guard?.enter('response');
        } else {
            // The server answered before it had the whole request: the hop has ended, its phases told.
            derivePhases(timings);
        }
    }

    /**
     * The response headers arrived: `res.timings` is the record. The end of its body is noted by
     * listeners on the response when `watchBody`; otherwise by the one reader of the body, through
     * the clock's `BodyNotes` (a helper's own read, when no listener can see the response before it
     * is read: two listeners fewer on every such request).
     */
    responded(res: IncomingMessage, watchBody: boolean): void {
        // The hop ends right after (`hopEnded`), which stops the guard and derives the phases.
        const timings = this.timings;
        timings.response = timestamp();
        (res as TimedResponse).timings = timings;
        if (watchBody) {
            res.on('end', onBodyEnd);
            res.on('close', onBodyClose);
        }
    }

    /**
     * A response made in place of the one the hop got (the cache's answer after a 304 or a 5xx): it
     * carries the hop's record, and the end of its body is the hop's `end`.
     */
    carriedBy(res: IncomingMessage): void {
        (res as TimedResponse).timings = this.timings;
        res.on('end', onBodyEnd);
        res.on('close', onBodyClose);
    }

    bodyEnded(): void {
        // The hop's own `end` listener, when it has one, noted it first.
        if (this.timings.end === undefined) {
            noteBodyEnd(this.timings);
        }
    }

    bodyClosed(res: Readable): void {
        noteBodyClosed(this.timings, res);
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
}

/**
 * The durations between the moments that happened; a phase whose moments did not is undefined, and
 * so is `firstByte` when the server answered before the request was sent (no think time after it).
 */
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
    return from === undefined || to === undefined || to < from ? undefined : to - from;
}

function onLookup(this: ClockedSocket, err: Error | null): void {
    if (err === null) {
        this[clockOf]?.looked(this);
    }
}

function onConnect(this: ClockedSocket): void {
    this[clockOf]?.connected(this);
}

function onSecureConnect(this: ClockedSocket): void {
    this[clockOf]?.secured(this);
}

function onBodyEnd(this: TimedResponse): void {
    noteBodyEnd(this.timings);
}

function noteBodyEnd(timings: Timings): void {
    // Of the phases, only these two depend on the body's end: the others were derived when the hop ended.
    const end = timestamp();
    timings.end = end;
    timings.phases.download = since(timings.response, end);
    timings.phases.total = since(timings.start, end);
}

/** The response closed: when its body was not read to the end, it was cut (error) or let go (abort). */
function onBodyClose(this: TimedResponse): void {
    noteBodyClosed(this.timings, this);
}

function noteBodyClosed(timings: Timings, res: Readable): void {
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
