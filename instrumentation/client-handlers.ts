import type { ClientRequest, IncomingMessage } from 'node:http';
import { context, type Link, type Span, type Tracer } from '@opentelemetry/api';
import { afterErrorRead, openHttp2Sessions, type ResponseDetails, timingsToMonotonic } from '../src/client/index.js';
import { ATTR_PROBLEM_TYPE, receivedProblemType } from '../src/errors/span-attributes.js';
import { type CapturedHeaders, capturedHeaders } from './attributes.js';
import { requestBodyOf, responseBodyOf } from './body-size.js';
import { addCacheStored } from './cache-outcome.js';
import {
    type HopEnd,
    type HopRecord,
    openHopSpan,
    recordOutcome,
    recordRequestHeaders,
    recordResponse,
    responseEnd
} from './client-span.js';
import type { ClientInstrumentationConfig, HopOptions, HopUri, InstrumentableClient } from './config.js';
import { ConnectionMetrics } from './connection-metrics.js';
import { OpenConnections } from './connection-pool.js';
import { injectHopContext } from './injection.js';
import { HopEvents } from './log-events.js';
import { endMeasured } from './measured.js';
import { createHttpMetrics, type HttpMetrics } from './metrics.js';
import { guarded, INSTRUMENTATION_VERSION, reportError, resolveProviders } from './providers.js';
import { callerContext, createRequestUntraced, isTracingSuppressed } from './request-scope.js';
import { SeenAgents } from './seen-agents.js';
import { recordPhases } from './span-phases.js';
import { StoreErrorCounter } from './store-errors.js';

type TracedHop = HopRecord<ClientHandlers>;

// The hop a response belongs to, found by the shared `end`/`close` listeners below. A symbol-keyed
// slot on the response rather than a WeakMap: WeakMap.set per hop was among the costliest lines of
// the instrumentation's per-hop work in the profile of an instrumented client.
const responseHopKey = Symbol('tracewire.responseHop');
type TracedResponse = IncomingMessage & { [responseHopKey]?: TracedHop | undefined };
// The same for the hop a uri belongs to, from `preRequest` to `response`; null for a hop claimed
// but not recorded (ignored, or tracing suppressed). The record names its owner.
const uriHopKey = Symbol('tracewire.uriHop');
// The span of a recorded hop, kept after its end: the calls that waited for its fetch (request
// coalescing, `uri.collapsedInto`) link their spans to it.
const uriSpanKey = Symbol('tracewire.uriSpan');
type TracedUri = HopUri & { [uriHopKey]?: TracedHop | null | undefined; [uriSpanKey]?: Span };

/**
 * One handler per pipeline event (README "The event pipeline"); the state of a hop rides on its
 * uri, then on its response. Every handler catches what it throws, and every user hook is guarded:
 * an exception thrown into the client's emit() would break the request.
 */
export class ClientHandlers {
    private readonly tracer: Tracer;
    private readonly metrics: HttpMetrics;
    private readonly requestHeaders: CapturedHeaders;
    private readonly responseHeaders: CapturedHeaders;
    // Where a hop's exception and phase events go (log records, and span events with `spanEvents`).
    private readonly events: HopEvents;
    // With `optionalMetrics` only: without it, no connection or pool is looked at.
    private readonly connections: OpenConnections | undefined;
    private readonly connectionMetrics: ConnectionMetrics | undefined;
    private readonly agents: SeenAgents | undefined;
    private readonly storeErrors: StoreErrorCounter;
    // `preRequest` and `request` of a hop are emitted in the same tick, around `http.request()`:
    // this links the ClientRequest to the hop that was just started.
    private pending: TracedHop | undefined;

    constructor(
        private readonly config: ClientInstrumentationConfig,
        client: InstrumentableClient
    ) {
        const { tracer, meter } = resolveProviders(config);
        this.tracer = tracer;
        this.requestHeaders = capturedHeaders(config.headersToSpanAttributes?.request, 'request');
        this.responseHeaders = capturedHeaders(config.headersToSpanAttributes?.response, 'response');
        this.metrics = createHttpMetrics(meter, 'client', config.optionalMetrics === true);
        this.events = new HopEvents(config, INSTRUMENTATION_VERSION);
        this.storeErrors = new StoreErrorCounter(meter);
        if (config.optionalMetrics === true) {
            const agents = new SeenAgents(() => client.agents);
            this.agents = agents;
            this.connections = new OpenConnections(
                meter,
                () => agents.agents(),
                () => openHttp2Sessions(client.agents ?? undefined)
            );
            this.connectionMetrics = new ConnectionMetrics(meter);
        }
    }

    stop(): void {
        this.storeErrors.stop();
        this.connections?.stop();
    }

    readonly onPreRequest = (uri: HopUri, options: HopOptions): void => {
        this.pending = undefined;
        try {
            // One instrumentation per hop: the client's own (it hears the hop first), else the
            // process-wide one (tracewire-instrumentation.ts). The claim holds even for a hop it ignores.
            if ((uri as TracedUri)[uriHopKey] !== undefined) {
                return;
            }

            (uri as TracedUri)[uriHopKey] = null;
            // Claimed, traced or not: no other instrumentation traces its request (request-scope.ts).
            createRequestUntraced(uri);
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
            if (hop.recording && this.requestHeaders.names.length > 0) {
                recordRequestHeaders(hop.span, this.requestHeaders, req);
            }

            if (hop.countsBodies) {
                const payload = hop.options.payload;
                hop.requestBody = requestBodyOf(req, payload !== undefined && payload !== null);
            }

            this.agents?.note((req as { agent?: unknown }).agent);
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
            if (err !== undefined && uri!.resendReason === undefined) {
                // The client decides right after this event whether it sends the hop again at once
                // (`uri.resent`, a re-send is never re-sent): the span's status waits for that word.
                const endTime = performance.now();
                queueMicrotask(() => this.endFailedHop(hop, err, endTime));
            } else if (err !== undefined || res === undefined) {
                this.endHop(hop, { err, res: undefined, interrupted: false });
            } else {
                this.followResponse(hop, res);
            }
        } catch (listenerError) {
            reportError('response listener', listenerError);
        }

        // The lookup and the connection are over (or failed) once the headers arrive or the hop fails.
        // After the span's fate is settled: a failure here must not leave the hop unended.
        if (this.connectionMetrics !== undefined && details.timings !== undefined) {
            try {
                this.connectionMetrics.recordHop({
                    uri: details.uri,
                    req: details.req,
                    res: details.res,
                    timings: details.timings,
                    err
                });
            } catch (metricsError) {
                reportError('connection metrics', metricsError);
            }
        }
    };

