/**
 * `tracewire/instrumentation`: OpenTelemetry spans and metrics built on the client's event pipeline
 * (`instrumentClient` for one client, `TracewireInstrumentation` for every client of the process
 * through the client's diagnostics channels), a hapi plugin for server spans (`tracing`), the helper that keeps
 * `@opentelemetry/instrumentation-http` from tracing tracewire requests a second time, and the
 * names of the attributes the static plugin puts on server spans.
 */

export { ATTR_STATIC_ENCODING, ATTR_STATIC_ETAG, ATTR_STATIC_RANGE } from '../src/static/span-attributes.js';
export { ATTR_TRACEWIRE_CACHE } from './cache-outcome.js';
export { type ClientInstrumentation, instrumentClient } from './client.js';
export type {
    ClientEventEmitter,
    ClientInstrumentationConfig,
    HopOptions,
    HopOutcome,
    HopUri,
    InstrumentableClient,
    TracewireInstrumentationConfig
} from './config.js';
export { ignoreTracewireRequests, isTracewireRequest, TRACEWIRE_REQUEST } from './http-instrumentation.js';
export {
    ATTR_DNS_QUESTION_NAME,
    METRIC_DNS_LOOKUP_DURATION,
    METRIC_HTTP_CLIENT_CONNECTION_DURATION
} from './semconv.js';
export {
    type RequestTracing,
    requestContext,
    TRACING_PLUGIN,
    type TracingOptions,
    tracing,
    withRequestContext
} from './server.js';
export { ATTR_TIMEOUT_PHASE, PHASE_ATTRIBUTES, PHASE_EVENTS } from './span-phases.js';
export { INSTRUMENTATION_VERSION, TracewireInstrumentation } from './tracewire-instrumentation.js';
