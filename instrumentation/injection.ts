import { type Context, createContextKey, propagation, type Span, trace } from '@opentelemetry/api';

/*
 * The trace context a hop's request carries (README "Observability"): the propagator is handed the
 * caller's context with the hop's span in it. `trace.setSpan()` would copy the caller's context (a
 * Map, and three closures) for the one read the propagator makes of it; the context below answers
 * that read without a copy, and becomes a real one only if a propagator derives a context from it.
 */

// The key `trace.setSpan()` and `trace.getSpan()` use (`createContextKey()` is `Symbol.for()` of its
// description, the same in every @opentelemetry/api 1.x): test/instrumentation/client.test.ts holds
// `trace.getSpan()` of the context below to the span.
const spanKey = createContextKey('OpenTelemetry Context Key SPAN');

/** `parent` with `span` as its active span, for reading. */
export class SpanOverParent implements Context {
    constructor(
        private readonly parent: Context,
        private readonly span: Span
    ) {}

    getValue(key: symbol): unknown {
        return key === spanKey ? this.span : this.parent.getValue(key);
    }

    setValue(key: symbol, value: unknown): Context {
        return trace.setSpan(this.parent, this.span).setValue(key, value);
    }

    deleteValue(key: symbol): Context {
        return trace.setSpan(this.parent, this.span).deleteValue(key);
    }
}

/** Injects the context of the hop's span (child of `parent`) into the headers its request is sent with. */
export function injectHopContext(parent: Context, span: Span, headers: Record<string, unknown>): void {
    propagation.inject(new SpanOverParent(parent, span), headers);
}
