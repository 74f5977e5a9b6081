/**
 * When each phase of one hop happened, in the shape got gives its `timings` (README "Timings").
 * Timestamps are epoch milliseconds with sub-millisecond precision (comparable with `Date.now()`).
 * A moment that did not happen on this hop stays undefined: a reused connection has no `lookup`,
 * `connect` or `secureConnect`, plain http no `secureConnect`, an IP literal or `socketPath` no
 * `lookup`. `end` is set once the body has been read (`read()`, the helpers).
 */
export interface Timings {
    /** The hop began (just before `preRequest`). */
    start: number;
    /** The request was given a socket (new or reused). */
    socket: number | undefined;
    /** The host name was resolved. */
    lookup: number | undefined;
    /** The TCP connection (or the proxy tunnel) was established. */
    connect: number | undefined;
    /** The TLS handshake finished. */
    secureConnect: number | undefined;
    /** The request, body included, was written out. */
    upload: number | undefined;
    /** The response headers arrived. */
    response: number | undefined;
    /** The response body was read to its end. */
    end: number | undefined;
    /** The hop failed. */
    error: number | undefined;
    /** The hop was aborted (the caller's signal, `destroy()`). */
    abort: number | undefined;
    phases: TimingPhases;
}

/** Durations in milliseconds derived from `Timings`; undefined for a phase this hop did not have. */
export interface TimingPhases {
    /** start → socket: waiting for a socket (the agent's queue). */
    wait: number | undefined;
    /** socket → lookup. */
    dns: number | undefined;
    /** lookup (or socket) → connect. */
    tcp: number | undefined;
    /** connect → secureConnect. */
    tls: number | undefined;
    /** connected (or socket, when reused) → upload: sending the request. */
    request: number | undefined;
    /** upload → response: the server's think time. */
    firstByte: number | undefined;
    /** response → end: reading the body. */
    download: number | undefined;
    /** start → end, error or abort. */
    total: number | undefined;
}

/** The request option `timeouts`: a bound in milliseconds for each phase of a hop. */
export interface PhaseTimeouts {
    /** Resolving the host name. */
    lookup?: number | null | undefined;
    /** Establishing the TCP connection (or the proxy tunnel). */
    connect?: number | null | undefined;
    /** The TLS handshake. */
    secureConnect?: number | null | undefined;
    /** From the connection until the request body is sent. */
    send?: number | null | undefined;
    /** From the end of the request until the response headers. */
    response?: number | null | undefined;
}

/** The phase named in a timeout's `err.data.phase`. */
export type TimeoutPhase = keyof PhaseTimeouts | 'deadline';
