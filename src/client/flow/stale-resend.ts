import type { HttpError } from '../../errors/index.js';
import type { EffectiveOptions, ResendReason } from '../contract/types.js';
import type { Destination } from '../wire/destination.js';
import type { Hop } from '../wire/hop.js';
import {
    type FailedHop,
    failedOnStaleConnection,
    staleResendReason,
    unprocessedResendReason
} from './stale-connection.js';

/** What re-sending a stale connection's hop needs of the call's flow (hop-loop.ts). */
export interface ResendingFlow {
    readonly settled: boolean;
    staleResends: number;
    /** True when the hop's payload can be sent again. */
    canResend(hop: Hop): boolean;
    startHop(method: string, target: URL | Destination, options: EffectiveOptions, resendReason?: ResendReason): void;
}

/**
 * Sends the hop again, at once and outside the `retry` budget, when the server never processed it
 * (an HTTP/2 stream refused, or cut by a GOAWAY before processing) or it failed on a kept-alive
 * connection the server had closed (the pure policies of stale-connection.ts, README "Stale
 * connections" and "HTTP/2"); true when it will be. After a stale connection, the pool's idle
 * connections older than that one are retired first, so the re-send does not land on another.
 */
export function resendIfStale(flow: ResendingFlow, hop: Hop, err: HttpError): boolean {
    const failed: FailedHop = {
        err,
        method: hop.method,
        headers: hop.headers,
        reusedSocket: hop.reusedSocket,
        responseBytes: hop.responseBytes(),
        replayable: flow.canResend(hop),
        resendReason: hop.resendReason
    };
    let reason = unprocessedResendReason(failed);
    if (reason === undefined) {
        if (!failedOnStaleConnection(failed)) {
            return false;
        }

        hop.retireIdlePeers();
        reason = staleResendReason(failed);
    }

    if (reason === undefined || flow.settled) {
        return false;
    }

    flow.staleResends++;
    // Said on the failed hop's uri right after its `response` event, for its observers (RequestUri.resent).
    const uri = hop.eventUri;
    if (uri !== undefined) {
        uri.resent = reason;
    }

    // After the failed request's own error handling: its socket leaves the pool first.
    process.nextTick(onResendDue, flow, hop, reason);
    return true;
}

/** The re-send of a stale connection's hop, unless the request was settled (aborted) meanwhile. */
function onResendDue(flow: ResendingFlow, hop: Hop, reason: ResendReason): void {
    if (!flow.settled) {
        flow.startHop(hop.method, hop.destination, hop.options, reason);
    }
}
