import type { ClientRequest, Agent as HttpAgent, IncomingMessage } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { NetConnectOpts, Socket } from 'node:net';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { http, https, net, tls } from '../../../common/node-modules.js';
import type { EffectiveOptions } from '../../contract/types.js';
import { putResolution, tlsSettingsFor } from '../connection-settings.js';
import { authorityHostOf, type Destination } from '../destination.js';
import type { ProxyRoute } from '../proxy.js';
import { followConnection, followHandshake, type MomentsHearer, stopFollowing } from '../socket-moments.js';

/**
 * Opening the connection of a new HTTP/2 session (README "HTTP/2"): TCP, or TLS offering the
 * protocols by ALPN, to the origin, to its `socketPath`, or through a proxy's CONNECT tunnel; the
 * moments told to the hop that opens it, as HTTP/1.1's agent sockets tell them.
 */

/** What to connect to, and how. */
export interface ConnectionTarget {
    readonly destination: Destination;
    readonly options: EffectiveOptions;
    readonly proxy: ProxyRoute | undefined;
    /** The agent whose TLS settings a secure connection takes (connection-settings.ts). */
    readonly agent: HttpAgent | HttpsAgent | false;
    /** TLS, or cleartext (h2c). */
    readonly secure: boolean;
    /** The protocols offered by ALPN, most wanted first. */
    readonly alpn: readonly string[];
}

/** Who hears of the connection: the moments (while the hop that opened it still wants them), the outcome. */
export interface ConnectionWatcher extends MomentsHearer {
    /** The connection is up: `protocol` is what ALPN chose (`h2`, `http/1.1`), or `h2` for cleartext. */
    connected(socket: Socket, protocol: string): void;
    failed(err: Error): void;
}

/** A connection being opened: `abandon()` stops it when nobody waits for it any more. */
export interface Opening {
    abandon(): void;
}

export function openConnection(target: ConnectionTarget, watcher: ConnectionWatcher): Opening {
    return target.proxy?.tunnel ? tunnelThrough(target.proxy, target, watcher) : connectDirectly(target, watcher);
}

function connectDirectly(target: ConnectionTarget, watcher: ConnectionWatcher): Opening {
    const { destination, options } = target;
    const where: Record<string, unknown> =
        options.socketPath === undefined
            ? { host: destination.hostname, port: destination.port }
            : { path: options.socketPath };
    putResolution(options, where);
    const socket: Socket = target.secure
        ? tls.connect({ ...tlsSettingsOf(target), ...where, ALPNProtocols: [...target.alpn] } as ConnectionOptions)
        : net.connect(where as unknown as NetConnectOpts);
    followConnection(socket, options.socketPath === undefined ? destination.hostname : '', watcher);
    return untilReady(socket, target.secure, watcher);
}

/** The TLS settings of a connection to the target: worked out only when one is opened, not for each stream. */
function tlsSettingsOf(target: ConnectionTarget): Record<string, unknown> {
    return tlsSettingsFor(target.destination, target.options, target.agent);
}

/** Waits until a socket is ready for the session: connected, and through its TLS handshake when `secure`. */
function untilReady(socket: Socket, secure: boolean, watcher: ConnectionWatcher): Opening {
    const onConnect = () => {
        finish();
        watcher.connected(socket, 'h2');
    };
    const onSecure = () => {
        finish();
        // No protocol agreed (a server without ALPN) is HTTP/1.1.
        watcher.connected(socket, (socket as TLSSocket).alpnProtocol || 'http/1.1');
    };
    const onError = (err: Error) => {
        finish();
        stopFollowing(socket);
        socket.destroy();
        watcher.failed(err);
    };
    const finish = () => {
        socket.removeListener('connect', onConnect);
        socket.removeListener('secureConnect', onSecure);
        socket.removeListener('error', onError);
    };
    // (Registered after the moments' listeners: the hop hears of each step before the session does.)
    socket.on(secure ? 'secureConnect' : 'connect', secure ? onSecure : onConnect);
    socket.on('error', onError);
    return {
        abandon() {
            // (Only while the socket is opening: the pool holds an opening until it is up or failed.)
            finish();
            stopFollowing(socket);
            socket.destroy();
        }
    };
}

/**
 * A CONNECT tunnel through the proxy of `route` (the proxy resolves the origin's name: the tunnel is
 * the connect phase), then TLS to the origin inside it. The proxy's answer is noted on the route,
 * where a refusal is read as the hop's failure (proxy.ts).
 */
function tunnelThrough(route: ProxyRoute, target: ConnectionTarget, watcher: ConnectionWatcher): Opening {
    const { destination } = target;
    const authority = `${authorityHostOf(destination)}:${destination.port}`;
    const headers: Record<string, string> = { host: authority };
    const credential = route.credential ?? credentialsOf(route.url);
    if (credential !== undefined) {
        headers['proxy-authorization'] = String(credential);
    }

    const proxyIsHttps = route.url.protocol === 'https:';
    const connect: ClientRequest = (proxyIsHttps ? https : http).request({
        host: route.hostname,
        port: route.url.port === '' ? (proxyIsHttps ? 443 : 80) : Number(route.url.port),
        method: 'CONNECT',
        path: authority,
        headers,
        // (Not the request's lookup, family or hints: they are the origin's, whose name the proxy resolves.)
        agent: false
    });
    let inner: Opening | undefined;
    let done = false;
    const fail = (err: Error) => {
        if (!done) {
            done = true;
            watcher.failed(err);
        }
    };
    watcher.moments?.tunnelOpening();
    connect.once('connect', (res: IncomingMessage, socket: Socket) => {
        route.connectStatus = res.statusCode;
        route.connectStatusText = res.statusMessage;
        route.connectHeaders = res.headers;
        watcher.moments?.tunnelConnected(res.statusCode);
        if (res.statusCode !== 200) {
            socket.destroy();
            done = true;
            // The hop reads the refusal from the route (tunnelRefusal); the error says the same for anyone else.
            watcher.failed(new Error(`proxy ${route.name} refused the tunnel with ${res.statusCode}`));
            return;
        }

        route.connected = true;
        watcher.moments?.tunnelAssigned();
        const secured = tls.connect({
            ...tlsSettingsOf(target),
            socket,
            ALPNProtocols: [...target.alpn]
        } as ConnectionOptions);
        done = true;
        followHandshake(secured, watcher);
        inner = untilReady(secured, true, watcher);
    });
    // (Node hands every answer to a CONNECT to 'connect', whatever its status.)
    connect.on('error', fail);
    connect.end();
    return {
        abandon() {
            if (inner !== undefined) {
                inner.abandon();
            } else {
                done = true;
                connect.destroy();
            }
        }
    };
}

/** What a proxy URL's user name and password say, as the Basic credential a CONNECT carries. */
function credentialsOf(url: URL): string | undefined {
    if (url.username === '' && url.password === '') {
        return undefined;
    }

    const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    return `Basic ${Buffer.from(pair).toString('base64')}`;
}
