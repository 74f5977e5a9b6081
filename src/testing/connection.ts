import type { CodedError } from '../client/contract/errors.js';
import type { Http2SessionEnd as SessionEnd } from '../client/contract/failure-data.js';
import type { Destination } from '../client/wire/destination.js';
import type { ConnectionMoments } from '../client/wire/transport.js';
import type { MockPools, MockSession, SessionStream } from './connections.js';
import { bodyAborted, connectionRefused, refusedStream, sessionEnded, socketHangUp, tlsFailure } from './faults.js';
import type { MockFault, MockFaultDetails } from './types.js';

/** Where a mocked exchange's connection comes from: the pools of its client, under its key. */
export interface ConnectionSource {
    readonly pools: MockPools;
    readonly key: string;
    /** An HTTP/1.1 connection is kept alive after its response (the agent keeps connections alive). */
    readonly keepAlive: boolean;
}

/** What a connection tells its exchange. */
export interface ConnectionOwner {
    /** The exchange fails before its response with the network's `err` (made a 502 by the exchange). */
    failedBeforeResponse(err: CodedError): void;
    /** The response's body fails with `err`, when there is a response and it is not over; returns false when there is none. */
    cutResponse(err: CodedError): boolean;
}

/**
 * The connection a mocked exchange rides on (connections.ts): an HTTP/1.1 connection of its pool, new
 * or kept alive, or a stream of its origin's HTTP/2 session. It tells the hop the moments of a
 * connection that was there already (no lookup, connect or TLS handshake to time) and plays the
 * faults of a connection: each one fails what the network's would (faults.ts).
 */
export class MockConnection implements SessionStream {
    reused = false;
    streamId = 0;
    private session: MockSession | undefined;

    constructor(
        private readonly source: ConnectionSource,
        private readonly http2: boolean,
        /** The hop's clock, told the connection's moments. */
        private readonly moments: ConnectionMoments,
        private readonly owner: ConnectionOwner
    ) {}

    /** Takes a connection (or a stream of a session) for the exchange. */
    open(): void {
        const { pools, key, keepAlive } = this.source;
        if (this.http2) {
            const { session, opened } = pools.session(key);
            this.session = session;
            this.streamId = session.openStream().streamId;
            this.reused = !opened;
            session.attach(this);
        } else {
            this.reused = keepAlive && pools.takeConnection(key);
        }

        if (this.reused) {
            this.moments.connectionReused();
        } else {
            this.moments.connectionReady();
        }
    }

    /** A connection that is never made (`connection-refused`, `tls`): its attempt is the exchange's only moment. */
    attempt(): void {
        this.moments.connectionReady();
    }

    /** Plays `fault` on this connection or stream. */
    fault(fault: MockFault, details: MockFaultDetails, destination: Destination): void {
        const session = this.session;
        switch (fault) {
            case 'connection-refused':
                this.owner.failedBeforeResponse(connectionRefused(destination.hostname, destination.port));
                return;
            case 'tls':
                // Its message is learnt from this Node.js once (tls-hint.ts): the failure comes a turn or more later.
                void tlsFailure(details.code).then((err) => this.owner.failedBeforeResponse(err));
                return;
            case 'refused-stream':
                this.owner.failedBeforeResponse(refusedStream(this.streamId));
                return;
            case 'goaway':
                session?.close({
                    event: 'goaway',
                    errorCode: details.errorCode ?? 0,
                    lastStreamId: details.lastStreamId ?? Math.max(0, this.streamId - 2)
                });
                return;
            default:
                this.reset(socketHangUp());
        }
    }

    /** The connection drops mid-body (`cutAfter`): the body fails, over HTTP/2 with every stream of the session. */
    cut(): void {
        this.reset(bodyAborted());
    }

    /**
     * The connection drops: over HTTP/2 its session ends under every stream; over HTTP/1.1 the
     * exchange fails with `http1Error` (its response's body when it has one).
     */
    private reset(http1Error: CodedError): void {
        if (this.session !== undefined) {
            this.session.close(undefined);
        } else if (!this.owner.cutResponse(http1Error)) {
            this.owner.failedBeforeResponse(http1Error);
        }
    }

    sessionEnded(_session: MockSession, end: SessionEnd | undefined): void {
        this.session = undefined;
        const failure = sessionEnded(this.streamId, end);
        if (!this.owner.cutResponse(failure)) {
            this.owner.failedBeforeResponse(failure);
        }
    }

    /** The response was read whole: a kept-alive HTTP/1.1 connection is idle again, unless it says `connection: close`. */
    responseEnded(close: boolean): void {
        if (!this.http2 && this.source.keepAlive && !close) {
            this.source.pools.releaseConnection(this.source.key);
        }
    }

    /** The exchange is over: its stream leaves the session (an HTTP/1.1 connection not given back is dropped). */
    close(): void {
        this.session?.detach(this);
        this.session = undefined;
    }

    /** The pool's idle connections are suspect: the server closed one (README "Stale connections"). */
    retireIdle(): void {
        this.source.pools.retireIdle(this.source.key);
    }
}
