import type { Attributes, Context, Span } from '@opentelemetry/api';
import {
    type EventLogger,
    type EventLoggerProvider,
    emitException,
    globalLoggerProvider,
    SERVER_REQUEST_EXCEPTION,
    wantsEvent
} from '../src/common/exception-record.js';
import { INSTRUMENTATION_SCOPE } from './providers.js';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_ROUTE } from './semconv.js';

/** Where the `tracing` plugin's events go, as its options say. */
export interface ServerEventsConfig {
    loggerProvider?: EventLoggerProvider | undefined;
    spanEvents?: boolean | undefined;
}

/**
 * The exception of a request the `tracing` plugin traces (docs/observability.md, "Events as logs"): the
 * conventions' `http.server.request.exception` log record, ERROR, in the context of the request's span,
 * through the Logs API; an `exception` event on the span only with `spanEvents`.
 */
export class ServerEvents {
    private readonly onSpans: boolean;
    private readonly logger: EventLogger | undefined;

    constructor(config: ServerEventsConfig, version: string) {
        this.onSpans = config.spanEvents === true;
        this.logger = (config.loggerProvider ?? globalLoggerProvider())?.getLogger(INSTRUMENTATION_SCOPE, version);
    }

    /**
     * Tells the error a request failed with (a 5xx), whether its span records or not, as its duration point
     * is recorded: the record carries `error.type`, the method and the route from `measured` (the duration
     * point's attributes), with the exception's own.
     */
    exception(span: Span, spanContext: Context, err: Error, measured: Attributes): void {
        if (this.onSpans && span.isRecording()) {
            span.recordException(err);
        }

        const logger = this.logger;
        if (logger === undefined || !wantsEvent(logger, spanContext, SERVER_REQUEST_EXCEPTION)) {
            return;
        }

        const attributes: Attributes = {};
        attributes[ATTR_HTTP_REQUEST_METHOD] = measured[ATTR_HTTP_REQUEST_METHOD];
        const route = measured[ATTR_HTTP_ROUTE];
        if (route !== undefined) {
            attributes[ATTR_HTTP_ROUTE] = route;
        }

        attributes[ATTR_ERROR_TYPE] = measured[ATTR_ERROR_TYPE];
        emitException(logger, SERVER_REQUEST_EXCEPTION, spanContext, err, attributes);
    }
}
