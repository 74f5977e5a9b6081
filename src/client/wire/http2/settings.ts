import type { Http2Options } from '../../contract/types.js';

/** The `http2` option resolved (README "HTTP/2"): every setting with its value. */
export interface Http2Settings {
    readonly h2c: boolean;
    /** Streams per session at most, below the server's own limit; Infinity: the server's. */
    readonly maxConcurrentStreams: number;
    readonly pingInterval: number;
    readonly pingTimeout: number;
    readonly idleTimeout: number;
    readonly initialWindowSize: number;
    readonly connectionWindowSize: number;
}

const mebibyte = 1024 * 1024;

/**
 * The defaults. The windows are far above HTTP/2's 64 KiB, which caps one stream's download at 64 KiB
 * per round trip (0.6 MiB/s at 100 ms); the session's window bounds what all its unread streams may
 * hold in memory. A stream's is 1 MiB (10 MiB/s per stream at 100 ms, a gigabyte a second at 1 ms): a
 * larger one let the server send bursts bigger than the caches, and 8 MiB downloads on loopback ran at
 * 0.75x the rate with 1.2x the CPU at 4 MiB (docs/performance.md); a long fat link raises it.
 */
export const defaultHttp2Settings: Http2Settings = {
    h2c: false,
    maxConcurrentStreams: Number.POSITIVE_INFINITY,
    pingInterval: 30_000,
    pingTimeout: 10_000,
    idleTimeout: 60_000,
    initialWindowSize: mebibyte,
    connectionWindowSize: 16 * mebibyte
};

// Resolved once per option object: the same settings for every request of a client.
const resolved = new WeakMap<Http2Options, Http2Settings>();

/** The settings of an `http2` option that is not false. */
export function http2SettingsOf(option: true | Http2Options): Http2Settings {
    if (option === true) {
        return defaultHttp2Settings;
    }

    let settings = resolved.get(option);
    if (settings === undefined) {
        const d = defaultHttp2Settings;
        settings = {
            h2c: option.h2c ?? d.h2c,
            maxConcurrentStreams: option.maxConcurrentStreams ?? d.maxConcurrentStreams,
            pingInterval: option.pingInterval ?? d.pingInterval,
            pingTimeout: option.pingTimeout ?? d.pingTimeout,
            idleTimeout: option.idleTimeout ?? d.idleTimeout,
            initialWindowSize: option.initialWindowSize ?? d.initialWindowSize,
            connectionWindowSize: option.connectionWindowSize ?? d.connectionWindowSize
        };
        resolved.set(option, settings);
    }

    return settings;
}