    /**
     * The `end` or `close` of a followed response (whichever comes first). The span of a 4xx/5xx that a
     * helper reads waits for the helper's error, which alone knows the problem type of the body
     * (pipeline/error-read.ts); it ends at the time the body did.
     */
    onResponseDone(hop: TracedHop, res: IncomingMessage): void {
        const end = responseEnd(hop, res);
        if (!hop.recording || (res.statusCode as number) < 400) {
            this.endHop(hop, end);
            return;
        }

        const endTime = performance.now();
        const waits = afterErrorRead(res, (err) => {
            try {
                const problemType = receivedProblemType(err);
                if (problemType !== undefined) {
                    hop.span.setAttribute(ATTR_PROBLEM_TYPE, problemType);
                }

                this.endHop(hop, end, endTime);
            } catch (listenerError) {
                reportError('response listener', listenerError);
            }
        });
        if (!waits) {
            this.endHop(hop, end);
        }
    }

    /** Ends a hop that failed before its response, once the client has said whether it re-sends it. */
    private endFailedHop(hop: TracedHop, err: Error, endTime: number): void {
        try {
            const resent = (hop.details!.uri as HopUri).resent;
            this.endHop(hop, { err, res: undefined, interrupted: false, resent }, endTime);
        } catch (listenerError) {
            reportError('response listener', listenerError);
        }
    }

    private startHop(uri: HopUri, options: HopOptions): void {
        const parent = callerContext(context.active());
        if (isTracingSuppressed(parent)) {
            return;
        }

        const { ignoreRequest, requestHook } = this.config;
        if (ignoreRequest !== undefined && guarded('ignoreRequest', ignoreRequest, uri, options) === true) {
            return;
        }

        const fetcher = uri.collapsedInto?.[uriSpanKey as never] as Span | undefined;
        const links: Link[] | undefined = fetcher === undefined ? undefined : [{ context: fetcher.spanContext() }];
        const { span, metricAttributes } = openHopSpan(this.tracer, uri, options, parent, links);
        const optional = this.metrics.optional;
        // The active-requests counter must go down with the very attributes it went up with.
        const activeAttributes = optional === undefined ? undefined : { ...metricAttributes };
        const signal = options.signal instanceof AbortSignal ? options.signal : undefined;
        // A span the sampler dropped records nothing: no attribute of its is worked out (client-span.ts).
        const recording = span.isRecording();
        // `cache` is on when given and not false (EffectiveOptions holds no null).
        if (recording && options.cache !== undefined && options.cache !== false) {
            // Only a cached call's fetch can have waiters to link to it, and only a recorded span is worth a link.
            (uri as TracedUri)[uriSpanKey] = span;
        }
        const hop: TracedHop = {
            span,
            recording,
            startTime: performance.now(),
            metricAttributes,
            signal,
            activeAttributes,
            countsBodies: optional !== undefined || recording,
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
            injectHopContext(parent, span, uri.headers);
        }
    }

    /**
     * The headers of the hop's response arrived: record them, then follow the body without
     * consuming it. The hop ends when the body has been received (`end`) or when the response
     * closes without it (`close`: destroyed, cut or discarded).
     */
    private followResponse(hop: TracedHop, res: IncomingMessage): void {
        recordResponse(hop, res, this.responseHeaders);
        if (hop.countsBodies) {
            hop.responseBody = responseBodyOf(res);
        }

        (res as TracedResponse)[responseHopKey] = hop;
        res.on('end', onResponseDone);
        res.on('close', onResponseDone);
    }

    /** Ends a hop: its status, sizes and error, the `responseHook`, the span, then the metric points. */
    private endHop(hop: TracedHop, end: HopEnd, endTime?: number): void {
        const { err, res } = end;
        // Read at the end: `end` and `download` are set once the body has been read. Before the
        // outcome, so the span's events run in time order, its `exception` last.
        const timings = hop.details?.timings;
        if (timings !== undefined && hop.recording) {
            recordPhases(hop.span, timings);
            this.events.phasesOf(hop.span, timings, timingsToMonotonic);
        }

        if (res !== undefined) {
            addCacheStored(hop.recording ? hop.span : undefined, hop.metricAttributes, res);
        }

        recordOutcome(hop, end, this.events);
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
                      guarded('responseHook', responseHook, hop.span, {
                          uri: details.uri,
                          req: details.req,
                          res,
                          error: err
                      });
                  },
            endTime
        );
    }
}

/** The `end` and `close` listener of a traced response, shared by all: the first of the two ends the hop. */
function onResponseDone(this: IncomingMessage): void {
    const hop = (this as TracedResponse)[responseHopKey];
    if (hop === undefined) {
        return;
    }

    (this as TracedResponse)[responseHopKey] = undefined;
    try {
        hop.owner.onResponseDone(hop, this);
    } catch (err) {
        reportError('response listener', err);
    }
}
