import {
    assertMessage,
    assertStatusCode,
    buildHttpError,
    decorateError,
    type HttpError,
    isHttpError
} from './http-error.js';

/** Every factory takes an optional message and optional data (README, "Errors"). */
export type HttpErrorFactory = <Data = null>(message?: string | Error | null, data?: Data) => HttpError<Data>;

function create<Data>(
    statusCode: number,
    message: string | Error | null | undefined,
    data: Data | undefined,
    ctor: Function
): HttpError<Data> {
    if (message instanceof Error) {
        return decorateError(message, data === undefined ? { statusCode } : { statusCode, data }, ctor);
    }

    return buildHttpError(statusCode, assertMessage(message), data, ctor);
}

// 4xx

export const badRequest: HttpErrorFactory = (message, data) => create(400, message, data, badRequest);
export const paymentRequired: HttpErrorFactory = (message, data) => create(402, message, data, paymentRequired);
export const forbidden: HttpErrorFactory = (message, data) => create(403, message, data, forbidden);
export const notFound: HttpErrorFactory = (message, data) => create(404, message, data, notFound);
export const notAcceptable: HttpErrorFactory = (message, data) => create(406, message, data, notAcceptable);
export const proxyAuthRequired: HttpErrorFactory = (message, data) => create(407, message, data, proxyAuthRequired);
export const clientTimeout: HttpErrorFactory = (message, data) => create(408, message, data, clientTimeout);
export const conflict: HttpErrorFactory = (message, data) => create(409, message, data, conflict);
export const resourceGone: HttpErrorFactory = (message, data) => create(410, message, data, resourceGone);
export const lengthRequired: HttpErrorFactory = (message, data) => create(411, message, data, lengthRequired);
export const preconditionFailed: HttpErrorFactory = (message, data) => create(412, message, data, preconditionFailed);
export const entityTooLarge: HttpErrorFactory = (message, data) => create(413, message, data, entityTooLarge);
export const uriTooLong: HttpErrorFactory = (message, data) => create(414, message, data, uriTooLong);
export const unsupportedMediaType: HttpErrorFactory = (message, data) =>
    create(415, message, data, unsupportedMediaType);
export const rangeNotSatisfiable: HttpErrorFactory = (message, data) => create(416, message, data, rangeNotSatisfiable);
export const expectationFailed: HttpErrorFactory = (message, data) => create(417, message, data, expectationFailed);
export const teapot: HttpErrorFactory = (message, data) => create(418, message, data, teapot);
export const badData: HttpErrorFactory = (message, data) => create(422, message, data, badData);
export const locked: HttpErrorFactory = (message, data) => create(423, message, data, locked);
export const failedDependency: HttpErrorFactory = (message, data) => create(424, message, data, failedDependency);
export const tooEarly: HttpErrorFactory = (message, data) => create(425, message, data, tooEarly);
export const preconditionRequired: HttpErrorFactory = (message, data) =>
    create(428, message, data, preconditionRequired);
export const tooManyRequests: HttpErrorFactory = (message, data) => create(429, message, data, tooManyRequests);
export const illegal: HttpErrorFactory = (message, data) => create(451, message, data, illegal);

/** 405 with the `Allow` header set from `allow` (a method or a list of methods). */
export function methodNotAllowed<Data = null>(
    message?: string | Error | null,
    data?: Data,
    allow?: string | readonly string[]
): HttpError<Data> {
    const error = create(405, message, data, methodNotAllowed);
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
    statusCode = 500
): HttpError<Data extends Error ? unknown : Data> {
    assertStatusCode(statusCode);
    return serverError(message, data, statusCode, internal) as HttpError<Data extends Error ? unknown : Data>;
}

/** 500 for a bug of the server's own code: the error is marked `isDeveloperError`, as @hapi/boom marks it. */
export const badImplementation: HttpErrorFactory = (message, data) => {
    const error = serverError(message, data, 500, badImplementation);
    error.isDeveloperError = true;
    return error;
};
export const notImplemented: HttpErrorFactory = (message, data) => serverError(message, data, 501, notImplemented);
export const badGateway: HttpErrorFactory = (message, data) => serverError(message, data, 502, badGateway);
export const serverUnavailable: HttpErrorFactory = (message, data) =>
    serverError(message, data, 503, serverUnavailable);
export const gatewayTimeout: HttpErrorFactory = (message, data) => serverError(message, data, 504, gatewayTimeout);

function serverError<Data>(
    message: string | Error | null | undefined,
    data: Data | undefined,
    statusCode: number,
    ctor: Function
): HttpError<Data> {
    // The failure itself becomes the error, so its stack and properties reach the logs unchanged.
    if (data instanceof Error && !isHttpError(data) && !(message instanceof Error)) {
        return decorateError(data, message ? { statusCode, message } : { statusCode }, ctor) as HttpError<Data>;
    }

    return create(statusCode, message, data, ctor);
}
