import { tracingChannel } from 'node:diagnostics_channel';
import { CLIENT_TRACING_CHANNELS } from '../src/client/index.js';

/*
 * Each hop in its own call's context. A hop's span takes the context active at its `preRequest` as its
 * parent; the next hop of a redirect, a retry or a re-send starts from a callback of the hop before,
 * and an HTTP/2 session's callbacks run in the context of the call that opened the session, not in
 * that of the call whose stream they serve. While `tracewire:client:hop` has a subscriber, the client
 * starts every hop in the async context its call began in (docs/observability.md "Tracing channels"),
 * the OpenTelemetry context included: the instrumentation is that subscriber.
 */

const hopChannel = tracingChannel(CLIENT_TRACING_CHANNELS.hop);

// The context restored is all the instrumentation needs: the spans are made from the pipeline's events.
function hopStarted(): void {}

/** Subscribes to the hops' start until the returned function is called. */
export function followHopContexts(): () => void {
    hopChannel.start.subscribe(hopStarted);
    return () => {
        hopChannel.start.unsubscribe(hopStarted);
    };
}
