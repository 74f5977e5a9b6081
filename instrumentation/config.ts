import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { EffectiveOptions, RequestUri } from '../src/client/index.js';
import type { EventLoggerProvider } from './log-events.js';
import type { ProviderConfig } from './providers.js';

/*
 * The instrumentation's config and what its hooks receive: the contract between the user, the
 * public entry points (client.ts, tracewire-instrumentation.ts) and the handlers that apply it
 * (client-handlers.ts). Types only, imported by all three, so none of them imports another for them.
 */

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
    /**
     * Also tell each moment of a hop's timings as an event (`tracewire.socket` ... `tracewire.end`,
     * `PHASE_EVENTS`): a log record at that moment through the Logs API, and with `spanEvents` an event
     * on the span, drawn as a mark on its bar by Jaeger and Tempo. Default false: the phase attributes
     * (`PHASE_ATTRIBUTES`) already say where the time went, and the events cost more than the rest of
     * the span's attributes together (docs/observability.md, "Phases on client spans").
     */
    phaseEvents?: boolean;
    /**
     * Where the log-based events go (docs/observability.md, "Events as logs"): a failed hop's
     * `http.client.request.exception`, and with `phaseEvents` its moments. Default: the global
     * LoggerProvider of the Logs API (`@opentelemetry/api` 1.10 and later, else the optional
     * `@opentelemetry/api-logs`) when one is installed; none otherwise.
     */
    loggerProvider?: EventLoggerProvider;
    /**
     * Also put the events on the spans, as before log-based events: the `exception` of a failed hop
     * and, with `phaseEvents`, its moments. For backends that read events from spans only. Default false.
     */
    spanEvents?: boolean;
}

/** `instrumentClient()`'s config, plus OpenTelemetry's `enabled` (default true: enabled as it is made). */
export interface TracewireInstrumentationConfig extends ClientInstrumentationConfig {
    enabled?: boolean;
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
