import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import {
    type Attributes,
    type Context,
    context,
    propagation,
    type Span,
    SpanKind,
    SpanStatusCode,
    type Tracer,
    trace
} from '@opentelemetry/api';
import type { HapiPlugin, HapiRequest } from '../src/common/hapi-plugin.js';
import { TRACING_PLUGIN } from '../src/common/tracing-plugin.js';
import { isHttpError } from '../src/errors/http-error.js';
import { ATTR_PROBLEM_TYPE, sentProblemType } from '../src/errors/span-attributes.js';
import { recordHttpError } from '../src/static/error-span.js';
import { type NormalizedMethod, normalizeMethod } from './attributes.js';
import { type BodyCount, countOutgoingBody, receivedRequestBodyOf } from './body-size.js';
import type { EventLoggerProvider } from './log-events.js';
import { endMeasured, type Measured } from './measured.js';
import { createHttpMetrics, type HttpMetrics } from './metrics.js';
import { guarded, INSTRUMENTATION_VERSION, type ProviderConfig, resolveProviders } from './providers.js';
import { isTracingSuppressed } from './request-scope.js';
import {
    ATTR_CLIENT_ADDRESS,
    ATTR_ERROR_TYPE,
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_HTTP_ROUTE,
    ATTR_NETWORK_PEER_ADDRESS,
    ATTR_NETWORK_PEER_PORT,
    ATTR_NETWORK_PROTOCOL_VERSION,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    ATTR_URL_PATH,
    ATTR_URL_QUERY,
    ATTR_URL_SCHEME,
    ATTR_USER_AGENT_ORIGINAL
} from './semconv.js';
import { ServerEvents } from './server-events.js';

/** The name the tracing plugin registers under, and its key in `request.plugins`. */
export { TRACING_PLUGIN };

/** What the tracing plugin keeps in `request.plugins['tracewire-tracing']`. */
export interface RequestTracing {
    /** The SERVER span of the request. */
    readonly span: Span;
    /** The extracted context with the server span set: the parent for work done for the request. */
    readonly context: Context;
    readonly method: NormalizedMethod;
    readonly startTime: number;
    readonly metricAttributes: Attributes;
}

export interface TracingOptions extends ProviderConfig {
    /**
     * Also record the conventions' `http.server.request.body.size`, `http.server.response.body.size`
     * and `http.server.active_requests`. Default false: only `http.server.request.duration`.
     */
    optionalMetrics?: boolean;
    /**
     * Where a failed request's `http.server.request.exception` log record goes (docs/observability.md,
     * "Events as logs"). Default: the global LoggerProvider of the Logs API (`@opentelemetry/api` 1.10 and
     * later, else the optional `@opentelemetry/api-logs`) when one is installed; none otherwise.
     */
    loggerProvider?: EventLoggerProvider;
    /** Also put a failed request's exception on its span as an `exception` event, for backends that read events from spans only. Default false. */
    spanEvents?: boolean;
}

/** What the plugin keeps of a request beyond `RequestTracing`. */
interface TracedRequest extends RequestTracing, Measured {
    readonly requestBody: BodyCount | undefined;
    readonly responseBody: BodyCount | undefined;
}

/**
 * A hapi plugin that makes a SERVER span per request, following the stable HTTP semantic
 * conventions: the context extracted from the incoming headers, the name `METHOD route`, status
 * ERROR only for 5xx, the HttpError of an error response recorded with the same attributes the
 * client side uses, and the `http.server.request.duration` histogram. It uses hapi's `onRequest`
 * extension and `response` event only.
 */
export const tracing: HapiPlugin<TracingOptions> = {
    name: TRACING_PLUGIN,
    once: true,
    register(server: Server, options: TracingOptions) {
        const { tracer, meter } = resolveProviders(options ?? {});
        const metrics = createHttpMetrics(meter, 'server', options?.optionalMetrics === true);
        const events = new ServerEvents(options ?? {}, INSTRUMENTATION_VERSION);

        server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
            guarded('tracing onRequest', startRequest, tracer, metrics, request);
            return h.continue;
        });

        // Emitted once the response has been sent, or the request abandoned.
        server.events.on('response', (request: Request) => {
            guarded('tracing response listener', endRequest, metrics, events, request);
        });
    }
};

/**
 * The context of the request's server span: pass it to `context.with()` so outgoing calls made
 * for the request (by an instrumented client) become its children. The active context when the
 * request is not traced.
 */
export function requestContext(request: HapiRequest): Context {
    return tracingOf(request)?.context ?? context.active();
}

/** Runs `fn` with the request's server span as the active span (see `requestContext`). */
export function withRequestContext<T>(request: HapiRequest, fn: () => T): T {
    return context.with(requestContext(request), fn);
}

/** What the plugin keeps in `request.plugins` for a traced request. */
function tracingOf(request: HapiRequest): TracedRequest | undefined {
    return (request.plugins as { [TRACING_PLUGIN]?: TracedRequest })[TRACING_PLUGIN];
}

