import { isToken } from '../../common/http-token.js';
import { http } from '../../common/node-modules.js';
import type { HttpError } from '../../errors/index.js';
import { invalidOption } from '../contract/errors.js';
import type {
    DefaultsOptions,
    EffectiveOptions,
    OutgoingHeaders,
    ReadOptions,
    RequestAndReadOptions,
    WithoutNull
} from '../contract/types.js';
import { cacheProblem } from './cache.js';
import { http2Problem } from './http2.js';
import { proxyProblem } from './proxy.js';
import { retryProblem } from './retry.js';
import { mergePhaseTimeouts, phaseTimeoutsProblem } from './timeouts.js';
import { isCount } from './values.js';

/** The options a client keeps as its defaults: `agents` and `events` live on the client itself. */
export type StoredDefaults = WithoutNull<Omit<DefaultsOptions, 'agents' | 'events'>>;

// Control characters a header value must not hold: CR and LF would let a value smuggle headers.
const unsafeHeaderValue = /[\r\n\0]/;

/**
 * Checks every option present (absent ones cost nothing) and returns the first problem as an
 * HttpError naming the option, or undefined when all is well.
 */
export function checkOptions(options: Record<string, unknown>): HttpError | undefined {
    for (const key in options) {
        const value = options[key];
        // null or undefined: "not set", whatever the option.
        if (value === undefined || value === null) {
            continue;
        }

        const problem = checkOption(key, value, options);
        if (problem !== undefined) {
            // A problem with a field of an object option starts with `.field`: `Option retry.limit must...`.
            return invalidOption(`Option ${key}${problem.charCodeAt(0) === 46 ? '' : ' '}${problem}`);
        }
    }

    return undefined;
}

// One switch rather than lookups in sets: this runs for every option of every request.
function checkOption(key: string, value: unknown, options: Record<string, unknown>): string | undefined {
    switch (key) {
        case 'redirect303':
        case 'rejectUnauthorized':
            return typeof value === 'boolean' ? undefined : `must be a boolean, got ${typeof value}`;
        case 'baseUrl':
        case 'ciphers':
        case 'route':
        case 'secureProtocol':
        case 'socketPath':
            return typeof value === 'string' ? undefined : `must be a string, got ${typeof value}`;
        case 'beforeRedirect':
        case 'lookup':
        case 'onDownloadProgress':
        case 'onUploadProgress':
        case 'redirected':
            return typeof value === 'function' ? undefined : `must be a function, got ${typeof value}`;
        case 'agent':
            if (value !== false && !(value instanceof http.Agent)) {
                return 'must be an http.Agent, an https.Agent or false';
            }

            return value !== false && options.rejectUnauthorized !== undefined
                ? 'cannot be combined with rejectUnauthorized: set rejectUnauthorized on the agent instead'
                : undefined;
        case 'headers':
            return typeof value === 'object' && value !== null && !Array.isArray(value)
                ? undefined
                : 'must be an object of header names to values';
        case 'payload':
            return typeof value === 'string' || (typeof value === 'object' && value !== null)
                ? undefined
                : `must be a string, a Buffer, a readable stream or an object, got ${typeof value}`;
        case 'redirects':
            return value === false || isCount(value) ? undefined : 'must be false or a non-negative integer';
        case 'redirectMethod':
            return typeof value === 'string' && isToken(value) ? undefined : 'must be an HTTP method name';
        case 'timeout':
        case 'deadline':
        case 'maxBytes':
            return isCount(value) ? undefined : 'must be a non-negative integer of milliseconds or bytes';
        case 'family':
            return value === 4 || value === 6 ? undefined : 'must be 4 or 6';
        case 'hints':
            return Number.isInteger(value) ? undefined : 'must be an integer';
        case 'signal':
            return value instanceof AbortSignal ? undefined : 'must be an AbortSignal';
        case 'proxy':
            return proxyProblem(value);
        case 'retry':
            return retryProblem(value);
        case 'timeouts':
            return phaseTimeoutsProblem(value);
        case 'cache':
            return cacheProblem(value);
        case 'http2':
            return http2Problem(value);
        case 'mock':
            return typeof (value as { openExchange?: unknown }).openExchange === 'function'
                ? undefined
                : 'must be a MockNetwork or a Recorder of tracewire/testing';
        case 'gunzip':
            return typeof value === 'boolean' || value === 'force' ? undefined : "must be true, false or 'force'";
        case 'json':
            return typeof value === 'boolean' || value === 'strict' || value === 'force'
                ? undefined
                : "must be true, false, 'strict' or 'force'";
        default:
            // Unknown keys are left alone: options objects are shared between request and read.
            return undefined;
    }
}

/**
 * Merges the client's defaults with the caller's options into a new object (the effective
 * options), with one lower-cased copy of the headers that the request may then change freely.
 */
