import { Agent, type ClientRequest, type IncomingMessage } from 'node:http';
import {
    type Attributes,
    context,
    propagation,
    type Span,
    SpanKind,
    SpanStatusCode,
    type Tracer,
    trace
} from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
    ATTR_HTTP_REQUEST_RESEND_COUNT,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_NETWORK_PROTOCOL_VERSION,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    ATTR_URL_FULL,
    ERROR_TYPE_VALUE_OTHER
} from '@opentelemetry/semantic-conventions';
import type { EffectiveOptions, RequestUri, ResponseDetails } from '../src/client/types.js';
import {
    ATTR_URL_TEMPLATE,
    addHeaderAttributes,
    type CapturedHeaders,
    capturedHeaders,
    normalizeMethod,
    redactedUrl,
    serverAddress,
    serverPort
} from './attributes.js';
import { type BodyCount, requestBodyOf, responseBodyOf } from './body-size.js';
import { addCacheOutcome } from './cache-outcome.js';
import { OpenConnections } from './connection-pool.js';
import { causeOf, failureErrorType, statusErrorType } from './error-type.js';
import { endMeasured, type Measured } from './measured.js';
import { createHttpMetrics, type HttpMetrics } from './metrics.js';
import { guarded, type ProviderConfig, reportError, resolveProviders } from './providers.js';

/**
 * The URL the client hands to `preRequest` and back in `response`, one object per hop: the client's
 * `RequestUri` (src/client/types.ts).
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
     * `http.client.active_requests` and `http.client.open_connections`. Default false: only
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

interface HopRecord extends Measured {
    /** The caller's AbortSignal: a response cut because it fired is not an error. */
    readonly signal: AbortSignal | undefined;
    /** Whether the body sizes are wanted (a recording span or the optional metrics). */
    readonly countsBodies: boolean;
    /** The hop's options, read again once its request exists (a later `preRequest` listener may change them). */
    readonly options: HopOptions;
    requestBody: BodyCount | undefined;
    responseBody: BodyCount | undefined;
    details: ResponseDetails | undefined;
    owner: EventInstrumentation;
}

// One emitter gets one instrumentation: two would make two spans per hop.
const instrumented = new WeakSet<object>();

// The hop a response belongs to, found by the shared `end`/`close` listeners below. A symbol-keyed
// slot on the response rather than a WeakMap: WeakMap.set per hop was among the costliest lines of
// the instrumentation's per-hop work in the profile of an instrumented client.
const responseHopKey = Symbol('tracewire.responseHop');
type TracedResponse = IncomingMessage & { [responseHopKey]?: HopRecord | undefined };
// The same for the hop a uri belongs to, from `preRequest` to `response`; null for a hop claimed
// but not recorded (ignored, or tracing suppressed). The record names its owner.
const uriHopKey = Symbol('tracewire.uriHop');
type TracedUri = HopUri & { [uriHopKey]?: HopRecord | null | undefined };

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

    const instrumentation = new EventInstrumentation(config, client);
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

/** One handler per pipeline event; the state of a hop rides on its uri, then on its response (symbol-keyed slots). */
class EventInstrumentation {
    private readonly tracer: Tracer;
    private readonly metrics: HttpMetrics;
    private readonly config: ClientInstrumentationConfig;
    private readonly requestHeaders: CapturedHeaders;
    private readonly responseHeaders: CapturedHeaders;
    private readonly connections: OpenConnections | undefined;
    // Agents met on requests (a per-request `agent`, a derived client's own pools), observed with
    // the client's own; weakly held, so an agent dropped by the application is not kept alive.
    private readonly agentsSeen = new WeakSet<Agent>();
    private readonly agentRefs = new Set<WeakRef<Agent>>();
    // `preRequest` and `request` of a hop are emitted in the same tick, around `http.request()`:
    // this links the ClientRequest to the hop that was just started.
    private pending: HopRecord | undefined;

    constructor(
        config: ClientInstrumentationConfig,
        private readonly client: InstrumentableClient
    ) {
        const { tracer, meter } = resolveProviders(config);
        this.tracer = tracer;
        this.config = config;
        this.requestHeaders = capturedHeaders(config.headersToSpanAttributes?.request, 'request');
        this.responseHeaders = capturedHeaders(config.headersToSpanAttributes?.response, 'response');
        this.metrics = createHttpMetrics(meter, 'client', config.optionalMetrics === true);
        this.connections =
            config.optionalMetrics === true ? new OpenConnections(meter, () => this.agents()) : undefined;
    }

    stop(): void {
        this.connections?.stop();
    }

    // The listeners catch everything: an exception thrown into the client's emit() would break the request.
    readonly onPreRequest = (uri: HopUri, options: HopOptions): void => {
        this.pending = undefined;
        try {
            // One instrumentation per hop: the client's own (it hears the hop first), else the
            // process-wide one (tracewire-instrumentation.ts). The claim holds even for a hop it ignores.
            if ((uri as TracedUri)[uriHopKey] !== undefined) {
                return;
            }

            (uri as TracedUri)[uriHopKey] = null;
            this.startHop(uri, options ?? {});
        } catch (err) {
            reportError('preRequest listener', err);
        }
    };

