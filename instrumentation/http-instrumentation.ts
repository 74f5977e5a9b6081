import { clientRequestMarker } from '../src/client/index.js';

/** The mark the tracewire client puts on the headers of the options it hands to `http.request()`. */
export const TRACEWIRE_REQUEST: typeof clientRequestMarker = clientRequestMarker;

/**
 * True for the options of a request made by the tracewire client. Give it to
 * `@opentelemetry/instrumentation-http` as `ignoreOutgoingRequestHook` so a request traced by
 * `instrumentClient()` yields one client span rather than two:
 *
 * `new HttpInstrumentation({ ignoreOutgoingRequestHook: isTracewireRequest })`
 */
export function isTracewireRequest(options: unknown): boolean {
    if (typeof options !== 'object' || options === null) {
        return false;
    }

    // The hook is given a copy of the options, which shares their headers object.
    const headers = (options as { headers?: unknown }).headers;
    return (
        typeof headers === 'object' &&
        headers !== null &&
        (headers as Record<symbol, unknown>)[TRACEWIRE_REQUEST] === true
    );
}

/**
 * An `ignoreOutgoingRequestHook` that skips tracewire requests and asks `next` (your own hook)
 * about the others.
 */
export function ignoreTracewireRequests<O extends object>(next?: (options: O) => boolean): (options: O) => boolean {
    if (next === undefined) {
        return isTracewireRequest;
    }

    return (options) => isTracewireRequest(options) || next(options);
}