function startRequest(tracer: Tracer, metrics: HttpMetrics, request: Request): void {
    const raw = request.raw.req;
    const parent = propagation.extract(context.active(), raw.headers);
    if (isTracingSuppressed(parent)) {
        return;
    }

    const method = normalizeMethod(raw.method ?? request.method);
    const scheme = request.server.info.protocol;
    const target = raw.url ?? '/';
    const queryStart = target.indexOf('?');
    // Built by assignment rather than as literals with computed keys, which V8 keeps in a slower shape.
    const metricAttributes: Attributes = {};
    metricAttributes[ATTR_HTTP_REQUEST_METHOD] = method.value;
    metricAttributes[ATTR_URL_SCHEME] = scheme;
    const attributes: Attributes = {};
    attributes[ATTR_HTTP_REQUEST_METHOD] = method.value;
    attributes[ATTR_URL_SCHEME] = scheme;
    attributes[ATTR_URL_PATH] = queryStart === -1 ? target : target.slice(0, queryStart);
    attributes[ATTR_SERVER_PORT] = request.server.info.port;
    attributes[ATTR_NETWORK_PROTOCOL_VERSION] = raw.httpVersion;
    // Absent without a Host header, or once the client has gone.
    if (request.info.hostname) {
        attributes[ATTR_SERVER_ADDRESS] = request.info.hostname;
    }

    if (request.info.remoteAddress) {
        attributes[ATTR_CLIENT_ADDRESS] = request.info.remoteAddress;
    }

    if (queryStart !== -1) {
        attributes[ATTR_URL_QUERY] = target.slice(queryStart + 1);
    }

    if (method.original !== undefined) {
        attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = method.original;
    }

    const socket = raw.socket;
    if (socket?.remoteAddress !== undefined) {
        attributes[ATTR_NETWORK_PEER_ADDRESS] = socket.remoteAddress;
        attributes[ATTR_NETWORK_PEER_PORT] = socket.remotePort;
    }

    const userAgent = raw.headers['user-agent'];
    if (userAgent !== undefined) {
        attributes[ATTR_USER_AGENT_ORIGINAL] = userAgent;
    }

    const span = tracer.startSpan(method.spanName, { kind: SpanKind.SERVER, attributes }, parent);
    const optional = metrics.optional;
    // Bodies are counted only when something will read the count.
    const countsBodies = optional !== undefined || span.isRecording();
    // The active-requests counter must go down with the very attributes it went up with.
    const activeAttributes = optional === undefined ? undefined : { ...metricAttributes };
    const traced: TracedRequest = {
        span,
        context: trace.setSpan(parent, span),
        method,
        startTime: performance.now(),
        metricAttributes,
        requestBody: countsBodies ? receivedRequestBodyOf(raw) : undefined,
        responseBody: countsBodies ? countOutgoingBody(request.raw.res) : undefined,
        activeAttributes
    };
    (request.plugins as { [TRACING_PLUGIN]?: TracedRequest })[TRACING_PLUGIN] = traced;
    if (activeAttributes !== undefined) {
        optional!.activeRequests.add(1, activeAttributes);
    }
}

interface HapiResponseLike {
    statusCode?: number;
    _error?: unknown;
}

function endRequest(metrics: HttpMetrics, events: ServerEvents, request: Request): void {
    const tracing = tracingOf(request);
    if (tracing === undefined) {
        return;
    }

    const { span, method, metricAttributes } = tracing;
    const response = request.response as unknown;
    // After transmission hapi keeps the error of an error response on `_error`; an abandoned
    // request can still hold the error itself.
    const error = isHttpError(response) ? response : (response as HapiResponseLike | null)?._error;
    const statusCode = isHttpError(error)
        ? error.output.statusCode
        : ((response as HapiResponseLike | null)?.statusCode ?? request.raw.res.statusCode);

    // hapi answers unmatched paths with a special catch-all route, which is not a route of the app.
    const route = (request.route?.method as string | undefined) === '_special' ? undefined : request.route?.path;
    if (route !== undefined) {
        span.updateName(`${method.spanName} ${route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, route);
        metricAttributes[ATTR_HTTP_ROUTE] = route;
    }

    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
    metricAttributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = statusCode;
    metricAttributes[ATTR_NETWORK_PROTOCOL_VERSION] = request.raw.req.httpVersion;
    recordHttpError(span, error);
    if (statusCode >= 400) {
        // The problem type the problemDetails plugin sent, as the client's span records the one it received.
        const problemType = sentProblemType(request);
        if (problemType !== undefined) {
            span.setAttribute(ATTR_PROBLEM_TYPE, problemType);
        }
    }

    if (statusCode >= 500) {
        // Only 5xx is a server error; a 4xx is the client's and leaves the status unset.
        metricAttributes[ATTR_ERROR_TYPE] = String(statusCode);
        span.setAttribute(ATTR_ERROR_TYPE, String(statusCode));
        // A client that went away is no failure of the server's, whatever status hapi reports for it.
        if (!abandonedByClient(request, statusCode)) {
            if (error instanceof Error) {
                span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
                events.exception(span, tracing.context, error, metricAttributes);
            } else {
                span.setStatus({ code: SpanStatusCode.ERROR });
            }
        }
    }

    const requestBody = tracing.requestBody;
    const raw = request.raw.req;
    // A declared length holds only for a body received whole (read to its end, for server.inject).
    const requestBytes =
        requestBody === undefined || (requestBody.declared === true && !raw.complete && !raw.readableEnded)
            ? undefined
            : requestBody.bytes;
    const responseBytes =
        tracing.responseBody === undefined ? undefined : responseBodySize(request, statusCode, tracing.responseBody);
    endMeasured(tracing, metrics, requestBytes, responseBytes);
}

/**
 * Whether the client went away before the response was sent whole: hapi then answers the request with
 * its route's `disconnectStatusCode` (499 unless the app chose another, 5xx included), which the span and
 * the duration point report as they report any status, but a cancellation is not an error.
 */
function abandonedByClient(request: Request, statusCode: number): boolean {
    const disconnectStatusCode = request.route?.settings.response?.disconnectStatusCode ?? 499;
    return statusCode === disconnectStatusCode && !request.raw.res.writableFinished;
}

/** The bytes of the response body sent: none for a HEAD, a 204 or a 304, which Node sends without one. */
function responseBodySize(request: Request, statusCode: number, count: BodyCount): number {
    if (request.method === 'head' || statusCode === 204 || statusCode === 304 || statusCode < 200) {
        return 0;
    }

    return count.bytes;
}
