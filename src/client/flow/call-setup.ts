import type { HttpError } from '../../errors/index.js';
import { acceptEncodingOffer } from '../bodies/content-decoding.js';
import { jsonAcceptFor } from '../bodies/problem-body.js';
import { invalidOption } from '../contract/errors.js';
import type { EffectiveOptions, RequestAndReadOptions } from '../contract/types.js';
import { checkHeaders, checkOptions, mergeOptions, normalizeMethod, type StoredDefaults } from '../options/options.js';
import { proxyConflict } from '../options/proxy.js';
import { cachedDestination, type Destination, resolveUri } from '../wire/destination.js';

/** A call made ready to send: its method, where it goes, and its options merged over the client's. */
export interface PreparedCall {
    readonly method: string;
    /** A URL, or the cached destination of a string URI. */
    readonly target: URL | Destination;
    readonly options: EffectiveOptions;
}

/**
 * Checks a call of `request()` or of a helper and merges its options over the client's defaults:
 * the call made ready, or the first problem as an HttpError naming what was wrong. `helper`: the
 * call's response is read by a helper, with the call's `json`.
 */
export function prepareCall(
    method: unknown,
    uri: unknown,
    options: RequestAndReadOptions | undefined,
    defaults: StoredDefaults | undefined,
    helper: boolean
): PreparedCall | HttpError {
    const normalizedMethod = normalizeMethod(method);
    const problem =
        (typeof normalizedMethod === 'string' ? undefined : normalizedMethod) ??
        (options === undefined || options === null
            ? undefined
            : typeof options === 'object'
              ? checkOptions(options as Record<string, unknown>)
              : invalidOption('Request options must be an object'));
    if (problem !== undefined) {
        return problem;
    }

    const merged = mergeOptions(defaults, options ?? undefined);
    if (merged.gunzip && merged.headers['accept-encoding'] === undefined) {
        // The caller will decode: offer what read() decodes here (@hapi/wreck offers gzip alone).
        merged.headers['accept-encoding'] = acceptEncodingOffer;
    }

    if (helper && merged.json && merged.headers.accept === undefined) {
        // A helper that reads JSON asks for problem documents beside it; the caller's own `accept` (any case) wins.
        merged.headers.accept = jsonAcceptFor(merged.json) as string;
    }

    const target =
        typeof uri === 'string'
            ? cachedDestination(uri, merged.baseUrl ?? socketBaseFor(uri, merged.socketPath))
            : resolveUri(uri, merged.baseUrl);
    if (target instanceof Error) {
        return target;
    }

    const conflict =
        merged.agent && merged.rejectUnauthorized !== undefined
            ? invalidOption(
                  'Option agent cannot be combined with rejectUnauthorized: set rejectUnauthorized on the agent instead'
              )
            : (checkHeaders(merged.headers) ?? proxyConflict(merged));
    if (conflict !== undefined) {
        return conflict;
    }

    return { method: normalizedMethod as string, target, options: merged };
}

/**
 * Over a UNIX socket the URI may be a path alone (`/containers/json`, as for the Docker API): it is
 * then read against `http://localhost`, which is also the `host` header sent.
 */
function socketBaseFor(uri: string, socketPath: string | undefined): string | undefined {
    return socketPath !== undefined && uri.charCodeAt(0) === 47 ? 'http://localhost' : undefined;
}
