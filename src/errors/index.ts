/** The `errors` component: HTTP error objects a server can send as its response (README, "Errors"). */
export {
    badData,
    badGateway,
    badImplementation,
    badRequest,
    clientTimeout,
    conflict,
    entityTooLarge,
    expectationFailed,
    failedDependency,
    forbidden,
    gatewayTimeout,
    type HttpErrorFactory,
    illegal,
    internal,
    lengthRequired,
    locked,
    methodNotAllowed,
    notAcceptable,
    notFound,
    notImplemented,
    paymentRequired,
    preconditionFailed,
    preconditionRequired,
    proxyAuthRequired,
    rangeNotSatisfiable,
    resourceGone,
    serverUnavailable,
    teapot,
    tooEarly,
    tooManyRequests,
    unsupportedMediaType,
    uriTooLong
} from './factories.js';
export { HttpError, isHttpError, toHttpError } from './http-error.js';
export { type ProblemContext, toProblem } from './problem-document.js';
export { problemDetails } from './problem-plugin.js';
export { problemReadLimits, readProblem } from './problem-reader.js';
export { type HttpErrorSpanAttributes, toSpanAttributes } from './span-attributes.js';
export type {
    HttpErrorFactoryOptions,
    HttpErrorHeaders,
    HttpErrorOptions,
    HttpErrorOutput,
    HttpErrorPayload,
    ProblemDetails,
    ProblemDetailsOptions,
    ProblemFields,
    ToHttpErrorOptions
} from './types.js';
export { type AuthAttributes, unauthorized } from './unauthorized.js';
