import { requestTlsKey, resolutionKey } from '../connection-settings.js';
import type { ConnectionTarget } from './connect.js';
import type { Http2Settings } from './settings.js';

/**
 * Which streams may share a session: those to one origin (or socket path) through the same proxy,
 * with the same connection settings — the agent whose TLS settings the connection takes, the request's
 * own TLS options and how it resolves names (connection-settings.ts), and the session's HTTP/2
 * settings. Values, not identities, where a caller may write the same thing afresh on every request
 * (an `http2` object literal): each would otherwise open a session of its own.
 */
export function sessionKey(target: ConnectionTarget, settings: Http2Settings): string {
    const { destination, options, proxy, agent } = target;
    const where =
        options.socketPath === undefined ? destination.origin : `unix:${options.socketPath} ${destination.origin}`;
    const through = proxy === undefined ? '' : ` via ${proxy.url.href} ${String(proxy.credential ?? '')}`;
    const tls = target.secure ? ` tls ${agent === false ? 'own' : idOf(agent)} ${requestTlsKey(options)}` : '';
    return `${where}${through}${tls} ${resolutionKey(options)} ${settingsKey(settings)}`;
}

// Settings are resolved once per option object (settings.ts): their part of the key is written once too.
const settingsKeys = new WeakMap<Http2Settings, string>();

function settingsKey(settings: Http2Settings): string {
    let key = settingsKeys.get(settings);
    if (key === undefined) {
        key = `h2 ${settings.maxConcurrentStreams} ${settings.pingInterval} ${settings.pingTimeout} ${settings.idleTimeout} ${settings.initialWindowSize} ${settings.connectionWindowSize}`;
        settingsKeys.set(settings, key);
    }

    return key;
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
