/*
 * The OpenTelemetry API, when the application has it. `@opentelemetry/api` is an optional peer of
 * the package (only `tracewire/instrumentation` needs it): the static plugin must install and run
 * without it, so it is imported when the plugin is registered, never when this module loads, and
 * nothing of its types reaches the plugin's declarations.
 */

type OpenTelemetryApi = typeof import('@opentelemetry/api');

/** The few members of a span the plugin uses (a structural subset of the API's `Span`). */
export interface SpanLike {
    isRecording(): boolean;
    setAttribute(key: string, value: string | number): unknown;
    recordException(exception: Error): void;
}

// undefined until loaded; null when the application has no OpenTelemetry API.
let api: OpenTelemetryApi | null | undefined;

/** Loads the API once, if the application has it; a missing one leaves tracing off. */
export async function loadOpenTelemetry(): Promise<void> {
    if (api === undefined) {
        api = await import('@opentelemetry/api').catch(() => null);
    }
}

/** The active span, if tracing is on. */
export function activeSpan(): SpanLike | undefined {
    return api?.trace.getActiveSpan();
}

/** The active context, if tracing is on: where a log record of the active span's request belongs. */
export function activeContext(): import('@opentelemetry/api').Context | undefined {
    return api?.context.active();
}

let probeKey: symbol | undefined;

/**
 * Whether a global OpenTelemetry context manager is registered. Without one no span is ever
 * active: the no-op manager of the API runs the callback below in the context it already had,
 * where the probe value is missing.
 */
export function hasContextManager(): boolean {
    if (api === null || api === undefined) {
        return false;
    }

    const { context, createContextKey } = api;
    probeKey ??= createContextKey('tracewire static: context manager probe');
    const key = probeKey;
    return context.with(context.active().setValue(key, true), () => context.active().getValue(key) === true);
}
