import type { ClientHttp2Session, ClientHttp2Stream, OutgoingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import type { Http2SessionEnd } from '../../contract/failure-data.js';
import type { Http2Settings } from './settings.js';

/**
 * One HTTP/2 session of the pool (pool.ts): the streams it carries, how many more it may take, and
 * its life — ready once the server's first SETTINGS came, draining once it got a GOAWAY (it takes no
 * new stream, those it has finish), watched by PINGs while it carries streams (one left unanswered
 * closes it: its streams fail as a network error), closed after `idleTimeout` without a stream.
 * Unref'd while idle, so an idle session never keeps the process alive.
 */

/** What a session tells its pool. */
export interface SessionOwner {
    /** The session can take `room` more streams (it became ready, or streams closed). */
    roomFreed(session: LiveSession): void;
    /** The session is gone (closed, failed, or it got a GOAWAY): it takes no more streams. */
    retired(session: LiveSession): void;
}

// The HTTP/2 error code of an answer-less session: the connection is dead to us (RFC 9113 7, CANCEL
// is for one stream; a session we give up on is closed with no code of the peer's to report).
export const pingTimeoutCode = 'ETIMEDOUT';

export class LiveSession {
    /** Streams open on the session. */
    active = 0;
    /** Streams the session ever carried: a stream on a session that carried one before is on a reused connection. */
    carried = 0;
    ready = false;
    /** The first error of the session, if it failed. */
    failure: Error | undefined;
    /** Set once the session takes no new stream: a GOAWAY came, it failed, or it closed. */
    retiredFor: Http2SessionEnd | 'closed' | undefined;
    private idleTimer: NodeJS.Timeout | undefined;
    private pingTimer: NodeJS.Timeout | undefined;
    private pingDeadline: NodeJS.Timeout | undefined;

    constructor(
        readonly session: ClientHttp2Session,
        readonly socket: Socket,
        private readonly settings: Http2Settings,
        private readonly owner: SessionOwner
    ) {
        session.on('remoteSettings', () => {
            if (!this.ready) {
                this.ready = true;
                clearTimeout(this.pingDeadline);
                this.pingDeadline = undefined;
                // Idle until a waiting stream takes it (the pool grants them as this event returns).
                this.session.unref();
                this.armIdle();
            }

            // A server may raise its limit later: waiting streams may fit now.
            this.owner.roomFreed(this);
        });
        session.on('goaway', (errorCode: number, lastStreamId: number) => {
            // Node shuts the session down itself: the streams the server processed finish, the others are refused.
            this.retire({ event: 'goaway', errorCode, lastStreamId });
        });
        // The streams hear of a session's failure themselves (each gets its error); kept for the streams
        // that waited for a session that failed before it was ready, and so that Node does not throw it.
        session.on('error', (err: Error) => {
            this.failure ??= err;
        });
        session.once('close', () => {
            this.stopTimers();
            this.retire('closed');
        });
        if (settings.connectionWindowSize > 65_535) {
            session.setLocalWindowSize(settings.connectionWindowSize);
        }

        // Ref'd while its first streams wait for the server's SETTINGS, as a connecting socket is, and
        // given as long as a PING for them: a server that never sends them holds no stream for ever.
        if (settings.pingTimeout > 0) {
            this.pingDeadline = setTimeout(settingsMissing, settings.pingTimeout, this).unref();
        }
    }

    /** How many more streams the session may take now. */
    get room(): number {
        if (!this.ready || this.retiredFor !== undefined || this.session.destroyed) {
            return 0;
        }

        // Node fills in the default (unlimited) for a server that did not say.
        const serverLimit = this.session.remoteSettings.maxConcurrentStreams as number;
        return Math.min(serverLimit, this.settings.maxConcurrentStreams) - this.active;
    }

    /** Opens a stream; the caller checked `room`. */
    open(fields: OutgoingHttpHeaders, endStream: boolean): ClientHttp2Stream {
        const stream = this.session.request(fields, { endStream });
        this.active++;
        this.carried++;
        if (this.active === 1) {
            clearTimeout(this.idleTimer);
            this.idleTimer = undefined;
            // A session with a stream in flight keeps the process alive, as a socket with a request does.
            this.session.ref();
            this.armPing();
        }

        // The stream stops counting against the server's limit once it is closed both ways (its response
        // ended, its request sent): Node tells 'close' some ticks later, when the caller may already
        // have sent its next request, which must not open a session of its own for want of room.
        let counted = true;
        const done = () => {
            if (counted) {
                counted = false;
                this.streamClosed();
            }
        };
        stream.once('end', () => {
            if (stream.writableFinished) {
                done();
            } else {
                stream.once('finish', done);
            }
        });
        stream.once('close', done);
        return stream;
    }

    /** Nobody waits any more for the session, which never became ready: it goes, and its connection with it. */
    abandon(): void {
        this.session.destroy();
        this.socket.destroy();
        this.retire('closed');
    }

    /** The GOAWAY or the PING that ended the session, if one did. */
    get end(): Http2SessionEnd | undefined {
        return this.retiredFor === 'closed' ? undefined : this.retiredFor;
    }

    /** True once the session is closed or being destroyed: its streams are cut with it. */
    get gone(): boolean {
        return this.session.destroyed || this.session.closed;
    }

    private streamClosed(): void {
        this.active--;
        if (this.active === 0) {
            this.stopPing();
            if (this.retiredFor !== undefined) {
                this.finish();
            } else {
                this.session.unref();
                this.armIdle();
            }
        }

        this.owner.roomFreed(this);
    }

    private retire(reason: Http2SessionEnd | 'closed'): void {
        if (this.retiredFor === undefined) {
            this.retiredFor = reason;
            this.owner.retired(this);
        }

        if (this.active === 0) {
            // Nothing left to finish: the session goes now rather than at its idle timeout.
            this.finish();
        }
    }

    /** The session carries no stream and takes no new one: it closes, and its connection with it. */
    private finish(): void {
        clearTimeout(this.idleTimer);
        this.idleTimer = undefined;
        if (!this.session.closed && !this.session.destroyed) {
            this.session.close();
        }

        // Node ends the connection of a session it closes gracefully and leaves it open until the server
        // closes its side, which a server that sent GOAWAY may never do: ours closes once its GOAWAY is out.
        const socket = this.socket;
        if (socket.destroyed) {
            // Gone with the session already.
        } else if (socket.writableFinished) {
            socket.destroy();
        } else {
            socket.once('finish', destroySocket);
        }
    }

    private armIdle(): void {
        if (this.active > 0 || this.retiredFor !== undefined || this.settings.idleTimeout === 0) {
            return;
        }

        clearTimeout(this.idleTimer);
        this.idleTimer = setTimeout(closeIdle, this.settings.idleTimeout, this).unref();
    }

    /** The idle timeout passed with no stream opened (opening one clears it): the session closes gracefully. */
    closeIdle(): void {
        this.idleTimer = undefined;
        this.retire('closed');
    }

    private armPing(): void {
        const interval = this.settings.pingInterval;
        if (interval > 0 && this.pingTimer === undefined) {
            this.pingTimer = setInterval(sendPing, interval, this).unref();
        }
    }

    /** Sends a PING; one left unanswered for `pingTimeout` ms closes the session as dead. */
    ping(): void {
        if (this.pingDeadline !== undefined || this.session.destroyed) {
            return;
        }

        const timeout = this.settings.pingTimeout;
        this.pingDeadline = setTimeout(pingUnanswered, timeout, this).unref();
        try {
            this.session.ping((err) => {
                if (err === null) {
                    clearTimeout(this.pingDeadline);
                    this.pingDeadline = undefined;
                }
            });
        } catch {
            // Too many PINGs unanswered already (maxOutstandingPings): the deadline decides.
        }
    }

    /** The PING went unanswered: the session is dead; its streams fail with a retryable network error. */
    pingUnanswered(): void {
        this.pingDeadline = undefined;
        const timeout = this.settings.pingTimeout;
        this.retire({ event: 'ping-timeout', pingTimeout: timeout });
        const err = Object.assign(new Error(`The HTTP/2 session did not answer a PING within ${timeout} ms`), {
            code: pingTimeoutCode
        });
        this.session.destroy(err);
    }

    /** The server's SETTINGS did not come within `pingTimeout` ms: the session is dead, as for an unanswered PING. */
    settingsMissing(): void {
        this.pingDeadline = undefined;
        const timeout = this.settings.pingTimeout;
        const err = Object.assign(new Error(`The HTTP/2 server did not send its SETTINGS within ${timeout} ms`), {
            code: pingTimeoutCode
        });
        // The streams waiting for the session are refused with its failure (pool.ts), as it retires.
        this.failure ??= err;
        this.session.destroy(err);
        this.retire({ event: 'ping-timeout', pingTimeout: timeout });
    }

    private stopPing(): void {
        clearInterval(this.pingTimer);
        this.pingTimer = undefined;
        clearTimeout(this.pingDeadline);
        this.pingDeadline = undefined;
    }

    private stopTimers(): void {
        this.stopPing();
        clearTimeout(this.idleTimer);
        this.idleTimer = undefined;
    }
}

function destroySocket(this: Socket): void {
    this.destroy();
}

function closeIdle(session: LiveSession): void {
    session.closeIdle();
}

function sendPing(session: LiveSession): void {
    session.ping();
}

function settingsMissing(session: LiveSession): void {
    session.settingsMissing();
}

function pingUnanswered(session: LiveSession): void {
    session.pingUnanswered();
}
