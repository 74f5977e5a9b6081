import { describe } from './describe.js';
import { assertNoCause, checkProblemFields, recordProblemFields } from './problem-fields.js';
import { statusText } from './status-texts.js';
import type { HttpErrorFactoryOptions, HttpErrorOptions, HttpErrorOutput, ToHttpErrorOptions } from './types.js';

/** Payload message of every 5xx error: the real message stays on `error.message` for the logs. */
export const hiddenServerMessage = 'An internal server error occurred';

/** 401 attributes kept off the enumerable keys so `reformat()` can put them back into the payload. */
export const authAttributes = Symbol('tracewire.authAttributes');

/**
 * hapi recognises an error response by `isBoom` plus `output`. The flag is set non-enumerable so the
 * error's keys and JSON stay `data, isHttpError, isServer, output`; writable and configurable because
 * hapi's own error helper assigns it and redefines `reformat` on errors it sees.
 */
const isBoomDescriptor: PropertyDescriptor = { value: true, writable: true, configurable: true, enumerable: false };
const reformatDescriptor: PropertyDescriptor = {
    value: reformat,
    writable: true,
    configurable: true,
    enumerable: false
};

/**
 * Sets the non-enumerable `isBoom`, `reformat` and (unless already there) `typeof`. Three single
 * definitions in a fixed order: measurably cheaper than one `defineProperties` call, and every
 * error goes through the same shape transitions.
 */
function defineHiddenProperties(error: Error, ctor: Function): void {
    Object.defineProperty(error, 'isBoom', isBoomDescriptor);
    Object.defineProperty(error, 'reformat', reformatDescriptor);
    if (!Object.hasOwn(error, 'typeof')) {
        Object.defineProperty(error, 'typeof', { value: ctor, writable: true, configurable: true });
    }
}

/**
 * An error object that carries an HTTP status, headers and a JSON payload a server can send (README,
 * "Errors"). Errors made here are plain `Error`s (or the error given) decorated with these properties:
 * `instanceof HttpError` and `isHttpError()` recognise them, their prototype does not.
 */
export interface HttpError<Data = unknown> extends Error {
    /** Always true; reliable only on a value known to be an Error (else use `isHttpError()`). */
    isHttpError: true;
    /** True for a status of 500 or more. */
    isServer: boolean;
    /** The `data` given when the error was made, `null` when none. */
    data: Data;
    /** The response: status, headers and payload. May be edited; `reformat()` rebuilds the payload. */
    output: HttpErrorOutput;
    /** The factory or constructor that made the error. */
    typeof: Function;
    /** On a 401 with attributes and no message: the credentials were missing rather than wrong. */
    isMissing?: boolean;
    /** Set by `badImplementation()`: the failure is a bug of the server's code, not of the request. */
    isDeveloperError?: boolean;
    /** Rebuilds `output.payload` from the error; 5xx messages are hidden unless `debug` is true. */
    reformat(debug?: boolean): void;
}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface types the plain Errors the constructor returns
export class HttpError<Data = unknown> {
    /**
     * Creates an HttpError from a message, or decorates an existing Error as `toHttpError()` does.
     * Returns a plain Error, not an instance of this class's prototype (README, "Errors").
     */
    constructor(messageOrError?: string | Error | null, options: HttpErrorOptions<Data> = {}) {
        if (messageOrError instanceof Error) {
            const decorated = decorateError(messageOrError, options, options.ctor ?? new.target);
            recordMaker(decorated, new.target);
            // biome-ignore lint/correctness/noConstructorReturn: the result is the decorated Error itself (README, "Errors")
            return decorated;
        }

        const error = buildHttpError<Data>(
            assertStatusCode(options.statusCode ?? 500),
            assertMessage(messageOrError),
            options.data,
            options.ctor ?? new.target,
            options
        );
        if (options.decorate) {
            Object.assign(error, options.decorate);
        }

        recordMaker(error, new.target);
        // biome-ignore lint/correctness/noConstructorReturn: errors are plain Errors, not class instances (README, "Errors")
        return error;
    }

    /**
     * `instanceof HttpError` holds for every HttpError. For a subclass (`class NotFoundError extends
     * HttpError {}`) it holds for the errors that subclass, or a subclass of it, constructed: the
     * errors are plain Errors, so the prototype chain cannot tell. Anything else keeps the plain
     * JavaScript answer: an object with the class's prototype, or one of those errors, on its chain.
     */
    static [Symbol.hasInstance](value: unknown): boolean {
        // biome-ignore lint/complexity/noThisInStatic: `this` is the class right of instanceof, perhaps a subclass
        if (Function.prototype[Symbol.hasInstance].call(this, value)) {
            return true;
        }

        if (!isHttpError(value)) {
            return false;
        }

        // biome-ignore lint/complexity/noThisInStatic: `this` is the class right of instanceof, perhaps a subclass
        return madeBy(value, this);
    }
}

