import { ClientHandlers } from './client-handlers.js';
import type { ClientInstrumentationConfig, InstrumentableClient } from './config.js';

export interface ClientInstrumentation {
    /**
     * Removes every listener the instrumentation added and stops observing the connection pools.
     * Hops in flight are not cut short: a hop whose response has arrived still ends with its body.
     */
    disable(): void;
}

// One emitter gets one instrumentation: two would make two spans per hop.
const instrumented = new WeakSet<object>();

/**
 * Subscribes to the event pipeline of a client made with `defaults({ events: true })`: one CLIENT
 * span per request hop (redirects included) following the stable HTTP semantic conventions, from
 * the request to the last byte of its response body, the trace context injected into the outgoing
 * headers, and the `http.client.request.duration` histogram. Clients derived from it with
 * `.defaults()` share its emitter, so they are covered too.
 */
export function instrumentClient(
    client: InstrumentableClient,
    config: ClientInstrumentationConfig = {}
): ClientInstrumentation {
    const events = client?.events;
    if (typeof events?.on !== 'function' || typeof events.removeListener !== 'function') {
        throw new TypeError(
            'instrumentClient() needs a client made with defaults({ events: true }): this client has no events emitter'
        );
    }

    if (instrumented.has(events)) {
        throw new Error('instrumentClient(): this client is already instrumented; disable() the first instrumentation');
    }

    const instrumentation = new ClientHandlers(config, client);
    events.on('preRequest', instrumentation.onPreRequest);
    events.on('request', instrumentation.onRequest);
    events.on('response', instrumentation.onResponse);
    instrumented.add(events);

    let enabled = true;
    return {
        disable() {
            if (!enabled) {
                return;
            }

            enabled = false;
            events.removeListener('preRequest', instrumentation.onPreRequest);
            events.removeListener('request', instrumentation.onRequest);
            events.removeListener('response', instrumentation.onResponse);
            instrumentation.stop();
            instrumented.delete(events);
        }
    };
}
