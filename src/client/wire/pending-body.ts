import type { PayloadReplay } from '../bodies/payload-replay.js';
import type { ProgressCallback } from '../contract/types.js';
import type { Exchange } from './transport.js';

/**
 * A body an exchange was given before what carries it is there: an HTTP/2 stream still waiting for
 * its session, or the exchange of a transport still loading (load-http2.ts).
 */
export type PendingBody =
    | {
          readonly stream: false;
          readonly body: string | Buffer | undefined;
          readonly onProgress: ProgressCallback | undefined;
      }
    | { readonly stream: true; readonly replay: PayloadReplay; readonly onProgress: ProgressCallback | undefined };

/** Sends a body that waited through `exchange`, the one that carries it now. */
export function sendPendingBody(body: PendingBody, exchange: Exchange): void {
    if (body.stream) {
        exchange.sendStream(body.replay, body.onProgress);
    } else {
        exchange.sendBody(body.body, body.onProgress);
    }
}
