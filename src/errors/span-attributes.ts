import type { HapiRequest } from '../common/hapi-plugin.js';
import { isHttpError } from './http-error.js';
import { ownValue } from './own-value.js';
import { PROBLEM_DETAILS_PLUGIN } from './problem-plugin.js';

/**
 * The attribute names of the OpenTelemetry HTTP semantic conventions this module sets. The core may
 * depend on `@opentelemetry/api` only, so the two names are spelled here; a test checks them
 * against `@opentelemetry/semantic-conventions`.
 */
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const ATTR_ERROR_TYPE = 'error.type';

export interface HttpErrorSpanAttributes {
    [ATTR_HTTP_RESPONSE_STATUS_CODE]: number;
    [ATTR_ERROR_TYPE]: string;
}

/**
 * The span attributes that describe an HttpError (ours or hapi's): its status code, and as
 * `error.type` that status as a string, which is what the conventions ask for an error status.
 * Client spans and server spans of the same failed request carry exactly these. Undefined for a
 * value that is not an HttpError.
 */
export function toSpanAttributes(err: unknown): HttpErrorSpanAttributes | undefined {
    if (!isHttpError(err)) {
        return undefined;
    }

    const statusCode = err.output.statusCode;
    return { [ATTR_HTTP_RESPONSE_STATUS_CODE]: statusCode, [ATTR_ERROR_TYPE]: String(statusCode) };
}

/**
 * The attribute naming the problem type (RFC 9457 `type`) of an error response: on a client span,
 * the type of the document the response carried; on a server span, the type of the document the
 * `problemDetails` plugin sent. No OpenTelemetry semantic convention names a problem type
 * (`error.type` holds the status here, for the matching above), so the name is tracewire's own, in
 * its namespace, as the conventions ask of attributes they do not define (docs/observability.md,
 * "Problem types on spans").
 */
export const ATTR_PROBLEM_TYPE = 'tracewire.problem.type';

/**
 * The problem type a client-side HttpError carries: `data.problem.type` of a helper's rejection of a
 * 4xx/5xx answered as `application/problem+json` (`about:blank` when the document named none).
 * Undefined for anything else. Never throws, whatever `err` holds: the instrumentation calls it on
 * any rejection.
 */
export function receivedProblemType(err: unknown): string | undefined {
    if (!isHttpError(err)) {
        return undefined;
    }

    try {
        const data = ownValue(err, 'data');
        if (ownValue(data, 'isResponseError') !== true) {
            return undefined;
        }

        const type = ownValue(ownValue(data, 'problem'), 'type');
        return typeof type === 'string' ? type : undefined;
    } catch {
        // A Proxy or an accessor of the caller's own making: no problem type to tell.
        return undefined;
    }
}

/**
 * The problem type the `problemDetails` plugin sent for a hapi request, as it noted it in
 * `request.plugins[PROBLEM_DETAILS_PLUGIN]`: undefined when it sent no problem document (no error,
 * the classic payload, or no such plugin).
 */
export function sentProblemType(request: HapiRequest | null | undefined): string | undefined {
    try {
        const type = ownValue(ownValue(request?.plugins, PROBLEM_DETAILS_PLUGIN), 'type');
        return typeof type === 'string' ? type : undefined;
    } catch {
        return undefined;
    }
}
