import type { Request, ResponseToolkit } from '@hapi/hapi';
import { type EventLogger, emitException, SERVER_REQUEST_EXCEPTION, wantsEvent } from '../common/exception-record.js';
import { TRACING_PLUGIN } from '../common/tracing-plugin.js';
import { isHttpError } from '../errors/http-error.js';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, toSpanAttributes } from '../errors/span-attributes.js';
import { activeContext, activeSpan, type SpanLike } from './open-telemetry.js';

// The spans an HttpError has been recorded on, so the `onPreResponse` hook below and the
// `tracewire/instrumentation` tracing plugin never record the same error twice on one span.
const annotatedSpans = new WeakSet<SpanLike>();

/**
 * Records an HttpError on a span, once per span: the `http.response.status_code` and `error.type`
 * of `toSpanAttributes()` (the same the client span of that request gets). Returns false when `err`
 * is not an HttpError or the span already carries one. The exception of a 5xx is told by whoever
 * owns the span (docs/observability.md, "Events as logs").
 */
export function recordHttpError(span: SpanLike, err: unknown): boolean {
    const attributes = toSpanAttributes(err);
    if (attributes === undefined || annotatedSpans.has(span)) {
        return false;
    }

    annotatedSpans.add(span);
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]);
    span.setAttribute(ATTR_ERROR_TYPE, attributes[ATTR_ERROR_TYPE]);
    return true;
}

/** What the error span tells beyond the attributes: where a 5xx's exception goes. */
export interface ErrorSpanEvents {
    /** The logger of the Logs API's global LoggerProvider, when a Logs API is installed. */
    readonly logger: EventLogger | undefined;
    /** Also the `exception` event on the span (`plugins.static.spanEvents`). */
    readonly onSpans: boolean;
}

/**
 * A hapi `onPreResponse` lifecycle method: when the response is an HttpError, records it on the
 * active span. It serves apps traced by the upstream `@opentelemetry/instrumentation-http` or
 * `-hapi`, whose server span is the active one while hapi runs the request; with the tracewire
 * `tracing` plugin there is no active server span and that plugin records the error itself. A 5xx's
 * exception is an `http.server.request.exception` log record in the span's context, and an `exception`
 * event on the span with `spanEvents`, unless the `tracing` plugin traces the request and tells it.
 */
export function errorSpanAnnotator(events: ErrorSpanEvents) {
    return function annotateErrorSpan(request: Request, h: ResponseToolkit): symbol {
        // Runs for every response of the server: a successful one costs a single property read.
        const response = request.response;
        if (!isHttpError(response)) {
            return h.continue;
        }

        const span = activeSpan();
        if (span === undefined) {
            return h.continue;
        }

        const recording = span.isRecording();
        if (recording) {
            recordHttpError(span, response);
        }

        const statusCode = response.output.statusCode;
        if (statusCode >= 500 && (request.plugins as Record<string, unknown>)[TRACING_PLUGIN] === undefined) {
            tellException(events, span, recording, response, String(statusCode));
        }

        return h.continue;
    };
}

/** A 5xx's exception, told whether the span records or not, as the `tracing` plugin tells it. */
function tellException(events: ErrorSpanEvents, span: SpanLike, recording: boolean, err: Error, errorType: string) {
    if (events.onSpans && recording) {
        span.recordException(err);
    }

    const logger = events.logger;
    const spanContext = activeContext();
    if (
        logger === undefined ||
        spanContext === undefined ||
        !wantsEvent(logger, spanContext, SERVER_REQUEST_EXCEPTION)
    ) {
        return;
    }

    emitException(logger, SERVER_REQUEST_EXCEPTION, spanContext, err, { [ATTR_ERROR_TYPE]: errorType });
}