/** The subclass of HttpError that constructed an error; errors of the factories and of HttpError itself have none. */
const makers = new WeakMap<Error, Function>();

/** True when `target` is HttpError itself, or the subclass (or a base of the subclass) that made `error`. */
function madeBy(error: Error, target: Function): boolean {
    if (target === HttpError) {
        return true;
    }

    // An object made with Object.create() from such an error has it on its chain, as with any class.
    for (let link: object | null = error; link !== null; link = Object.getPrototypeOf(link)) {
        const maker = makers.get(link as Error);
        if (maker !== undefined && (maker === target || Object.prototype.isPrototypeOf.call(target, maker))) {
            return true;
        }
    }

    return false;
}

function recordMaker(error: Error, maker: Function): void {
    if (maker !== HttpError) {
        makers.set(error, maker);
    }
}

/**
 * The path every factory takes: a fresh Error with the HttpError properties, built in one pass
 * with a fixed property order so every error shares one object shape. A new error made around
 * another (the `cause` option, else an Error given as `data`) gets it as its ES2022 `cause`.
 */
export function buildHttpError<Data>(
    statusCode: number,
    message: string,
    data: Data | undefined,
    ctor: Function,
    options?: HttpErrorFactoryOptions | null
): HttpError<Data> {
    const fields = options == null ? undefined : checkProblemFields(options);
    const cause = options?.cause ?? (data instanceof Error ? data : undefined);
    const error = createError(message, ctor, cause) as HttpError<Data>;
    error.data = data === undefined ? (null as Data) : data;
    error.isHttpError = true;
    error.isServer = statusCode >= 500;
    error.output = { statusCode, payload: buildPayload(statusCode, message, undefined, false), headers: {} };
    defineHiddenProperties(error, ctor);
    recordProblemFields(error, fields);
    return error;
}

/** The message argument of the constructor and the factories: a string, or nothing. */
export function assertMessage(message: unknown): string {
    if (message === undefined || message === null) {
        return '';
    }

    if (typeof message !== 'string') {
        throw new TypeError(`HttpError message must be a string or an Error, got ${describe(message)}`);
    }

    return message;
}

/**
 * True when `err` is an HttpError, from this library or hapi's own error objects, and, when
 * `statusCode` is given, has that status.
 */
export function isHttpError<Data = unknown>(err: unknown, statusCode?: number): err is HttpError<Data> {
    if (!(err instanceof Error)) {
        return false;
    }

    const candidate = err as Partial<HttpError> & { isBoom?: unknown };
    if (candidate.isHttpError !== true && candidate.isBoom !== true) {
        return false;
    }

    // A flag without `output` is not a response hapi or `toSpanAttributes()` could use.
    if (typeof candidate.output !== 'object' || candidate.output === null) {
        return false;
    }

    return statusCode === undefined || candidate.output.statusCode === statusCode;
}

/**
 * Decorates `err` in place with the HttpError properties and returns it. A message given is
 * prefixed to the error's own one. With `override: false` an existing HttpError keeps its status
 * and message.
 */
export function toHttpError<Data = unknown>(err: Error, options: ToHttpErrorOptions<Data> = {}): HttpError<Data> {
    return decorateError(err, options, toHttpError);
}

/**
 * `toHttpError()` with the function recorded as `typeof` (the factory the caller used). `problem`
 * holds the problem fields when they come apart from `options` (a factory's last argument); a
 * `cause` among them is refused, since no new error is made.
 */
export function decorateError<Data>(
    err: Error,
    options: ToHttpErrorOptions<Data>,
    ctor: Function,
    problem: HttpErrorFactoryOptions | null | undefined = options
): HttpError<Data> {
    if (!(err instanceof Error)) {
        throw new TypeError(`toHttpError() expects an Error instance, got ${describe(err)}`);
    }

    if (options.message !== undefined && typeof options.message !== 'string') {
        throw new TypeError(`toHttpError() option message must be a string, got ${describe(options.message)}`);
    }

    assertNoCause(problem ?? undefined);
    const fields = problem == null ? undefined : checkProblemFields(problem);
    const decorated = decorateChecked(err, options, ctor);
    recordProblemFields(decorated, fields);
    return decorated;
}

function decorateChecked<Data>(err: Error, options: ToHttpErrorOptions<Data>, ctor: Function): HttpError<Data> {
    const error = err as HttpError<Data>;
    if (options.data !== undefined) {
        error.data = options.data;
    }

    if (options.decorate) {
        Object.assign(error, options.decorate);
    }

    const previous = isHttpError(error) ? error.output : undefined;
    if (previous === undefined) {
        return initialize(error, assertStatusCode(options.statusCode ?? 500), options.message, ctor, undefined);
    }

    if (options.override === false || (options.statusCode === undefined && !options.message)) {
        return error;
    }

    const statusCode = assertStatusCode(options.statusCode ?? previous.statusCode);
    return initialize(error, statusCode, options.message, ctor, previous);
}

