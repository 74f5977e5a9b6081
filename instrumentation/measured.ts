import type { Attributes, Span } from '@opentelemetry/api';
import type { HttpMetrics } from './metrics.js';
import { ATTR_HTTP_REQUEST_BODY_SIZE, ATTR_HTTP_RESPONSE_BODY_SIZE } from './semconv.js';

/** What a client hop (client.ts) and a server request (server.ts) keep from their start to their end. */
export interface Measured {
    readonly span: Span;
    /** `performance.now()` at the start. */
    readonly startTime: number;
    readonly metricAttributes: Attributes;
    /** The attributes `http.*.active_requests` went up with, with `optionalMetrics` only: it goes down with the same. */
    readonly activeAttributes: Attributes | undefined;
}

/**
 * The end of a measured exchange, the same on both sides: the body sizes known on the span,
 * `beforeEnd` (the client's `responseHook`), the span's end, then the metric points.
 */
export function endMeasured(
    measured: Measured,
    metrics: HttpMetrics,
    requestBytes: number | undefined,
    responseBytes: number | undefined,
    beforeEnd?: () => void,
    /** `performance.now()` at the end, when it came before this call; now by default. */
    endTime?: number
): void {
    const span = measured.span;
    if (requestBytes !== undefined) {
        span.setAttribute(ATTR_HTTP_REQUEST_BODY_SIZE, requestBytes);
    }

    if (responseBytes !== undefined) {
        span.setAttribute(ATTR_HTTP_RESPONSE_BODY_SIZE, responseBytes);
    }

    beforeEnd?.();
    span.end(endTime);
    const metricAttributes = measured.metricAttributes;
    metrics.duration.record(((endTime ?? performance.now()) - measured.startTime) / 1000, metricAttributes);
    const optional = metrics.optional;
    if (optional !== undefined) {
        if (requestBytes !== undefined) {
            optional.requestBodySize.record(requestBytes, metricAttributes);
        }

        if (responseBytes !== undefined) {
            optional.responseBodySize.record(responseBytes, metricAttributes);
        }

        optional.activeRequests.add(-1, measured.activeAttributes);
    }
}
