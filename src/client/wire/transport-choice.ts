import type { EffectiveOptions } from '../contract/types.js';
import { isOn } from '../options/values.js';
import { http1 } from './http1/exchange.js';
import { http2Transport } from './load-http2.js';
import type { ExchangeHop, Transport } from './transport.js';

/**
 * Which transport carries a hop, decided below the seam (docs/architecture.md, "The transport
 * seam"): the hop and everything above it drive a `Transport` and never ask which protocol it speaks.
 */

/**
 * The transport of `hop`: HTTP/2 with the `http2` option where it applies — https (ALPN decides), or
 * http with `h2c` — except through a forwarding proxy (an http target's request goes to the proxy,
 * which speaks HTTP/1.1); HTTP/1.1 otherwise.
 */
export function transportFor(hop: Pick<ExchangeHop, 'options' | 'destination' | 'proxy'>): Transport {
    const option = hop.options.http2;
    const proxy = hop.proxy;
    if (!isOn(option) || (proxy !== undefined && !proxy.tunnel)) {
        return http1;
    }

    if (!hop.destination.isHttps && (option === true || option.h2c !== true)) {
        return http1;
    }

    // Until it has loaded (with the process's first such hop), one that makes the request at once and waits for it.
    return http2Transport();
}

/**
 * True when a hop with these options may go over a transport whose server can refuse a request
 * without processing it (HTTP/2: REFUSED_STREAM, a stream above a GOAWAY's last one), which the flow
 * then sends again (flow/stale-resend.ts): a stream payload keeps a copy for that.
 */
export function mayBeRefusedUnprocessed(options: EffectiveOptions): boolean {
    return isOn(options.http2);
}
