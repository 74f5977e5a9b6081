import {
    context,
    createContextKey,
    metrics,
    propagation,
    ROOT_CONTEXT,
    type TracerProvider,
    trace
} from '@opentelemetry/api';
import { afterAll, expect } from 'vitest';

// A value only a global context manager carries into a callback of context.with().
const probe = createContextKey('tracewire tests: a global context manager');

/**
 * The files of the shared project run one after another in a worker (vitest.config.ts): OpenTelemetry set up
 * globally by one file and left behind is there for the next, which then runs in a process with an SDK it did
 * not set up (a test of the process without one failed so, in the order one run happened to take). Each file
 * ends as it found the process: what it registered globally, it disables. This module runs anew before each
 * file, ahead of the file's own code: `found` is what the file began with.
 */
const found = globalOpenTelemetry();

afterAll(() => {
    expect(globalOpenTelemetry(), 'OpenTelemetry registered globally by this file and left behind').toEqual(found);
});

/** What is registered with OpenTelemetry's global API, by name. */
function globalOpenTelemetry(): string[] {
    const registered: string[] = [];
    if (context.with(ROOT_CONTEXT.setValue(probe, true), () => context.active().getValue(probe) === true)) {
        registered.push('a context manager');
    }

    const tracers = trace.getTracerProvider() as TracerProvider & { getDelegate?(): TracerProvider };
    if (tracers.getDelegate?.().constructor.name !== 'NoopTracerProvider') {
        registered.push('a tracer provider');
    }

    if (propagation.fields().length > 0) {
        registered.push('a propagator');
    }

    if (metrics.getMeterProvider().constructor.name !== 'NoopMeterProvider') {
        registered.push('a meter provider');
    }

    return registered;
}
