import {
    diag,
    type Meter,
    type MeterProvider,
    metrics,
    type Tracer,
    type TracerProvider,
    trace
} from '@opentelemetry/api';

/** The instrumentation scope of every span and metric made here. */
export const INSTRUMENTATION_SCOPE = 'tracewire/instrumentation';

/** The version this instrumentation reports: the package's (a test holds the two together). */
export const INSTRUMENTATION_VERSION = '0.1.0';

/** The bucket boundaries the conventions advise for `http.*.request.duration`, in seconds. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The providers an instrumentation records to; both default to the globally registered ones. */
export interface ProviderConfig {
    tracerProvider?: TracerProvider;
    meterProvider?: MeterProvider;
}

/**
 * The tracer and meter of an instrumentation. The global tracer provider is a proxy, so an SDK
 * registered later is still picked up; the global meter provider is not, so register it first.
 */
export function resolveProviders(config: ProviderConfig): { tracer: Tracer; meter: Meter } {
    const tracerProvider = config.tracerProvider ?? trace.getTracerProvider();
    const meterProvider = config.meterProvider ?? metrics.getMeterProvider();
    return {
        tracer: tracerProvider.getTracer(INSTRUMENTATION_SCOPE),
        meter: meterProvider.getMeter(INSTRUMENTATION_SCOPE)
    };
}

/**
 * Runs a user hook or a listener body so that whatever it throws is reported through the OTel diag
 * logger instead of reaching the request it observes.
 */
export function guarded<A extends unknown[], R>(what: string, fn: (...args: A) => R, ...args: A): R | undefined {
    try {
        return fn(...args);
    } catch (err) {
        reportError(what, err);
        return undefined;
    }
}

/** Reports an error the instrumentation caught through the OTel diag logger. */
export function reportError(what: string, err: unknown): void {
    diag.error(`tracewire instrumentation: ${what} threw`, err);
}
