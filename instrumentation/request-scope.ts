import type { ClientRequest } from 'node:http';
import { type Context, context, createContextKey } from '@opentelemetry/api';
import { type RequestScope, requestScopeKey } from '../src/client/index.js';
import { http, https } from '../src/common/node-modules.js';

/*
 * One CLIENT span per hop with `@opentelemetry/instrumentation-http` active, nothing for the user to
 * configure. That instrumentation wraps `http.request()`, which the client calls (looked up at
 * call time, so test mocks see it too): left alone it would open a second CLIENT span and replace
 * the `traceparent` this instrumentation injected. A hop this instrumentation claims therefore
 * creates its request in a context with tracing suppressed, where instrumentation-http's span is a
 * non-recording one and the propagator injects nothing, so our span and header stay.
 *
 * instrumentation-http binds the request and its response to that context, so the client's own
 * listeners (and the next hop of a redirect or retry, started from them) run in it: the context
 * keeps the caller's, and `callerContext()` gives it back to this instrumentation.
 *
 * Only while `http.request` or `https.request` is wrapped: entering the scope costs each hop two
 * contexts and a `context.with()`, for nobody when instrumentation-http is not loaded.
 */

/**
 * OpenTelemetry's "tracing suppressed" flag, as `@opentelemetry/core`'s `suppressTracing()` sets it.
 * `createContextKey()` is `Symbol.for()` of the description, and every SDK line (1.x to 3.x) uses
 * this description: spelled here so the instrumentation needs no particular `@opentelemetry/core`.
 */
const suppressTracingKey = createContextKey('OpenTelemetry SDK Context Key SUPPRESS_TRACING');
const callerContextKey = createContextKey('tracewire: the context a hop was sent from');

/** True when tracing is suppressed in `ctx` (as `@opentelemetry/core`'s `isTracingSuppressed`). */
export function isTracingSuppressed(ctx: Context): boolean {
    return ctx.getValue(suppressTracingKey) === true;
}

/** The context a hop starts in: the caller's, seen through the suppression its request was created in. */
export function callerContext(active: Context): Context {
    return (active.getValue(callerContextKey) as Context | undefined) ?? active;
}

/**
 * The scope of a claimed hop's request (src/client/wire/http1/node-http.ts): created with tracing suppressed.
 * One shared function: the hop's request is created in the same tick, and so the same context, as
 * its `preRequest`.
 */
const createUntraced: RequestScope = (create: () => ClientRequest): ClientRequest => {
    const caller = callerContext(context.active());
    return context.with(caller.setValue(suppressTracingKey, true).setValue(callerContextKey, caller), create);
};

/**
 * Marks a hop `uri` as claimed by a tracewire instrumentation: its request is created untraced by
 * others, when there are others (`requestsAreWrapped()`).
 */
export function createRequestUntraced(uri: object): void {
    if (requestsAreWrapped()) {
        (uri as { [requestScopeKey]?: RequestScope })[requestScopeKey] = createUntraced;
    }
}

/**
 * Whether `http.request` or `https.request`, which the client calls, is wrapped the way OpenTelemetry's
 * instrumentations wrap a function (`isWrapped()` of `@opentelemetry/instrumentation`: the marks its
 * shimmer leaves on the wrapper, and takes away with them when the instrumentation is disabled), as
 * instrumentation-http does. Read for each hop, so an instrumentation enabled or disabled at any
 * time, before or after this one, is seen by the next hop.
 */
export function requestsAreWrapped(): boolean {
    return isWrapped(http.request) || isWrapped(https.request);
}

function isWrapped(fn: unknown): boolean {
    const wrapper = fn as { __wrapped?: unknown; __original?: unknown; __unwrap?: unknown };
    return (
        wrapper.__wrapped === true && typeof wrapper.__original === 'function' && typeof wrapper.__unwrap === 'function'
    );
}
