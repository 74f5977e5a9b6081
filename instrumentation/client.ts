import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { EffectiveOptions, RequestUri } from '../src/client/contract/types.js';
import { ClientHandlers } from './client-handlers.js';
import type { ProviderConfig } from './providers.js';

/**
 * The URL the client hands to `preRequest` and back in `response`, one object per hop: the client's
 * `RequestUri` (src/client/contract/types.ts).
 */
export type HopUri = RequestUri;

/** The effective options of a hop: the client's `EffectiveOptions`; `route` names the span and sets `url.template`. */
export type HopOptions = EffectiveOptions;

/** What `responseHook` receives once a hop is over. */
export interface HopOutcome {
    uri: HopUri;
    req: ClientRequest | undefined;
    res: IncomingMessage | undefined;
    /**
     * The HttpError of a hop that failed before a response, or the error that cut the response
     * body short; undefined for a response received whole, 4xx and 5xx included.
     */
    error: Error | undefined;
}

export interface ClientInstrumentationConfig extends ProviderConfig {
    /** Called when a hop's span starts, before the trace context is injected. */
    requestHook?: (span: Span, request: { uri: HopUri; options: HopOptions }) => void;
    /** Called when a hop is over (its response body received, or the hop failed), just before its span ends. */
    responseHook?: (span: Span, outcome: HopOutcome) => void;
    /** Return true for a request that must get no span, no metric and no injected context. */
    ignoreRequest?: (uri: HopUri, options: HopOptions) => boolean;
    /** Header names recorded as `http.request.header.<name>` and `http.response.header.<name>`. */
    headersToSpanAttributes?: { request?: readonly string[]; response?: readonly string[] };
    /**
     * Also record the conventions' `http.client.request.body.size`, `http.client.response.body.size`,
     * `http.client.active_requests`, `http.client.open_connections`, `http.client.connection.duration`
     * and `dns.lookup.duration`. Default false: only
     * `http.client.request.duration`.
     */
    optionalMetrics?: boolean;
}

/** The emitter of a client made with `defaults({ events: true })`, as far as listening goes. */
// biome-ignore-start lint/suspicious/noExplicitAny: listeners of any signature must be accepted, as an emitter does
export interface ClientEventEmitter {
    on(event: string, listener: (...args: any[]) => void): unknown;
    removeListener(event: string, listener: (...args: any[]) => void): unknown;
}
// biome-ignore-end lint/suspicious/noExplicitAny: see above

/** Any tracewire client; only one made with `defaults({ events: true })` can be instrumented. */
export interface InstrumentableClient {
    readonly events?: ClientEventEmitter | undefined;
    /** The connection pools, observed by `http.client.open_connections`. */
    readonly agents?: object | undefined;
}

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
