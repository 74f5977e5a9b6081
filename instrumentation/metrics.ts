import { type Histogram, type Meter, type UpDownCounter, ValueType } from '@opentelemetry/api';
import { DURATION_BUCKETS } from './providers.js';
import {
    METRIC_HTTP_CLIENT_ACTIVE_REQUESTS,
    METRIC_HTTP_CLIENT_REQUEST_BODY_SIZE,
    METRIC_HTTP_CLIENT_REQUEST_DURATION,
    METRIC_HTTP_CLIENT_RESPONSE_BODY_SIZE,
    METRIC_HTTP_SERVER_ACTIVE_REQUESTS,
    METRIC_HTTP_SERVER_REQUEST_BODY_SIZE,
    METRIC_HTTP_SERVER_REQUEST_DURATION,
    METRIC_HTTP_SERVER_RESPONSE_BODY_SIZE
} from './semconv.js';

/** The instruments of one side (client or server): the duration always, the rest with `optionalMetrics`. */
export interface HttpMetrics {
    readonly duration: Histogram;
    /** Present with `optionalMetrics: true` only, as are the two below. */
    readonly optional: OptionalHttpMetrics | undefined;
}

export interface OptionalHttpMetrics {
    readonly requestBodySize: Histogram;
    readonly responseBodySize: Histogram;
    readonly activeRequests: UpDownCounter;
}

/** The instruments of the HTTP semantic conventions for `side`, named, typed and described as they define them. */
export function createHttpMetrics(meter: Meter, side: 'client' | 'server', optionalMetrics: boolean): HttpMetrics {
    const client = side === 'client';
    const duration = meter.createHistogram(
        client ? METRIC_HTTP_CLIENT_REQUEST_DURATION : METRIC_HTTP_SERVER_REQUEST_DURATION,
        {
            description: client ? 'Duration of HTTP client requests.' : 'Duration of HTTP server requests.',
            unit: 's',
            valueType: ValueType.DOUBLE,
            advice: { explicitBucketBoundaries: DURATION_BUCKETS }
        }
    );
    if (!optionalMetrics) {
        return { duration, optional: undefined };
    }

    return {
        duration,
        optional: {
            requestBodySize: meter.createHistogram(
                client ? METRIC_HTTP_CLIENT_REQUEST_BODY_SIZE : METRIC_HTTP_SERVER_REQUEST_BODY_SIZE,
                {
                    description: `Size of HTTP ${side} request bodies.`,
                    unit: 'By',
                    valueType: ValueType.INT
                }
            ),
            responseBodySize: meter.createHistogram(
                client ? METRIC_HTTP_CLIENT_RESPONSE_BODY_SIZE : METRIC_HTTP_SERVER_RESPONSE_BODY_SIZE,
                {
                    description: `Size of HTTP ${side} response bodies.`,
                    unit: 'By',
                    valueType: ValueType.INT
                }
            ),
            activeRequests: meter.createUpDownCounter(
                client ? METRIC_HTTP_CLIENT_ACTIVE_REQUESTS : METRIC_HTTP_SERVER_ACTIVE_REQUESTS,
                {
                    description: client ? 'Number of active HTTP requests.' : 'Number of active HTTP server requests.',
                    unit: '{request}',
                    valueType: ValueType.INT
                }
            )
        }
    };
}
