import type { HttpError } from '../../errors/index.js';
import { badUpstream } from '../contract/errors.js';
import type { RedirectHop } from '../contract/failure-data.js';
import type { EffectiveOptions } from '../contract/types.js';

// Credentials meant for one origin only: never forwarded to another unless beforeRedirect puts them back.
const credentialHeaders = ['authorization', 'cookie', 'proxy-authorization'];

// Headers describing a body; they go when a redirect drops the payload.
const bodyHeaders = ['content-length', 'content-type', 'content-encoding', 'transfer-encoding'];

/**
 * The method to follow a redirect with, or null when the status is not followed: 301/302 use
 * `redirectMethod` or the original method, 303 becomes GET only with `redirect303`, 307/308 keep
 * the method.
 */
export function redirectMethodFor(statusCode: number, method: string, options: EffectiveOptions): string | null {
    switch (statusCode) {
        case 301:
        case 302:
            return options.redirectMethod ?? method;
        case 303:
            return options.redirect303 === true ? 'GET' : null;
        case 307:
        case 308:
            return method;
        default:
            return null;
    }
}

/** The redirect target resolved against the current URL, or the 502 explaining why it cannot be followed. */
export function resolveRedirect(
    current: string,
    location: string | undefined,
    trace: readonly RedirectHop[]
): URL | HttpError {
    if (!location) {
        return badUpstream('Received redirection without location', trace);
    }

    let target: URL;
    try {
        target = new URL(location, current);
    } catch (err) {
        return badUpstream(`Invalid redirect: ${JSON.stringify(location)}`, err);
    }

    // Only http(s): a redirect must not turn into a file: or data: fetch.
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        return badUpstream(`Invalid redirect: unsupported protocol ${target.protocol}`);
    }

    return target;
}

/**
 * The options of the next hop: a copy with its own headers, one redirect less, the payload kept
 * unless the redirect turns into a GET or HEAD (a 303, or `redirectMethod`), and the credential
 * headers dropped when the origin (scheme, host or port) changes.
 */
export function redirectOptions(
    options: EffectiveOptions,
    redirectMethod: string,
    fromOrigin: string,
    toOrigin: string
): EffectiveOptions {
    const next: EffectiveOptions = { ...options, headers: { ...options.headers } };
    next.redirects = (options.redirects as number) - 1;
    // A kept stream payload is sent again from the copy the request kept (payload-replay.ts).
    if (redirectMethod === 'GET' || redirectMethod === 'HEAD') {
        delete next.payload;
        for (const name of bodyHeaders) {
            delete next.headers[name];
        }
    }

    if (fromOrigin !== toOrigin) {
        for (const name of credentialHeaders) {
            delete next.headers[name];
        }
    }

    return next;
}
