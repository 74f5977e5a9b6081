import type { Transport } from './transport.js';

/**
 * The HTTP/2 transport (http2/: sessions, streams, ALPN) loads with the first call that has the
 * `http2` option, not with the client: a process that never speaks HTTP/2 does not hold it (README
 * "Import footprint"), as with the cache layer (cache/load-layer.ts). The flow waits for it before
 * the call's first hop; a hop whose options turn `http2` on later (a `preRequest` listener, a
 * `beforeRedirect`) before it has loaded goes over HTTP/1.1 and starts the load for the next ones.
 */
let transport: Transport | undefined;
let loading: Promise<Transport> | undefined;

/** The HTTP/2 transport once its modules are loaded; undefined before. */
export function loadedHttp2(): Transport | undefined {
    return transport;
}

/** Loads the HTTP/2 transport's modules (once per process) and resolves with it. */
export function loadHttp2(): Promise<Transport> {
    loading ??= import('./http2/exchange.js').then((module) => {
        transport = module.http2;
        return transport;
    });
    return loading;
}
