import type { Request, ResponseToolkit } from '@hapi/hapi';
import { isHttpError } from '../errors/http-error.js';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, toSpanAttributes } from '../errors/span-attributes.js';
import { activeSpan, type SpanLike } from './open-telemetry.js';

// The spans an HttpError has been recorded on, so the `onPreResponse` hook below and the
// `tracewire/instrumentation` tracing plugin never record the same error twice on one span.
const annotatedSpans = new WeakSet<SpanLike>();

/**
 * Records an HttpError on a span, once per span: the `http.response.status_code` and `error.type`
 * of `toSpanAttributes()` (the same the client span of that request gets), plus, for a 5xx, an
 * exception event carrying the real message that the response payload hides. Returns false when
 * `err` is not an HttpError or the span already carries one.
 */
export function recordHttpError(span: SpanLike, err: unknown): boolean {
    const attributes = toSpanAttributes(err);
    if (attributes === undefined || annotatedSpans.has(span)) {
        return false;
    }

    annotatedSpans.add(span);
    const statusCode = attributes[ATTR_HTTP_RESPONSE_STATUS_CODE];
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
    span.setAttribute(ATTR_ERROR_TYPE, attributes[ATTR_ERROR_TYPE]);
    if (statusCode >= 500 && isHttpError(err)) {
        span.recordException(err);
    }

    return true;
}

/**
 * A hapi `onPreResponse` lifecycle method: when the response is an HttpError, records it on the
 * active span. It serves apps traced by the upstream `@opentelemetry/instrumentation-http` or
 * `-hapi`, whose server span is the active one while hapi runs the request; with the tracewire
 * `tracing` plugin there is no active server span and that plugin records the error itself.
 */
export function annotateErrorSpan(request: Request, h: ResponseToolkit): symbol {
    // Runs for every response of the server: a successful one costs a single property read.
    if (!isHttpError(request.response)) {
        return h.continue;
    }

    const span = activeSpan();
    if (span?.isRecording()) {
        recordHttpError(span, request.response);
    }

    return h.continue;
}
