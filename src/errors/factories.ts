import {
    assertMessage,
    assertStatusCode,
    buildHttpError,
    decorateError,
    type HttpError,
    isHttpError
} from './http-error.js';
import type { HttpErrorFactoryOptions } from './types.js';

/**
 * Every factory takes an optional message and optional data (README, "Errors"), and last the
 * problem fields and the `cause` of a new error (docs/problem-details.md).
 */
export type HttpErrorFactory = <Data = null>(
    message?: string | Error | null,
    data?: Data,
    options?: HttpErrorFactoryOptions | null
) => HttpError<Data>;

function create<Data>(
    statusCode: number,
    message: string | Error | null | undefined,
    data: Data | undefined,
    ctor: Function,
    options: HttpErrorFactoryOptions | null | undefined
): HttpError<Data> {
    if (message instanceof Error) {
        return decorateError(message, data === undefined ? { statusCode } : { statusCode, data }, ctor, options);
    }

    return buildHttpError(statusCode, assertMessage(message), data, ctor, options);
}

// 4xx

export const badRequest: HttpErrorFactory = (message, data, options) => create(400, message, data, badRequest, options);
export const paymentRequired: HttpErrorFactory = (message, data, options) =>
    create(402, message, data, paymentRequired, options);
export const forbidden: HttpErrorFactory = (message, data, options) => create(403, message, data, forbidden, options);
export const notFound: HttpErrorFactory = (message, data, options) => create(404, message, data, notFound, options);
export const notAcceptable: HttpErrorFactory = (message, data, options) =>
    create(406, message, data, notAcceptable, options);
export const proxyAuthRequired: HttpErrorFactory = (message, data, options) =>
    create(407, message, data, proxyAuthRequired, options);
export const clientTimeout: HttpErrorFactory = (message, data, options) =>
    create(408, message, data, clientTimeout, options);
export const conflict: HttpErrorFactory = (message, data, options) => create(409, message, data, conflict, options);
export const resourceGone: HttpErrorFactory = (message, data, options) =>
    create(410, message, data, resourceGone, options);
export const lengthRequired: HttpErrorFactory = (message, data, options) =>
    create(411, message, data, lengthRequired, options);
export const preconditionFailed: HttpErrorFactory = (message, data, options) =>
    create(412, message, data, preconditionFailed, options);
export const entityTooLarge: HttpErrorFactory = (message, data, options) =>
    create(413, message, data, entityTooLarge, options);
export const uriTooLong: HttpErrorFactory = (message, data, options) => create(414, message, data, uriTooLong, options);
export const unsupportedMediaType: HttpErrorFactory = (message, data, options) =>
    create(415, message, data, unsupportedMediaType, options);
export const rangeNotSatisfiable: HttpErrorFactory = (message, data, options) =>
    create(416, message, data, rangeNotSatisfiable, options);
export const expectationFailed: HttpErrorFactory = (message, data, options) =>
    create(417, message, data, expectationFailed, options);
export const teapot: HttpErrorFactory = (message, data, options) => create(418, message, data, teapot, options);
export const badData: HttpErrorFactory = (message, data, options) => create(422, message, data, badData, options);
export const locked: HttpErrorFactory = (message, data, options) => create(423, message, data, locked, options);
export const failedDependency: HttpErrorFactory = (message, data, options) =>
    create(424, message, data, failedDependency, options);
export const tooEarly: HttpErrorFactory = (message, data, options) => create(425, message, data, tooEarly, options);
export const preconditionRequired: HttpErrorFactory = (message, data, options) =>
    create(428, message, data, preconditionRequired, options);
export const tooManyRequests: HttpErrorFactory = (message, data, options) =>
    create(429, message, data, tooManyRequests, options);
export const illegal: HttpErrorFactory = (message, data, options) => create(451, message, data, illegal, options);

/** 405 with the `Allow` header set from `allow` (a method or a list of methods). */
export function methodNotAllowed<Data = null>(
    message?: string | Error | null,
    data?: Data,
    allow?: string | readonly string[],
    options?: HttpErrorFactoryOptions | null
): HttpError<Data> {
    const error = create(405, message, data, methodNotAllowed, options);
    if (allow !== undefined) {
        error.output.headers.Allow = typeof allow === 'string' ? allow : allow.join(', ');
    }

    return error;
}

// 5xx: the payload always shows `An internal server error occurred`; the message stays on the error.

/**
 * A server error of any 5xx status (default 500). When `data` is an Error that is not yet an
 * HttpError, that error itself is decorated, with `message` prefixed to its own.
 */
export function internal<Data = null>(
    message?: string | null,
    data?: Data,
    statusCode = 500,
    options?: HttpErrorFactoryOptions | null
): HttpError<Data extends Error ? unknown : Data> {
    assertStatusCode(statusCode);
    return serverError(message, data, statusCode, internal, options) as HttpError<Data extends Error ? unknown : Data>;
}

/** 500 for a bug of the server's own code: the error is marked `isDeveloperError`, as @hapi/boom marks it. */
export const badImplementation: HttpErrorFactory = (message, data, options) => {
    const error = serverError(message, data, 500, badImplementation, options);
    error.isDeveloperError = true;
    return error;
};
export const notImplemented: HttpErrorFactory = (message, data, options) =>
    serverError(message, data, 501, notImplemented, options);
export const badGateway: HttpErrorFactory = (message, data, options) =>
    serverError(message, data, 502, badGateway, options);
export const serverUnavailable: HttpErrorFactory = (message, data, options) =>
    serverError(message, data, 503, serverUnavailable, options);
export const gatewayTimeout: HttpErrorFactory = (message, data, options) =>
    serverError(message, data, 504, gatewayTimeout, options);

function serverError<Data>(
    message: string | Error | null | undefined,
    data: Data | undefined,
    statusCode: number,
    ctor: Function,
    options: HttpErrorFactoryOptions | null | undefined
): HttpError<Data> {
    // The failure itself becomes the error, so its stack and properties reach the logs unchanged.
    if (data instanceof Error && !isHttpError(data) && !(message instanceof Error)) {
        return decorateError(
            data,
            message ? { statusCode, message } : { statusCode },
            ctor,
            options
        ) as HttpError<Data>;
    }

    return create(statusCode, message, data, ctor, options);
}