export function mergeOptions(
    defaults: StoredDefaults | undefined,
    options: RequestAndReadOptions | undefined
): EffectiveOptions {
    const given = withoutUnset(options);
    // One literal per case, so every merged object gets its shape at once.
    if (defaults === undefined) {
        return { ...given, headers: copyHeaders(undefined, given?.headers) } as EffectiveOptions;
    }

    const merged = {
        ...defaults,
        ...given,
        headers: copyHeaders(defaults.headers, given?.headers)
    } as EffectiveOptions;
    if (defaults.timeouts !== undefined && given?.timeouts !== undefined) {
        merged.timeouts = mergePhaseTimeouts(defaults.timeouts, given.timeouts);
    }

    return merged;
}

/**
 * `options` without the keys set to null or undefined ("not set"), so that merging them over
 * defaults keeps the defaults. The same object when there is none (the usual case), else a copy.
 */
export function withoutUnset<T extends object>(options: T): WithoutNull<T>;
export function withoutUnset<T extends object>(options: T | null | undefined): WithoutNull<T> | undefined;
export function withoutUnset<T extends object>(options: T | null | undefined): WithoutNull<T> | undefined {
    if (options === undefined || options === null) {
        return undefined;
    }

    for (const key in options) {
        if (options[key] === undefined || options[key] === null) {
            const copy: Record<string, unknown> = {};
            for (const name in options) {
                const value = options[name];
                if (value !== undefined && value !== null) {
                    copy[name] = value;
                }
            }

            return copy as WithoutNull<T>;
        }
    }

    return options as WithoutNull<T>;
}

/**
 * The read options of a call: the caller's over the client's defaults, where an option the caller
 * leaves null or undefined keeps its default. Options that are not an object are left as they are,
 * for the read to refuse them by name.
 */
export function readOptionsOver(
    defaults: StoredDefaults | undefined,
    options: ReadOptions | null | undefined
): ReadOptions | null | undefined {
    return defaults === undefined || (typeof options !== 'object' && options !== undefined)
        ? options
        : { ...defaults, ...withoutUnset(options) };
}

/** Merges two header sets into a new object with lower-cased names; the second wins. */
export function copyHeaders(first: OutgoingHeaders | null | undefined, second: OutgoingHeaders | null | undefined) {
    const headers: Record<string, string | number | readonly string[]> = {};
    if (first !== undefined) {
        for (const name in first) {
            const value = first[name];
            // A null or undefined value is no header (and leaves a default of the same name in place).
            if (value !== undefined && value !== null) {
                headers[name.toLowerCase()] = value;
            }
        }
    }

    if (second !== undefined && second !== null && typeof second === 'object') {
        for (const name in second) {
            const value = second[name];
            if (value !== undefined && value !== null) {
                headers[name.toLowerCase()] = value;
            }
        }
    }

    return headers;
}

/** Headers must be safe to put on the wire: token names, no CR/LF/NUL in values. */
export function checkHeaders(headers: Record<string, unknown>): HttpError | undefined {
    for (const name in headers) {
        const value = headers[name];
        if (!isToken(name)) {
            return invalidOption(`Option headers has an invalid header name ${JSON.stringify(name)}`);
        }

        if (Array.isArray(value)) {
            for (const item of value) {
                if (!isSafeHeaderValue(item)) {
                    return invalidOption(`Option headers.${name} must not contain CR, LF or NUL characters`);
                }
            }
        } else if (!isSafeHeaderValue(value)) {
            return invalidOption(`Option headers.${name} must be a string or a number without CR, LF or NUL`);
        }
    }

    return undefined;
}

function isSafeHeaderValue(value: unknown): boolean {
    if (typeof value === 'number') {
        return true;
    }

    return typeof value === 'string' && !unsafeHeaderValue.test(value);
}

// The methods nearly every request uses, in both cases, to skip the token check and the upper-casing.
const commonMethods = new Map<string, string>();
for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    commonMethods.set(method, method);
    commonMethods.set(method.toLowerCase(), method);
}

/** The method upper-cased, or the error naming what is wrong with it. */
export function normalizeMethod(method: unknown): string | HttpError {
    if (typeof method === 'string') {
        const known = commonMethods.get(method);
        if (known !== undefined) {
            return known;
        }

        if (isToken(method)) {
            return method.toUpperCase();
        }
    }

    return invalidOption(`Method must be an HTTP method name, got ${JSON.stringify(method)}`);
}

/** Validates the options given to `defaults()`, which throws rather than rejects: it returns no promise. */
export function assertDefaults(options: unknown): asserts options is DefaultsOptions {
    if (typeof options !== 'object' || options === null) {
        throw new TypeError('Client defaults must be an object');
    }

    const { agents: _agents, events, ...rest } = options as DefaultsOptions;
    if (events !== undefined && events !== null && typeof events !== 'boolean') {
        throw new TypeError(`Option events must be a boolean, got ${typeof events}`);
    }

    const problem =
        checkOptions(rest) ?? (rest.headers ? checkHeaders(copyHeaders(rest.headers, undefined)) : undefined);
    if (problem !== undefined) {
        throw problem;
    }
}
