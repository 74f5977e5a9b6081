import type { Socket } from 'node:net';
import { BoundedMemo } from '../../../common/bounded-memo.js';
import type { Agents } from '../../contract/types.js';
import { authorityHostOf } from '../destination.js';
import { enrolSessionCensus, type OpenSession, type SessionCensus } from '../session-census.js';
import type { ConnectionMoments } from '../transport.js';
import { type ConnectionTarget, type Opening, openConnection } from './connect.js';
import { LiveSession, type SessionOwner } from './session.js';
import type { Http2Settings } from './settings.js';

/**
 * The HTTP/2 sessions of a client (README "HTTP/2"), per origin and connection settings: one session
 * carries many streams, and another opens only when every session of the origin is full (the
 * server's `SETTINGS_MAX_CONCURRENT_STREAMS`, or `maxConcurrentStreams`). One connection at a time is
 * opened per origin: the streams that find no room wait for it, from its first byte until the
 * server's SETTINGS make it a session, instead of each opening its own. What ALPN chose is remembered
 * per origin, so an origin that answered `http/1.1` is then reached through the agents.
 */

/** A stream that wants a session: it is granted one, refused, or sent on to HTTP/1.1. */
export interface SessionClaim {
    /** Where the stream goes and how to connect there: a connection opened for this claim is made so. */
    readonly target: ConnectionTarget;
    /** The moments of the hop, for a connection it opens; undefined once the hop left. */
    readonly moments: ConnectionMoments | undefined;
    /** A session has room for the stream; `opened`: this claim's hop opened it (its moments were told). */
    granted(session: LiveSession, opened: boolean): void;
    /** No session: the connection failed (`opened`: the one this claim's hop was opening). */
    refused(err: Error, opened: boolean): void;
    /**
     * The origin speaks HTTP/1.1: the hop goes on over `socket`, the connection its ALPN answer came on
     * (the hop that opened it), or through the agents (undefined: the others).
     */
    speaksHttp1(socket: Socket | undefined): void;
}

// What ALPN said per origin: bounded, as the origins a client meets come from its callers.
const originLimit = 1024;

// Node's http2 loads with the transport (load-http2.ts), before any hop waits on it: loaded by the
// first session instead, its milliseconds would be counted as that hop's connection phases, or as
// the `wait` of the streams queued behind it (README "Timings").
const http2 = process.getBuiltinModule('node:http2');

/** The pool of a client's connection pools (`Agents`): clients derived with `defaults()` share it. */
const poolsByAgents = new WeakMap<Agents, SessionPool>();

export function sessionPoolOf(agents: Agents): SessionPool {
    let pool = poolsByAgents.get(agents);
    if (pool === undefined) {
        pool = new SessionPool();
        poolsByAgents.set(agents, pool);
        enrolSessionCensus(agents, pool);
    }

    return pool;
}

/**
 * The connection being opened for an origin, until it is a session the server's SETTINGS made ready,
 * or it failed. Its moments are its opener's, while the opener waits for it.
 */
class Connecting {
    /** The socket being opened (undefined once it is up). */
    opening: Opening | undefined;
    /** The session over it, once the socket is up and speaks h2. */
    session: LiveSession | undefined;

    constructor(
        /** The claim whose hop opens the connection; undefined once it left or got a stream elsewhere. */
        public opener: SessionClaim | undefined
    ) {}
}

/**
 * One origin's sessions, the streams waiting for room, and the connection being opened for them; the
 * owner its sessions report to (it hands their reports to the pool with itself).
 */
class OriginSessions implements SessionOwner {
    readonly sessions: LiveSession[] = [];
    readonly waiting: SessionClaim[] = [];
    connecting: Connecting | undefined;
    // The target of the origin's latest connection, for the metrics of open connections.
    target: ConnectionTarget;

    constructor(
        private readonly pool: SessionPool,
        readonly key: string,
        readonly settings: Http2Settings,
        target: ConnectionTarget
    ) {
        this.target = target;
    }

    roomFreed(session: LiveSession): void {
        this.pool.roomFreed(this, session);
    }

    retired(session: LiveSession): void {
        this.pool.retired(this, session);
    }
}

export class SessionPool implements SessionCensus {
    private readonly origins = new Map<string, OriginSessions>();
    private readonly http1Origins = new BoundedMemo<string, true>(originLimit);

    /** The sessions open now, for the metrics of open connections (session-census.ts). */
    *openSessions(): Generator<OpenSession> {
        for (const origin of this.origins.values()) {
            const { hostname, port } = origin.target.destination;
            for (const session of origin.sessions) {
                yield { address: hostname, port, active: session.active > 0 };
            }
        }
    }

    /** True when the origin of `key` answered ALPN with HTTP/1.1. */
    speaksHttp1(key: string): boolean {
        return this.http1Origins.get(key) === true;
    }

    /** A stream wants a session of the origin of `key`: granted at once when one has room, else when one has. */
    claim(key: string, settings: Http2Settings, claim: SessionClaim): void {
        let origin = this.origins.get(key);
        if (origin === undefined) {
            origin = new OriginSessions(this, key, settings, claim.target);
            this.origins.set(key, origin);
        }

        for (const session of origin.sessions) {
            if (session.room > 0) {
                claim.granted(session, false);
                return;
            }
        }

        origin.waiting.push(claim);
        this.openForWaiting(origin);
    }

