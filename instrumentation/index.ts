/**
 * `tracewire/instrumentation`: OpenTelemetry spans and metrics built on the client's event pipeline
 * (`instrumentClient` for one client, `TracewireInstrumentation` for every client of the process
 * through the client's diagnostics channels), a hapi plugin for server spans (`tracing`), the helper that keeps
 * `@opentelemetry/instrumentation-http` from tracing tracewire requests a second time, and the
 * names of the attributes tracewire adds to the conventions' (the static plugin's, the problem type,
 * the transport's).
 */

export { ATTR_PROBLEM_TYPE } from '../src/errors/span-attributes.js';
export { ATTR_STATIC_ENCODING, ATTR_STATIC_ETAG, ATTR_STATIC_RANGE } from '../src/static/span-attributes.js';
export { ATTR_TRACEWIRE_CACHE, ATTR_TRACEWIRE_CACHE_STORED } from './cache-outcome.js';
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
export type { EventLogger, EventLoggerProvider, EventRecord } from './log-events.js';
export { INSTRUMENTATION_VERSION } from './providers.js';
export {
    ATTR_DNS_QUESTION_NAME,
    EVENT_HTTP_CLIENT_REQUEST_EXCEPTION,
    EVENT_HTTP_SERVER_REQUEST_EXCEPTION,
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
export {
    ATTR_CACHE_STORE,
    ATTR_CACHE_STORE_FAILURE,
    ATTR_CACHE_STORE_OPERATION,
    METRIC_CACHE_STORE_ERRORS
} from './store-errors.js';
export { TracewireInstrumentation } from './tracewire-instrumentation.js';
export {
    ATTR_HTTP2_GOAWAY_ERROR_CODE,
    ATTR_HTTP2_SESSION_END,
    ATTR_RESEND_REASON,
    ATTR_RESENT
} from './transport-attributes.js';
