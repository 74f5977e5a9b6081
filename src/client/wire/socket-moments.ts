import type { Socket } from 'node:net';
import { net } from '../../common/node-modules.js';
import type { ConnectionMoments } from './transport.js';

/**
 * The moments of a new connection, read from its socket's events, for every transport (README
 * "Timings"): that it is opening and how it starts, then `lookup`, `connect` and, for TLS,
 * `secureConnect`. The listeners are shared functions and whoever hears the moments rides on the
 * socket until its last one, so following a connection makes no closure: HTTP/1.1 follows the new
 * connection of any request that gets one.
 */

/** Who hears a connection's moments: the hop that opened it; undefined once it left. */
export interface MomentsHearer {
    readonly moments: ConnectionMoments | undefined;
}

const hearerOf = Symbol('tracewire.connectionMoments');
type FollowedSocket = Socket & { [hearerOf]?: MomentsHearer | undefined };

/**
 * Follows `socket`, a connection being made to `host` (the empty string for a UNIX socket), and tells
 * `hearer` it is opening: with a lookup first for a host name, else with the connect.
 */
export function followConnection(socket: Socket, host: string, hearer: MomentsHearer): void {
    (socket as FollowedSocket)[hearerOf] = hearer;
    socket.on('lookup', onLookup);
    socket.on('connect', onConnect);
    if ('encrypted' in socket) {
        socket.on('secureConnect', onSecureConnect);
    }

    hearer.moments?.connectionOpening(host !== '' && net.isIP(host) === 0 ? 'lookup' : 'connect');
}

/** Follows the TLS handshake of `socket`, whose connection is there already (a tunnel's, through a proxy). */
export function followHandshake(socket: Socket, hearer: MomentsHearer): void {
    (socket as FollowedSocket)[hearerOf] = hearer;
    socket.on('secureConnect', onSecureConnect);
}

/** Stops following `socket`, given up before its last moment. */
export function stopFollowing(socket: Socket): void {
    socket.removeListener('lookup', onLookup);
    socket.removeListener('connect', onConnect);
    socket.removeListener('secureConnect', onSecureConnect);
    (socket as FollowedSocket)[hearerOf] = undefined;
}

function onLookup(this: FollowedSocket, err: Error | null): void {
    if (err === null) {
        // With several addresses to try, Node may report more than one lookup: the first one counts.
        this.removeListener('lookup', onLookup);
        this[hearerOf]?.moments?.lookedUp();
    }
}

function onConnect(this: FollowedSocket): void {
    this.removeListener('lookup', onLookup);
    this.removeListener('connect', onConnect);
    const hearer = this[hearerOf];
    const secure = 'encrypted' in this;
    if (!secure) {
        this[hearerOf] = undefined;
    }

    hearer?.moments?.connected(secure);
}

function onSecureConnect(this: FollowedSocket): void {
    this.removeListener('secureConnect', onSecureConnect);
    const hearer = this[hearerOf];
    this[hearerOf] = undefined;
    hearer?.moments?.secured();
}