    readonly onRequest = (req: ClientRequest): void => {
        const hop = this.pending;
        this.pending = undefined;
        if (hop === undefined) {
            return;
        }

        try {
            if (this.requestHeaders.names.length > 0) {
                this.recordRequestHeaders(hop, req);
            }

            if (hop.countsBodies) {
                const payload = hop.options.payload;
                hop.requestBody = requestBodyOf(req, payload !== undefined && payload !== null);
            }

            if (this.connections !== undefined) {
                this.noteAgent((req as { agent?: unknown }).agent);
            }
        } catch (err) {
            reportError('request listener', err);
        }
    };

    readonly onResponse = (err: Error | undefined, details: ResponseDetails): void => {
        const uri = details?.uri as TracedUri | undefined;
        const hop = uri === undefined ? undefined : uri[uriHopKey];
        // A hop no instrumentation records, or one of another instrumentation: that of the client
        // when this one is process-wide, or one disabled while the hop was in flight.
        if (hop === undefined || hop === null || hop.owner !== this) {
            return;
        }

        uri![uriHopKey] = undefined;
        try {
            hop.details = details;
            const res = details.res;
            if (err !== undefined || res === undefined) {
                this.endHop(hop, err, undefined);
            } else {
                this.followResponse(hop, res);
            }
        } catch (listenerError) {
            reportError('response listener', listenerError);
        }
    };

    private startHop(uri: HopUri, options: HopOptions): void {
        const parent = context.active();
        if (isTracingSuppressed(parent)) {
            return;
        }

        const { ignoreRequest, requestHook } = this.config;
        if (ignoreRequest !== undefined && guarded('ignoreRequest', ignoreRequest, uri, options) === true) {
            return;
        }

        const method = normalizeMethod(uri.method ?? 'GET');
        const address = serverAddress(uri);
        const port = serverPort(uri);
        const route = typeof options.route === 'string' && options.route !== '' ? options.route : undefined;
        // Built by assignment, not as literals with computed keys: V8 then keeps the objects in a
        // fast shape, which the SDK iterates and hashes (for the histogram) markedly faster.
        const metricAttributes: Attributes = {};
        metricAttributes[ATTR_HTTP_REQUEST_METHOD] = method.value;
        metricAttributes[ATTR_SERVER_ADDRESS] = address;
        metricAttributes[ATTR_SERVER_PORT] = port;
        const attributes: Attributes = {};
        attributes[ATTR_HTTP_REQUEST_METHOD] = method.value;
        attributes[ATTR_SERVER_ADDRESS] = address;
        attributes[ATTR_SERVER_PORT] = port;
        attributes[ATTR_URL_FULL] = redactedUrl(uri);
        if (method.original !== undefined) {
            attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = method.original;
        }

        if (route !== undefined) {
            attributes[ATTR_URL_TEMPLATE] = route;
            metricAttributes[ATTR_URL_TEMPLATE] = route;
        }

        // Retries, redirects and stale-connection re-sends are all re-sends, counted together as the semantic conventions define it.
        const resendCount = uri.redirectCount + uri.retryCount + uri.staleResends;
        if (resendCount > 0) {
            attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] = resendCount;
        }

        const name = route === undefined ? method.spanName : `${method.spanName} ${route}`;
        const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
        const optional = this.metrics.optional;
        // The active-requests counter must go down with the very attributes it went up with.
        const activeAttributes = optional === undefined ? undefined : { ...metricAttributes };
        const signal = options.signal instanceof AbortSignal ? options.signal : undefined;
        const hop: HopRecord = {
            span,
            startTime: performance.now(),
            metricAttributes,
            signal,
            activeAttributes,
            countsBodies: optional !== undefined || span.isRecording(),
            options,
            requestBody: undefined,
            responseBody: undefined,
            details: undefined,
            owner: this
        };
        (uri as TracedUri)[uriHopKey] = hop;
        this.pending = hop;
        if (activeAttributes !== undefined) {
            optional!.activeRequests.add(1, activeAttributes);
        }

        if (requestHook !== undefined) {
            guarded('requestHook', requestHook, span, { uri, options });
        }