/** Sets the HttpError properties on `error`; `previous` is its output when it already was an HttpError. */
function initialize<Data>(
    error: HttpError<Data>,
    statusCode: number,
    messagePrefix: string | undefined,
    ctor: Function,
    previous: HttpErrorOutput | undefined
): HttpError<Data> {
    if (messagePrefix) {
        // Checked before any change so a refused error is not left half decorated.
        assertWritableMessage(error);
    }

    // Re-decorating keeps the headers (e.g. `Allow`) while the status stays; a new status starts afresh.
    let headers: HttpErrorOutput['headers'] = {};
    if (previous !== undefined) {
        if (previous.statusCode === statusCode) {
            headers = previous.headers;
        }

        if (statusCode !== 401) {
            // The challenge details belong to a 401 only.
            delete (error as { [authAttributes]?: unknown })[authAttributes];
            delete error.isMissing;
        }
    }

    const message = messagePrefix
        ? error.message
            ? `${messagePrefix}: ${error.message}`
            : messagePrefix
        : error.message;
    const attributes = (error as { [authAttributes]?: HttpErrorOutput['payload']['attributes'] })[authAttributes];
    // The key order of a decorated error (`isHttpError, isServer, data, output`) is @hapi/boom's.
    error.isHttpError = true;
    error.isServer = statusCode >= 500;
    if (!Object.hasOwn(error, 'data')) {
        error.data = null as Data;
    }

    error.output = { statusCode, payload: buildPayload(statusCode, message, attributes, false), headers };
    if (messagePrefix) {
        // Last, so an Error that had no message of its own gains the key after the others, as in @hapi/boom.
        error.message = message;
    }

    defineHiddenProperties(error, ctor);
    return error;
}

function reformat(this: HttpError, debug = false): void {
    const { statusCode } = this.output;
    const attributes = (this as { [authAttributes]?: HttpErrorOutput['payload']['attributes'] })[authAttributes];
    this.isServer = statusCode >= 500;
    this.output.payload = buildPayload(statusCode, this.message, attributes, debug);
}

/**
 * The response payload `{ statusCode, error, message?, attributes? }`, always in that key order; a
 * 5xx shows a fixed text in place of any message unless `debug`.
 */
function buildPayload(
    statusCode: number,
    message: string,
    attributes: HttpErrorOutput['payload']['attributes'] | undefined,
    debug: boolean
): HttpErrorOutput['payload'] {
    const payload: HttpErrorOutput['payload'] = { statusCode, error: statusText(statusCode) };
    if (statusCode >= 500 && debug !== true) {
        // Every 5xx shows this fixed text, message or not (README, "Errors").
        payload.message = hiddenServerMessage;
    } else if (message) {
        payload.message = message;
    }

    if (attributes !== undefined) {
        payload.attributes = payloadAttributes(attributes);
    }

    return payload;
}

/** The payload's copy of a 401's attributes: editing the payload leaves what `reformat()` rebuilds from intact. */
export function payloadAttributes(
    attributes: NonNullable<HttpErrorOutput['payload']['attributes']>
): NonNullable<HttpErrorOutput['payload']['attributes']> {
    return typeof attributes === 'string' ? attributes : { ...attributes };
}

/**
 * One stack capture instead of two: the Error is built without frames and the trace is captured
 * once, cropped at `ctor` so it starts in the caller's code rather than in this library.
 */
function createError(message: string, ctor: Function, cause: unknown): Error {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    // With `{ cause }` the engine itself installs it, exactly as on any error made that way.
    const error = cause === undefined ? new Error(message) : new Error(message, { cause });
    Error.stackTraceLimit = limit;
    Error.captureStackTrace(error, ctor);
    return error;
}

export function assertStatusCode(statusCode: unknown): number {
    if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 400 || statusCode > 599) {
        throw new RangeError(`HttpError statusCode must be an integer from 400 to 599, got ${describe(statusCode)}`);
    }

    return statusCode;
}

function assertWritableMessage(error: Error): void {
    const descriptor =
        Object.getOwnPropertyDescriptor(error, 'message') ??
        Object.getOwnPropertyDescriptor(Object.getPrototypeOf(error), 'message');
    if (descriptor && (descriptor.get || descriptor.set || descriptor.writable === false)) {
        throw new TypeError(`Cannot prefix the message of ${error.name}: its message property is read-only`);
    }
}
