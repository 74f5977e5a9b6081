import type { Attributes, Context } from '@opentelemetry/api';
import { requirePackage } from './node-modules.js';

/*
 * An exception as a log-based event of the OpenTelemetry Logs API (docs/observability.md, "Events as
 * logs"), one definition for the three places that tell one: a client hop (instrumentation/log-events.ts),
 * a request of the `tracing` plugin (instrumentation/server.ts) and the error span of the static plugin
 * (static/error-span.ts). The Logs API (in `@opentelemetry/api` from 1.10, `@opentelemetry/api-logs`
 * before) is an optional peer: its types are spelled here, and it is loaded only when a logger is asked for.
 */

/** The part of an OpenTelemetry Logs API `LoggerProvider` tracewire uses. */
export interface EventLoggerProvider {
    getLogger(name: string, version?: string): EventLogger;
}

/**
 * The part of a Logs API `Logger` used, spelled here so that the declarations type-check where no
 * Logs API is installed.
 */
export interface EventLogger {
    emit(record: EventRecord): void;
    /** Whether a record would be kept (Logs API 0.200 and later); a logger without it is asked nothing. */
    enabled?(options?: { context?: Context; severityNumber?: number; eventName?: string }): boolean;
}

/** A log record as the Logs API takes it. */
export interface EventRecord {
    eventName: string;
    severityNumber: number;
    severityText: string;
    timestamp?: number;
    context: Context;
    attributes?: Attributes;
}

/** An event's name and the severity the conventions ask for it. */
export interface EventKind {
    readonly name: string;
    /** The Logs API's SeverityNumber: the enum lives in the optional package, so its values are spelled. */
    readonly severityNumber: number;
    readonly severityText: string;
}

// The conventions' names (incubating), held to @opentelemetry/semantic-conventions by
// test/instrumentation/semconv.test.ts through instrumentation/semconv.ts.
export const EVENT_HTTP_CLIENT_REQUEST_EXCEPTION = 'http.client.request.exception';
export const EVENT_HTTP_SERVER_REQUEST_EXCEPTION = 'http.server.request.exception';
export const ATTR_EXCEPTION_MESSAGE = 'exception.message';
export const ATTR_EXCEPTION_STACKTRACE = 'exception.stacktrace';
export const ATTR_EXCEPTION_TYPE = 'exception.type';

/** A client request's exception: WARN, as the conventions ask (the caller may still recover). */
export const CLIENT_REQUEST_EXCEPTION: EventKind = {
    name: EVENT_HTTP_CLIENT_REQUEST_EXCEPTION,
    severityNumber: 13,
    severityText: 'WARN'
};

/** A server request's exception: ERROR, as the conventions ask. */
export const SERVER_REQUEST_EXCEPTION: EventKind = {
    name: EVENT_HTTP_SERVER_REQUEST_EXCEPTION,
    severityNumber: 17,
    severityText: 'ERROR'
};

type LogsApi = { logs?: { getLoggerProvider(): EventLoggerProvider } };

/**
 * The global LoggerProvider of the OpenTelemetry Logs API the application has (a proxy: an SDK
 * registered later is still picked up); undefined when it has none. The Logs API is part of
 * `@opentelemetry/api` from 1.10, the API of the SDK 3 line, whose NodeSDK registers its provider
 * there; before, it was the separate `@opentelemetry/api-logs`, where the SDK 2 line registers it.
 */
export function globalLoggerProvider(
    load: (name: string) => unknown = requirePackage
): EventLoggerProvider | undefined {
    for (const name of ['@opentelemetry/api', '@opentelemetry/api-logs']) {
        try {
            const { logs } = load(name) as LogsApi;
            if (logs !== undefined) {
                return logs.getLoggerProvider();
            }
        } catch {
            // Not installed: the next one, or none.
        }
    }

    return undefined;
}

/**
 * Whether the logger keeps a record of `kind` in `spanContext`: asked before one is built (the global
 * logger keeps nothing until an SDK registers a provider, and then no record is built).
 */
export function wantsEvent(logger: EventLogger, spanContext: Context, kind: EventKind): boolean {
    return (
        logger.enabled === undefined ||
        logger.enabled({ context: spanContext, severityNumber: kind.severityNumber, eventName: kind.name })
    );
}

/**
 * Emits `err` as an event of `kind` in `spanContext`: `attributes` (the caller's, such as `error.type`)
 * with the conventions' `exception.type` (a system error's code, else the error's name),
 * `exception.message` and `exception.stacktrace` added. Ask `wantsEvent()` first.
 */
export function emitException(
    logger: EventLogger,
    kind: EventKind,
    spanContext: Context,
    err: Error,
    attributes: Attributes
): void {
    const type = (err as { code?: unknown }).code ?? err.name;
    attributes[ATTR_EXCEPTION_TYPE] = String(type);
    attributes[ATTR_EXCEPTION_MESSAGE] = err.message;
    if (typeof err.stack === 'string') {
        attributes[ATTR_EXCEPTION_STACKTRACE] = err.stack;
    }

    logger.emit({
        eventName: kind.name,
        severityNumber: kind.severityNumber,
        severityText: kind.severityText,
        context: spanContext,
        attributes
    });
}
