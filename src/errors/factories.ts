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

/** The factory of a 4xx status: it passes itself as the `ctor` that crops the stack at its caller. */
function clientErrorFactory(statusCode: number): HttpErrorFactory {
    const factory: HttpErrorFactory = (message, data, options) => create(statusCode, message, data, factory, options);
    return factory;
}

/** The factory of a 5xx status, as `clientErrorFactory` (a failure given as `data` becomes the error). */
function serverErrorFactory(statusCode: number): HttpErrorFactory {
    const factory: HttpErrorFactory = (message, data, options) =>
        serverError(message, data, statusCode, factory, options);
    return factory;
}

// 4xx

export const badRequest: HttpErrorFactory = clientErrorFactory(400);
export const paymentRequired: HttpErrorFactory = clientErrorFactory(402);
export const forbidden: HttpErrorFactory = clientErrorFactory(403);
export const notFound: HttpErrorFactory = clientErrorFactory(404);
export const notAcceptable: HttpErrorFactory = clientErrorFactory(406);
export const proxyAuthRequired: HttpErrorFactory = clientErrorFactory(407);
export const clientTimeout: HttpErrorFactory = clientErrorFactory(408);
export const conflict: HttpErrorFactory = clientErrorFactory(409);
export const resourceGone: HttpErrorFactory = clientErrorFactory(410);
export const lengthRequired: HttpErrorFactory = clientErrorFactory(411);
export const preconditionFailed: HttpErrorFactory = clientErrorFactory(412);
export const entityTooLarge: HttpErrorFactory = clientErrorFactory(413);
export const uriTooLong: HttpErrorFactory = clientErrorFactory(414);
export const unsupportedMediaType: HttpErrorFactory = clientErrorFactory(415);
export const rangeNotSatisfiable: HttpErrorFactory = clientErrorFactory(416);
export const expectationFailed: HttpErrorFactory = clientErrorFactory(417);
export const teapot: HttpErrorFactory = clientErrorFactory(418);
export const badData: HttpErrorFactory = clientErrorFactory(422);
export const locked: HttpErrorFactory = clientErrorFactory(423);
export const failedDependency: HttpErrorFactory = clientErrorFactory(424);
export const tooEarly: HttpErrorFactory = clientErrorFactory(425);
export const preconditionRequired: HttpErrorFactory = clientErrorFactory(428);
export const tooManyRequests: HttpErrorFactory = clientErrorFactory(429);
export const illegal: HttpErrorFactory = clientErrorFactory(451);

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
export const notImplemented: HttpErrorFactory = serverErrorFactory(501);
export const badGateway: HttpErrorFactory = serverErrorFactory(502);
export const serverUnavailable: HttpErrorFactory = serverErrorFactory(503);
export const gatewayTimeout: HttpErrorFactory = serverErrorFactory(504);

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
