import { isHttpError } from './http-error.js';

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