    /** A waiting stream left (its hop ended): a connection nobody waits for any more is given up. */
    release(key: string, claim: SessionClaim): void {
        const origin = this.origins.get(key);
        if (origin === undefined) {
            return;
        }

        const at = origin.waiting.indexOf(claim);
        if (at !== -1) {
            origin.waiting.splice(at, 1);
        }

        const connecting = origin.connecting;
        if (connecting?.opener === claim) {
            connecting.opener = undefined;
        }

        if (origin.waiting.length === 0 && connecting !== undefined) {
            // Nobody to carry: the connection goes, whether its socket is still opening or the server's
            // SETTINGS are still to come (a server that never sends them would hold it open for ever).
            origin.connecting = undefined;
            connecting.opening?.abandon();
            connecting.session?.abandon();
        }

        this.forgetIfEmpty(origin);
    }

    /** `session` of `origin` can take more streams (it became ready, or streams closed). */
    roomFreed(origin: OriginSessions, session: LiveSession): void {
        const connecting = origin.connecting;
        if (connecting?.session === session) {
            // The connection became a session: its opener, if it still waits, is its first stream.
            origin.connecting = undefined;
            const opener = connecting.opener;
            const at = opener === undefined ? -1 : origin.waiting.indexOf(opener);
            if (at !== -1 && session.room > 0) {
                origin.waiting.splice(at, 1);
                (opener as SessionClaim).granted(session, true);
            }
        }

        while (origin.waiting.length > 0 && session.room > 0) {
            this.grant(origin, origin.waiting.shift() as SessionClaim, session);
        }

        this.openForWaiting(origin);
    }

    /** `session` of `origin` takes no more streams: it closed, failed, or got a GOAWAY. */
    retired(origin: OriginSessions, session: LiveSession): void {
        origin.sessions.splice(origin.sessions.indexOf(session), 1);
        const connecting = origin.connecting;
        if (connecting?.session === session) {
            // The connection never became a session: the streams waiting for it fail as it did.
            origin.connecting = undefined;
            const err =
                session.failure ??
                Object.assign(new Error('The HTTP/2 session closed before the server sent its settings'), {
                    code: 'ECONNRESET'
                });
            this.refuseAll(origin, err, connecting.opener);
            return;
        }

        this.openForWaiting(origin);
        this.forgetIfEmpty(origin);
    }

    /** A waiting claim gets a stream on `session`, which it did not open. */
    private grant(origin: OriginSessions, claim: SessionClaim, session: LiveSession): void {
        const connecting = origin.connecting;
        if (connecting?.opener === claim) {
            // The connection it opens goes on for the others; its moments are no longer this hop's.
            connecting.opener = undefined;
        }

        claim.granted(session, false);
    }

    /** Streams wait and no connection is being opened for them: one opens, for the first of them. */
    private openForWaiting(origin: OriginSessions): void {
        const opener = origin.waiting[0];
        if (opener === undefined || origin.connecting !== undefined) {
            return;
        }

        const connecting = new Connecting(opener);
        origin.connecting = connecting;
        origin.target = opener.target;
        connecting.opening = openConnection(opener.target, {
            get moments() {
                return connecting.opener?.moments;
            },
            connected: (socket, protocol) => this.connected(origin, connecting, socket, protocol),
            failed: (err) => {
                // (An abandoned connection tells nothing more: it was no longer the origin's.)
                origin.connecting = undefined;
                this.refuseAll(origin, err, connecting.opener);
            }
        });
    }

    private connected(origin: OriginSessions, connecting: Connecting, socket: Socket, protocol: string): void {
        connecting.opening = undefined;
        if (protocol !== 'h2') {
            // ALPN chose HTTP/1.1 (or nothing, which means it): remembered, and every waiting stream goes there.
            origin.connecting = undefined;
            this.http1Origins.set(origin.key, true);
            const opener = connecting.opener;
            const waiting = origin.waiting.splice(0);
            for (const claim of waiting) {
                claim.speaksHttp1(claim === opener ? socket : undefined);
            }

            if (opener === undefined || !waiting.includes(opener)) {
                // The hop that opened it left meanwhile: the connection has nobody to carry.
                socket.destroy();
            }

            this.forgetIfEmpty(origin);
            return;
        }

        const session = new LiveSession(
            startSession(origin.settings, origin.target, socket),
            socket,
            origin.settings,
            origin
        );
        connecting.session = session;
        origin.sessions.push(session);
    }

    private refuseAll(origin: OriginSessions, err: Error, opener: SessionClaim | undefined): void {
        for (const claim of origin.waiting.splice(0)) {
            claim.refused(err, claim === opener);
        }

        this.forgetIfEmpty(origin);
    }

    private forgetIfEmpty(origin: OriginSessions): void {
        if (origin.sessions.length === 0 && origin.waiting.length === 0 && origin.connecting === undefined) {
            this.origins.delete(origin.key);
        }
    }
}

/** The session over a connection that is up: our settings, no server push. */
function startSession(settings: Http2Settings, target: ConnectionTarget, socket: Socket) {
    const { destination } = target;
    // The pseudo-header fields of every request are ours: this URL only has to be one.
    return http2.connect(`${destination.isHttps ? 'https' : 'http'}://${authorityHostOf(destination)}`, {
        createConnection: () => socket,
        settings: { enablePush: false, initialWindowSize: settings.initialWindowSize },
        // What the session may buffer for its unread streams, in MiB: at least its window, which is that.
        maxSessionMemory: Math.ceil(settings.connectionWindowSize / 2 ** 20) + 16
    });
}
