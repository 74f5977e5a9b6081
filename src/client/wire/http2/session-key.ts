import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { ConnectionTarget } from './connect.js';
import type { Http2Settings } from './settings.js';

/**
 * Which streams may share a session: those to one origin (or socket path) through the same proxy,
 * with the same connection settings — the agent whose TLS settings the connection takes, the request's
 * own TLS options, the `lookup` function, `family` and `hints`, and the session's HTTP/2 settings.
 */
export function sessionKey(
    target: ConnectionTarget,
    agent: HttpAgent | HttpsAgent | false,
    settings: Http2Settings
): string {
    const { destination, options, proxy } = target;
    const where =
        options.socketPath === undefined ? destination.origin : `unix:${options.socketPath} ${destination.origin}`;
    const through = proxy === undefined ? '' : ` via ${proxy.url.href} ${String(proxy.credential ?? '')}`;
    const tls =
        target.tls === undefined
            ? ''
            : ` tls ${agent === false ? 'own' : idOf(agent)} ${String(options.rejectUnauthorized)} ${options.ciphers ?? ''} ${options.secureProtocol ?? ''}`;
    const lookup = options.lookup === undefined ? '' : ` lookup ${idOf(options.lookup)}`;
    return `${where}${through}${tls}${lookup} ${options.family ?? ''} ${options.hints ?? ''} settings ${idOf(settings)}`;
}

// A number per object that takes part in a key: two objects alike are still two configurations.
const ids = new WeakMap<object, number>();
let lastId = 0;

function idOf(thing: object): number {
    let id = ids.get(thing);
    if (id === undefined) {
        id = ++lastId;
        ids.set(thing, id);
    }

    return id;
}
