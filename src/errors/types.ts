/** Header name to header value, as the error's response would send them. */
export type HttpErrorHeaders = Record<string, string | string[] | number>;

/** The JSON body a server sends for an `HttpError` (README, "Errors"). */
export interface HttpErrorPayload {
    statusCode: number;
    error: string;
    message?: string;
    /** 401 errors built with a scheme: the `WWW-Authenticate` attributes (rules 2 and 3 of 4.B). */
    attributes?: Record<string, string | number | boolean> | string;
    [key: string]: unknown;
}

/** The formatted response of an `HttpError`; it may be edited, and `reformat()` rebuilds the payload. */
export interface HttpErrorOutput {
    statusCode: number;
    headers: HttpErrorHeaders;
    payload: HttpErrorPayload;
}

/**
 * The RFC 9457 members an error can carry for its problem document (docs/problem-details.md). They
 * leave the classic payload as it is. `null` or `undefined` means "not set".
 */
export interface ProblemFields {
    /**
     * A URI reference naming the problem type (`https://example.com/probs/out-of-credit`). A relative
     * one is resolved against the plugin's `typeBase`. Without one the type is `about:blank`.
     */
    type?: string | null | undefined;
    /** A short summary of the problem type. Default: the status's reason phrase (`Not Found`). */
    title?: string | null | undefined;
    /**
     * The public explanation of this occurrence, in place of the message. The only way to give a
     * 5xx a `detail`: its message is never shown.
     */
    detail?: string | null | undefined;
    /** A URI reference naming this occurrence. Default, with the plugin: the request path. */
    instance?: string | null | undefined;
    /**
     * Extension members, public by being given here (`data` never is): JSON values, under any name
     * but the five members of RFC 9457, `__proto__`, `constructor` and `prototype`.
     */
    extensions?: Record<string, unknown> | null | undefined;
}

/** The last argument of every factory: the problem fields, and the error the new one is made around. */
export interface HttpErrorFactoryOptions extends ProblemFields {
    /**
     * The error the new one is made around, set as ES2022 sets `cause` (own, not enumerable). Only
     * for a new error: a factory handed an Error decorates that one, which keeps its own cause.
     */
    cause?: unknown;
}

/**
 * A problem document (RFC 9457): what `toProblem()` gives and the `problemDetails` plugin sends,
 * and what `readProblem()` keeps of a received one. Members other than the five are extensions.
 */
export interface ProblemDetails {
    /** A URI reference naming the problem type; `about:blank` when it is only its status. */
    type: string;
    title?: string;
    status?: number;
    detail?: string;
    instance?: string;
    [extension: string]: unknown;
}

/** Options of the `problemDetails` hapi plugin (docs/problem-details.md). `null` or `undefined` means the default. */
export interface ProblemDetailsOptions {
    /**
     * `'negotiate'` (default): a problem document for a request whose `accept` header ranks
     * `application/problem+json` above `application/json`, the classic payload otherwise.
     * `'always'`: a problem document for every error response.
     */
    mode?: 'negotiate' | 'always' | null | undefined;
    /** An absolute URI the relative `type` of an error is resolved against (`https://example.com/probs/`). */
    typeBase?: string | null | undefined;
    /** Default true: an error without an `instance` of its own gets the request path. */
    instanceFromPath?: boolean | null | undefined;
}

/** Options of `new HttpError(messageOrError, options)`. */
export interface HttpErrorOptions<Data = unknown> extends HttpErrorFactoryOptions {
    /** Status code, 400–599. Default 500 unless the error already is an `HttpError`. */
    statusCode?: number;
    /** Assigned to `error.data`. */
    data?: Data;
    /** Extra properties set on the error. */
    decorate?: Record<string, unknown>;
    /** Function the stack trace is cropped at, so the trace starts at the caller of the factory. */
    ctor?: Function;
    /** With an `Error` as the first argument: prefix for its message (see `toHttpError`). */
    message?: string;
    /** With an `Error` as the first argument: see `toHttpError`. */
    override?: boolean;
}

/** Options of `toHttpError(err, options)`: no `cause`, since the error given is decorated, not wrapped. */
export interface ToHttpErrorOptions<Data = unknown> extends ProblemFields {
    /** Status code, 400–599. Default 500 when the error is not already an `HttpError`. */
    statusCode?: number;
    /** Prefixed to the error's own message (`message: original`). */
    message?: string;
    /** Assigned to `error.data` when given. */
    data?: Data;
    /** Extra properties set on the error. */
    decorate?: Record<string, unknown>;
    /** Default true. When false, an error that already is an `HttpError` keeps its status and message. */
    override?: boolean;
}
