import type { ClientRequest, RequestOptions } from 'node:http';
// The module objects themselves, never bindings of their functions: test mocks (msw, nock) and APM
// agents replace `http.request` on that object at run time, often after tracewire is loaded, and a
// binding would keep the function as it was when this module was evaluated.
import { http, https } from '../../../common/node-modules.js';

/**
 * The slot where an instrumentation leaves, on a hop's `uri` during `preRequest`, the function
 * that creates that hop's request (`tracewire/instrumentation` runs it with the tracing of
 * `@opentelemetry/instrumentation-http` suppressed, so a traced hop gets one span). `Symbol.for`,
 * so a second copy of tracewire in the process still finds it.
 */
export const requestScopeKey: unique symbol = Symbol.for('tracewire.requestScope');

/** Runs `create`, which makes the hop's ClientRequest, in whatever surroundings it chooses; returns what `create` returns. */
export type RequestScope = (create: () => ClientRequest) => ClientRequest;

/** A hop's `uri`, as far as its request scope goes. */
type ScopedUri = { [requestScopeKey]?: RequestScope | undefined };

/**
 * Creates a hop's request with the `request` function `node:http` or `node:https` has at this
 * moment, inside the scope an instrumentation left on the hop's `uri`, if any.
 */
export function createNodeRequest(isHttps: boolean, options: RequestOptions, uri: object | undefined): ClientRequest {
    const scope = (uri as ScopedUri | undefined)?.[requestScopeKey];
    if (scope === undefined) {
        return isHttps ? https.request(options) : http.request(options);
    }

    return scope(() => (isHttps ? https.request(options) : http.request(options)));
}
