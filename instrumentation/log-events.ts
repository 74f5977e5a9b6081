import { type Attributes, type Context, context, type Span, trace } from '@opentelemetry/api';
import type { Timings } from '../src/client/index.js';
import {
    CLIENT_REQUEST_EXCEPTION,
    type EventLogger,
    type EventLoggerProvider,
    emitException,
    globalLoggerProvider,
    wantsEvent
} from '../src/common/exception-record.js';
import { INSTRUMENTATION_SCOPE } from './providers.js';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from './semconv.js';
import { PHASE_EVENTS } from './span-phases.js';

export type { EventLogger, EventLoggerProvider, EventRecord } from '../src/common/exception-record.js';
export { globalLoggerProvider };

/*
 * A hop's events (docs/observability.md "Events as logs"): its exception as the conventions'
 * `http.client.request.exception` log event, and with `phaseEvents` each moment of its timings as a
 * `tracewire.*` one, through the OpenTelemetry Logs API, correlated to the hop's span; on the span
 * itself only with `spanEvents`, for backends that read events from spans. The Logs API (in
 * `@opentelemetry/api` 1.10 and later, `@opentelemetry/api-logs` before) is looked up when an
 * instrumentation is made without a `loggerProvider`, for the global one; with neither installed there
 * are no log events.
 */

// The Logs API's SeverityNumber of the phase records (the enum lives in the optional package).
const SEVERITY_DEBUG = 5;

/** Where a hop's events go, as the config says. */
export interface HopEventsConfig {
    loggerProvider?: EventLoggerProvider | undefined;
    phaseEvents?: boolean | undefined;
    spanEvents?: boolean | undefined;
}

const phaseMoments = Object.entries(PHASE_EVENTS) as [keyof typeof PHASE_EVENTS, string][];

/** The events of the hops of one instrumentation. */
export class HopEvents {
    /** Events on the spans too (`spanEvents`). */
    readonly onSpans: boolean;
    private readonly logger: EventLogger | undefined;
    private readonly phases: boolean;

    constructor(config: HopEventsConfig, version: string) {
        this.onSpans = config.spanEvents === true;
        this.phases = config.phaseEvents === true;
        this.logger = (config.loggerProvider ?? globalLoggerProvider())?.getLogger(INSTRUMENTATION_SCOPE, version);
    }

    /**
     * The exception a hop failed with (the caller saw it): an `http.client.request.exception` log record,
     * WARN as the conventions ask, in the span's context; an `exception` event on a recording span with
     * `spanEvents`. The record carries the request's method, address and port, from `measured` (the
     * duration point's attributes).
     */
    exception(span: Span, recording: boolean, err: Error, errorType: string, measured: Attributes): void {
        if (this.onSpans && recording) {
            span.recordException(err);
        }

        const logger = this.logger;
        if (logger === undefined) {
            return;
        }

        const spanContext = trace.setSpan(context.active(), span);
        if (!wantsEvent(logger, spanContext, CLIENT_REQUEST_EXCEPTION)) {
            return;
        }

        const attributes: Attributes = {};
        attributes[ATTR_HTTP_REQUEST_METHOD] = measured[ATTR_HTTP_REQUEST_METHOD];
        attributes[ATTR_SERVER_ADDRESS] = measured[ATTR_SERVER_ADDRESS];
        attributes[ATTR_SERVER_PORT] = measured[ATTR_SERVER_PORT];
        attributes[ATTR_ERROR_TYPE] = errorType;
        emitException(logger, CLIENT_REQUEST_EXCEPTION, spanContext, err, attributes);
    }

    /**
     * With `phaseEvents`, each moment of a recording span's hop: a `tracewire.*` log record at that
     * moment (DEBUG), and with `spanEvents` an event on the span, placed by `monotonic`.
     */
    phasesOf(span: Span, timings: Timings, monotonic: (at: number) => number): void {
        if (!this.phases) {
            return;
        }

        if (this.onSpans) {
            for (const [moment, name] of phaseMoments) {
                const at = timings[moment];
                if (at !== undefined) {
                    span.addEvent(name, monotonic(at));
                }
            }
        }

        const logger = this.logger;
        if (logger === undefined) {
            return;
        }

        const spanContext = trace.setSpan(context.active(), span);
        for (const [moment, name] of phaseMoments) {
            const at = timings[moment];
            if (at !== undefined && wantsPhase(logger, spanContext, name)) {
                logger.emit({
                    eventName: name,
                    severityNumber: SEVERITY_DEBUG,
                    severityText: 'DEBUG',
                    timestamp: at,
                    context: spanContext
                });
            }
        }
    }
}

/** Whether the logger keeps a phase record: asked before one is built (without a provider, the answer is no). */
function wantsPhase(logger: EventLogger, spanContext: Context, eventName: string): boolean {
    return (
        logger.enabled === undefined ||
        logger.enabled({ context: spanContext, severityNumber: SEVERITY_DEBUG, eventName })
    );
}
