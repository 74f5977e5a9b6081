import type { EffectiveOptions } from '../contract/types.js';
import { isOn } from '../options/values.js';
import { http1 } from './http1/exchange.js';
import { http2Transport } from './load-http2.js';
import {
    type Exchange,
    type ExchangeHop,
    type StandInTransport,
    standInForProcess,
    type Transport
} from './transport.js';

/**
 * Which transport carries a hop, decided below the seam (docs/architecture.md, "The transport
 * seam"): the hop and everything above it drive a `Transport` and never ask which protocol it speaks.
 */

/**
 * Whether a hop offers HTTP/2 (README "HTTP/2"): with the `http2` option, on https (ALPN decides) or
 * on http with `h2c` (prior knowledge), except through a forwarding proxy (an http target's request
 * goes to the proxy, which speaks HTTP/1.1).
 */
export function offersHttp2(hop: Pick<ExchangeHop, 'options' | 'destination' | 'proxy'>): boolean {
    const option = hop.options.http2;
    const proxy = hop.proxy;
    if (!isOn(option) || (proxy !== undefined && !proxy.tunnel)) {
        return false;
    }

    return hop.destination.isHttps || (option !== true && option.h2c === true);
}

/** The transport of `hop`: HTTP/2 when it offers it (`offersHttp2`), HTTP/1.1 otherwise. */
export function transportFor(hop: Pick<ExchangeHop, 'options' | 'destination' | 'proxy'>): Transport {
    // Until it has loaded (with the process's first such hop), one that makes the request at once and waits for it.
    return offersHttp2(hop) ? http2Transport() : http1;
}

/**
 * The exchange of `hop`: opened by its client's stand-in for the network when it has one that takes
 * it (the `mock` option or the one installed for the process, docs/testing.md), else by its transport.
 */
export function openExchange(hop: ExchangeHop): Exchange {
    const standIn = (hop.options.mock as StandInTransport | undefined) ?? standInForProcess();
    if (standIn === undefined) {
        return transportFor(hop).open(hop);
    }

    const http2 = offersHttp2(hop);
    return standIn.openExchange(hop, http2, http2 ? http2Transport() : http1) ?? transportFor(hop).open(hop);
}

/**
 * True when a hop with these options may go over a transport whose server can refuse a request
 * without processing it (HTTP/2: REFUSED_STREAM, a stream above a GOAWAY's last one), which the flow
 * then sends again (flow/stale-resend.ts): a stream payload keeps a copy for that.
 */
export function mayBeRefusedUnprocessed(options: EffectiveOptions): boolean {
    return isOn(options.http2);
}
