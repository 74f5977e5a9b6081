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

/** Options of `new HttpError(messageOrError, options)`. */
export interface HttpErrorOptions<Data = unknown> {
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

/** Options of `toHttpError(err, options)`. */
export interface ToHttpErrorOptions<Data = unknown> {
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
