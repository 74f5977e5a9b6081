import type { Http2SessionEnd as SessionEnd } from '../client/contract/failure-data.js';

/**
 * The connections a mock pretends to hold for one client's pools (docs/testing.md, "Connections"), so
 * that what depends on them behaves as on the network: a request on a kept-alive connection is
 * `reusedSocket` (and one that fails on it before any response is sent again, README "Stale
 * connections"); HTTP/2 streams share a session per origin, numbered 1, 3, 5…, which a GOAWAY or a
 * reset ends for all of them. Nothing is opened: no socket, no timer.
 */

/** An HTTP/2 stream of a mock session: told when the session ends under it. */
export interface SessionStream {
    readonly streamId: number;
    /** The session ended (`end`, or dropped with its connection when undefined) while this stream was open. */
    sessionEnded(session: MockSession, end: SessionEnd | undefined): void;
}

export class MockSession {
    /** How the session ended, once it did: its GOAWAY; undefined while it lives or when its connection dropped. */
    end: SessionEnd | undefined;
    /** True once the session takes no new stream. */
    gone = false;
    private nextStreamId = 1;
    private readonly open = new Set<SessionStream>();

    /** A new stream's id, and whether the session carried streams before it (a reused connection). */
    openStream(): { streamId: number; reused: boolean } {
        const streamId = this.nextStreamId;
        this.nextStreamId += 2;
        return { streamId, reused: streamId > 1 };
    }

    attach(stream: SessionStream): void {
        this.open.add(stream);
    }

    detach(stream: SessionStream): void {
        this.open.delete(stream);
    }

    /**
     * The session ends: its connection dropped (`end` undefined), and every open stream fails at once;
     * or a GOAWAY (`end`), which fails at once the streams above its last stream id (the server did
     * not process them), then the session closes on the next turn of the loop under the others.
     */
    close(end: SessionEnd | undefined): void {
        this.gone = true;
        this.end = end;
        const last = end?.event === 'goaway' ? end.lastStreamId : -1;
        this.endStreams((stream) => stream.streamId > last);
        setImmediate(() => this.endStreams(() => true));
    }

    private endStreams(which: (stream: SessionStream) => boolean): void {
        for (const stream of [...this.open]) {
            if (which(stream)) {
                this.open.delete(stream);
                stream.sessionEnded(this, this.end);
            }
        }
    }
}

/** The mock connections of one client's pools, per origin and TLS verification (one pool each, as the client's agents). */
export class MockPools {
    private readonly idle = new Map<string, number>();
    private readonly sessions = new Map<string, MockSession>();

    /** Takes an idle HTTP/1.1 connection when there is one (true: reused); else a new one is made (false). */
    takeConnection(key: string): boolean {
        const idle = this.idle.get(key) ?? 0;
        if (idle === 0) {
            return false;
        }

        this.idle.set(key, idle - 1);
        return true;
    }

    /** An HTTP/1.1 connection is idle again (its response was read whole, and it is kept alive). */
    releaseConnection(key: string): void {
        this.idle.set(key, (this.idle.get(key) ?? 0) + 1);
    }

    /** The idle connections of the pool are dropped (one of them proved closed by the server). */
    retireIdle(key: string): void {
        this.idle.delete(key);
    }

    /** The origin's live session, and whether it was opened for this stream. */
    session(key: string): { session: MockSession; opened: boolean } {
        const live = this.sessions.get(key);
        if (live !== undefined && !live.gone) {
            return { session: live, opened: false };
        }

        const session = new MockSession();
        this.sessions.set(key, session);
        return { session, opened: true };
    }
}
