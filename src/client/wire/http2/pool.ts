import type { Socket } from 'node:net';
import { BoundedMemo } from '../../../common/bounded-memo.js';
import type { Agents } from '../../contract/types.js';
import type { ConnectionMoments } from '../transport.js';
import { type ConnectionTarget, type Opening, openConnection } from './connect.js';
import { LiveSession, type SessionOwner } from './session.js';
import type { Http2Settings } from './settings.js';

/**
 * The HTTP/2 sessions of a client (README "HTTP/2"), per origin and connection settings: one session
 * carries many streams, and another opens only when every session of the origin is full (the
 * server's `SETTINGS_MAX_CONCURRENT_STREAMS`, or `maxConcurrentStreams`). The first streams to a new
 * origin wait for the one connection being opened instead of each opening its own; what ALPN chose is
 * remembered per origin, so an origin that answered `http/1.1` is then reached through the agents.
 */

/** A stream that wants a session: it is granted one, refused, or sent on to HTTP/1.1. */
export interface SessionClaim {
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

/** The pool of a client's connection pools (`Agents`): clients derived with `defaults()` share it. */
const poolsByAgents = new WeakMap<Agents, SessionPool>();

export function sessionPoolOf(agents: Agents): SessionPool {
    let pool = poolsByAgents.get(agents);
    if (pool === undefined) {
        pool = new SessionPool();
        poolsByAgents.set(agents, pool);
    }

    return pool;
}

/** One origin's sessions, the streams waiting for room, and the connection being opened for them. */
class OriginSessions {
    readonly sessions: LiveSession[] = [];
    readonly waiting: SessionClaim[] = [];
    opening: Opening | undefined;
    opener: SessionClaim | undefined;
    // The session the opener's connection became, until it grants the opener its stream.
    openedFor: Map<LiveSession, SessionClaim> = new Map();

    constructor(
        readonly key: string,
        readonly target: ConnectionTarget,
        readonly settings: Http2Settings
    ) {}
}

export class SessionPool implements SessionOwner {
    private readonly origins = new Map<string, OriginSessions>();
    private readonly originOf = new WeakMap<LiveSession, OriginSessions>();
    private readonly http1Origins = new BoundedMemo<string, true>(originLimit);

    /** The sessions open now, for the metrics of open connections: each with whether it carries a stream. */
    *openSessions(): IterableIterator<{ readonly session: LiveSession; readonly target: ConnectionTarget }> {
        for (const origin of this.origins.values()) {
            for (const session of origin.sessions) {
                yield { session, target: origin.target };
            }
        }
    }

    /** True when the origin of `key` answered ALPN with HTTP/1.1. */
    speaksHttp1(key: string): boolean {
        return this.http1Origins.get(key) === true;
    }

    /** A stream wants a session of the origin of `key`: granted at once when one has room, else when one has. */
    claim(key: string, target: ConnectionTarget, settings: Http2Settings, claim: SessionClaim): void {
        let origin = this.origins.get(key);
        if (origin === undefined) {
            origin = new OriginSessions(key, target, settings);
            this.origins.set(key, origin);
        }

        for (const session of origin.sessions) {
            if (session.room > 0) {
                claim.granted(session, false);
                return;
            }
        }

        origin.waiting.push(claim);
        if (origin.opening === undefined) {
            this.open(origin, claim);
        }
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

        if (origin.waiting.length === 0 && origin.opening !== undefined) {
            origin.opening.abandon();
            origin.opening = undefined;
            origin.opener = undefined;
        }

        this.forgetIfEmpty(origin);
    }

    roomFreed(session: LiveSession): void {
        const origin = this.originOf.get(session);
        if (origin === undefined) {
            return;
        }

        while (origin.waiting.length > 0 && session.room > 0) {
            const claim = origin.waiting.shift() as SessionClaim;
            const opened = origin.openedFor.get(session) === claim;
            if (opened) {
                origin.openedFor.delete(session);
            }

            claim.granted(session, opened);
        }

        this.openForWaiting(origin);
    }

    retired(session: LiveSession): void {
        const origin = this.originOf.get(session);
        if (origin === undefined) {
            return;
        }

        const at = origin.sessions.indexOf(session);
        if (at !== -1) {
            origin.sessions.splice(at, 1);
        }

        if (!session.ready && origin.openedFor.has(session)) {
            // The connection never became a session: the streams waiting for it fail as it did.
            origin.openedFor.delete(session);
            const err =
                session.failure ??
                Object.assign(new Error('The HTTP/2 session closed before the server sent its settings'), {
                    code: 'ECONNRESET'
                });
            this.refuseAll(origin, err);
            return;
        }

        this.openForWaiting(origin);
        this.forgetIfEmpty(origin);
    }

    /** Streams still wait and no connection is being opened for them: one opens, for the first of them. */
    private openForWaiting(origin: OriginSessions): void {
        if (origin.waiting.length > 0 && origin.opening === undefined && origin.openedFor.size === 0) {
            this.open(origin, origin.waiting[0] as SessionClaim);
        }
    }

    private open(origin: OriginSessions, opener: SessionClaim): void {
        origin.opener = opener;
        origin.opening = openConnection(origin.target, {
            get moments() {
                return origin.opener === opener ? opener.moments : undefined;
            },
            connected: (socket, protocol) => this.connected(origin, opener, socket, protocol),
            failed: (err) => {
                origin.opening = undefined;
                origin.opener = undefined;
                this.refuseAll(origin, err, opener);
            }
        });
    }

    private connected(origin: OriginSessions, opener: SessionClaim, socket: Socket, protocol: string): void {
        origin.opening = undefined;
        origin.opener = undefined;
        if (protocol !== 'h2') {
            // ALPN chose HTTP/1.1 (or nothing, which means it): remembered, and every waiting stream goes there.
            this.http1Origins.set(origin.key, true);
            const waiting = origin.waiting.splice(0);
            for (const claim of waiting) {
                claim.speaksHttp1(claim === opener ? socket : undefined);
            }

            if (!waiting.includes(opener)) {
                // The hop that opened it left meanwhile: the connection has nobody to carry.
                socket.destroy();
            }

            this.forgetIfEmpty(origin);
            return;
        }

        const session = new LiveSession(startSession(origin, socket), socket, origin.settings, this);
        origin.sessions.push(session);
        this.originOf.set(session, origin);
        if (origin.waiting.includes(opener)) {
            origin.openedFor.set(session, opener);
        }
    }

    private refuseAll(origin: OriginSessions, err: Error, opener?: SessionClaim): void {
        for (const claim of origin.waiting.splice(0)) {
            claim.refused(err, claim === opener);
        }

        this.forgetIfEmpty(origin);
    }

    private forgetIfEmpty(origin: OriginSessions): void {
        if (origin.sessions.length === 0 && origin.waiting.length === 0 && origin.opening === undefined) {
            this.origins.delete(origin.key);
        }
    }
}

/** The session over a connection that is up: our settings, no server push. */
function startSession(origin: OriginSessions, socket: Socket) {
    const http2 = process.getBuiltinModule('node:http2');
    const { destination } = origin.target;
    const settings = origin.settings;
    return http2.connect(`${destination.isHttps ? 'https' : 'http'}://${destination.hostname}`, {
        createConnection: () => socket,
        settings: { enablePush: false, initialWindowSize: settings.initialWindowSize },
        // What the session may buffer for its unread streams, in MiB: at least its window, which is that.
        maxSessionMemory: Math.ceil(settings.connectionWindowSize / 2 ** 20) + 16
    });
}
