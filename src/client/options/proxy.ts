import type { HttpError } from '../../errors/index.js';
import { invalidOption } from '../contract/errors.js';
import type { EffectiveOptions } from '../contract/types.js';
import { hasDecodableCredentials } from './values.js';

/** The grammar of the `proxy` option (README "Proxies"); which proxy a hop goes through is the wire's (wire/proxy.ts). */

/** Why a `proxy` option value cannot be used, or undefined when it can (null and false mean none). */
export function proxyProblem(value: unknown): string | undefined {
    if (value === null || typeof value === 'boolean') {
        return undefined;
    }

    if (typeof value !== 'string' && !(value instanceof URL)) {
        return `must be a proxy URL (a string or a URL), true (from the environment) or false, got ${typeof value}`;
    }

    const url = parseProxy(value);
    return typeof url === 'string' ? url : undefined;
}

/** The proxy URL, or why it cannot be one (only http: and https: proxies are supported). */
export function parseProxy(value: string | URL): URL | string {
    let url: URL;
    try {
        url = new URL(value);
    } catch {
        return 'must be a valid URL such as http://proxy.internal:3128';
    }

    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return `must be an http: or https: URL, got ${url.protocol}`;
    }

    return hasDecodableCredentials(url) ? url : 'has a user name or password that is not valid percent-encoding';
}

/** True when `proxy` asks for a proxy (an URL or the environment). */
export function usesProxy(proxy: EffectiveOptions['proxy']): boolean {
    return proxy !== undefined && proxy !== null && proxy !== false;
}

/** The options that make no sense with a proxy, checked once per request. */
export function proxyConflict(options: EffectiveOptions): HttpError | undefined {
    if (!usesProxy(options.proxy)) {
        return undefined;
    }

    if (options.socketPath !== undefined && options.socketPath !== null) {
        return invalidOption('Option proxy cannot be combined with socketPath: a UNIX socket is a direct connection');
    }

    if (options.agent !== undefined && options.agent !== null) {
        return invalidOption('Option proxy cannot be combined with agent: the proxy has its own connection pool');
    }

    return undefined;
}
