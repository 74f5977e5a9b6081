import type { Readable } from 'node:stream';
import type { BodyNotes } from '../bodies/read.js';
import type { Timings } from '../contract/timings.js';
import type { HopResponse, TimedResponse } from '../contract/types.js';
import type { PhaseGuard } from './phase-guard.js';
import { timestamp } from './timings-clock.js';
import type { ConnectionMoments } from './transport.js';

/**
 * The `timings` of one hop (README "Timings"), filled where the facts happen: the moments of the
 * connection and the request as the hop's transport tells them (`ConnectionMoments`, transport.ts),
 * and the end of the body from listeners here on the response or from its reader. The phases are
 * derived from the moments in one place, `derivePhases`; nothing measures elsewhere. With the
 * `timeouts` option, the same moments move the hop's phase guard (phase-guard.ts).
 */

export class HopClock implements BodyNotes, ConnectionMoments {
    readonly timings: Timings;
    // The phase bounds of the hop, with the `timeouts` option.
    private guard: PhaseGuard | undefined;
    private tunnelStart = 0;
    // When a transport loaded on first use was there (load-http2.ts): the hop's `wait` runs from then.
    private transportReadyAt: number | undefined;

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

    /** The hop's phase bounds, with the `timeouts` option: moved by the moments from here on. */
    boundBy(guard: PhaseGuard | undefined): void {
        this.guard = guard;
    }

    transportReady(): void {
        this.transportReadyAt = timestamp();
    }

    connectionReused(): void {
        this.timings.socket = timestamp();
        this.guard?.enter('send');
    }

    connectionOpening(firstStep: 'lookup' | 'connect'): void {
        this.timings.socket = timestamp();
        this.guard?.enter(firstStep);
    }

    connectionReady(): void {
        this.timings.socket = timestamp();
        this.guard?.enter('send');
    }

    tunnelOpening(): void {
        // The proxy agent opens the tunnel at once (its pool has no queue): the connection's wait is over.
        this.tunnelStart = timestamp();
        this.guard?.enter('connect');
    }

    tunnelAssigned(): void {
        this.timings.socket = this.tunnelStart;
    }

    /** The proxy answered the tunnel's CONNECT (`statusCode`): a 200 is the tunnel's connect. */
    tunnelConnected(statusCode: number | undefined): void {
        if (statusCode === 200) {
            this.timings.connect = timestamp();
            this.guard?.enter('secureConnect');
        }
    }

    lookedUp(): void {
        this.timings.lookup = timestamp();
        this.guard?.enter('connect');
    }

    connected(secure: boolean): void {
        this.timings.connect = timestamp();
        this.guard?.enter(secure ? 'secureConnect' : 'send');
    }

    secured(): void {
        this.timings.secureConnect = timestamp();
        this.guard?.enter('send');
    }

    uploaded(): void {
        const timings = this.timings;
        timings.upload = timestamp();
        if (timings.response === undefined) {
            this.guard?.enter('response');
        } else {
            // The server answered before it had the whole request: the hop has ended, its phases told.
            derivePhases(timings, this.transportReadyAt);
        }
    }

    /**
     * The response headers arrived: `res.timings` is the record. The end of its body is noted by
     * listeners on the response when `watchBody`; otherwise by the one reader of the body, through
     * the clock's `BodyNotes` (a helper's own read, when no listener can see the response before it
     * is read: two listeners fewer on every such request).
     */
    responded(res: HopResponse, watchBody: boolean): void {
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
     * carries the hop's record, and the end of its body is the hop's `end`, noted as `responded` notes it.
     */
    carriedBy(res: HopResponse, watchBody: boolean): void {
        (res as TimedResponse).timings = this.timings;
        if (watchBody) {
            res.on('end', onBodyEnd);
            res.on('close', onBodyClose);
        }
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

        derivePhases(timings, this.transportReadyAt);
    }
}

/**
 * The durations between the moments that happened; a phase whose moments did not is undefined, and
 * so is `firstByte` when the server answered before the request was sent (no think time after it).
 * `waitFrom`: when the hop could begin to wait for a connection, if later than its start (its
 * transport loaded meanwhile: that time is in `total` only).
 */
export function derivePhases(timings: Timings, waitFrom: number | undefined): void {
    const phases = timings.phases;
    const { start, socket, lookup, connect, secureConnect, upload, response, end } = timings;
    phases.wait = since(waitFrom ?? start, socket);
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

    const at = timestamp();
    if (res.errored) {
        timings.error = at;
    } else {
        timings.abort = at;
    }

    // Only the total depends on how the body ended: the other phases were derived as the hop ended.
    timings.phases.total = since(timings.start, at);
}