        // Injected after the hook, so a hook cannot tamper with the context the server receives.
        if (uri.headers !== undefined && uri.headers !== null) {
            propagation.inject(trace.setSpan(parent, span), uri.headers);
        }
    }

    private recordRequestHeaders(hop: HopRecord, req: ClientRequest): void {
        // The ClientRequest holds the headers actually sent, including those the client computed.
        const attributes: Attributes = {};
        addHeaderAttributes(attributes, this.requestHeaders, (name) => req.getHeader(name));
        hop.span.setAttributes(attributes);
    }

    /**
     * The headers of the hop's response arrived: record them, then follow the body without
     * consuming it. The hop ends when the body has been received (`end`) or when the response
     * closes without it (`close`: destroyed, cut or discarded).
     */
    private followResponse(hop: HopRecord, res: IncomingMessage): void {
        const { span, metricAttributes } = hop;
        const statusCode = res.statusCode as number;
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
        span.setAttribute(ATTR_NETWORK_PROTOCOL_VERSION, res.httpVersion);
        metricAttributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = statusCode;
        metricAttributes[ATTR_NETWORK_PROTOCOL_VERSION] = res.httpVersion;
        addCacheOutcome(span, metricAttributes, res);
        // No network.peer.*: reading a socket's peer is a system call per connection, too dear here.
        if (this.responseHeaders.names.length > 0) {
            const headers: Attributes = {};
            addHeaderAttributes(headers, this.responseHeaders, (name) => res.headers[name]);
            span.setAttributes(headers);
        }

        if (hop.countsBodies) {
            hop.responseBody = responseBodyOf(res, hop.details?.req?.method);
        }

        (res as TracedResponse)[responseHopKey] = hop;
        res.on('end', onResponseDone);
        res.on('close', onResponseDone);
    }

    /**
     * The response ended (`complete`) or closed: a body cut short is an error unless nothing was lost
     * or the caller asked for it.
     */
    responseDone(hop: HopRecord, res: IncomingMessage): void {
        const errored = res.errored;
        if (errored !== null && errored !== undefined) {
            this.endHop(hop, errored, res);
        } else if (hop.signal?.aborted === true || res.complete || isRedirect(res.statusCode)) {
            // A cancellation the caller asked for, a body received whole but left unread, or a 3xx
            // the client discards to follow the redirect: nothing failed.
            this.endHop(hop, undefined, res);
        } else {
            this.endHop(hop, undefined, res, true);
        }
    }

    /**
     * Ends a hop: its status, sizes and error, the span, then the metric points. `interrupted`
     * marks a response that closed before its body was received, without an error to say why.
     */
    endHop(hop: HopRecord, err: Error | undefined, res: IncomingMessage | undefined, interrupted = false): void {
        const { span, metricAttributes } = hop;
        const statusCode = res?.statusCode;
        const errorType = interrupted
            ? ERROR_TYPE_VALUE_OTHER
            : err === undefined
              ? statusErrorType(statusCode)
              : failureErrorType(err, statusCode);
        if (errorType !== undefined) {
            span.setAttribute(ATTR_ERROR_TYPE, errorType);
            metricAttributes[ATTR_ERROR_TYPE] = errorType;
            if (err !== undefined) {
                span.recordException(causeOf(err) ?? err);
                span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
            } else if (interrupted) {
                span.setStatus({
                    code: SpanStatusCode.ERROR,
                    message: 'The response closed before its body was received'
                });
            } else {
                span.setStatus({ code: SpanStatusCode.ERROR });
            }
        }

        // Sizes only for a hop that got a response: before one, nothing says what reached the server.
        const requestBody = res === undefined ? undefined : hop.requestBody;
        // A declared length holds only for a body received whole: a body cut short has no size.
        const responseBody =
            res === undefined || (hop.responseBody?.declared === true && !res.complete) ? undefined : hop.responseBody;
        const { responseHook } = this.config;
        endMeasured(
            hop,
            this.metrics,
            requestBody?.bytes,
            responseBody?.bytes,
            responseHook === undefined
                ? undefined
                : () => {
                      const details = hop.details!;
                      guarded('responseHook', responseHook, span, {
                          uri: details.uri,
                          req: details.req,
                          res,
                          error: err
                      });
                  }
        );
    }

    private noteAgent(agent: unknown): void {
        if (agent instanceof Agent && !this.agentsSeen.has(agent)) {
            this.agentsSeen.add(agent);
            this.agentRefs.add(new WeakRef(agent));
        }
    }

    /** The agents whose pools `http.client.open_connections` reports: the client's, then those met on requests. */
    private *agents(): Generator<Agent> {
        const pools = this.client.agents as Record<string, unknown> | undefined;
        if (pools !== undefined && pools !== null) {
            for (const key of ['http', 'https', 'httpsAllowUnauthorized']) {
                const agent = pools[key];
                if (agent instanceof Agent) {
                    yield agent;
                }
            }
        }

        for (const ref of this.agentRefs) {
            const agent = ref.deref();
            if (agent === undefined) {
                this.agentRefs.delete(ref);
            } else {
                yield agent;
            }
        }
    }
}

/** The `end` and `close` listener of a traced response: the first of the two ends the hop. */
function onResponseDone(this: IncomingMessage): void {
    const hop = (this as TracedResponse)[responseHopKey];
    if (hop === undefined) {
        return;
    }

    (this as TracedResponse)[responseHopKey] = undefined;
    try {
        hop.owner.responseDone(hop, this);
    } catch (err) {
        reportError('response listener', err);
    }
}

function isRedirect(statusCode: number | undefined): boolean {
    return statusCode !== undefined && statusCode >= 300 && statusCode < 400;
}
