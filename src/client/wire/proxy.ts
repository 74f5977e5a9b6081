import type { IncomingHttpHeaders } from 'node:http';
import type { HttpError } from '../../errors/index.js';
import { badUpstream, type CodedError, invalidOption, requestError } from '../contract/errors.js';
import type { EffectiveOptions, HopResponse } from '../contract/types.js';
import { parseProxy } from '../options/proxy.js';
import type { Destination } from './destination.js';
import { proxyPackages } from './proxy-packages.js';

/**
 * The `proxy` request option at work (README "Proxies"; its grammar is options/proxy.ts): which proxy
 * each hop goes through — the option's URL, or the environment's `HTTP(S)_PROXY` and `NO_PROXY` read
 * with `proxy-from-env` (loaded by the first hop that needs it: proxy-packages.ts) — where a proxy
 * credential may go, and how a proxy's failures are told. How a transport reaches the proxy is its
 * own: `http1/proxy-agents.ts` for HTTP/1.1.
 */

/** A hop's way through its proxy, and what it learns of it. One object per hop. */
export interface ProxyRoute {
    readonly url: URL;
    /** The proxy's URL for messages: credentials replaced by `***`. */
    readonly name: string;
    /** True for an https target (a CONNECT tunnel); false for an http one (absolute-form requests). */
    readonly tunnel: boolean;
    /** The proxy's host name (or address, without brackets): what a new connection to it resolves. */
    readonly hostname: string;
    /** The caller's `proxy-authorization`, for a tunnel's CONNECT (an http target's request carries it itself). */
    readonly credential: string | number | readonly string[] | undefined;
    /** The status of the proxy's answer to CONNECT, once it came (only on a new tunnel). */
    connectStatus: number | undefined;
    connectStatusText: string | undefined;
    connectHeaders: IncomingHttpHeaders | undefined;
    /** True once the exchange has its connection: errors from then on are not the proxy's being unreachable. */
    connected: boolean;
}

const proxyHeader = 'proxy-authorization';

/**
 * The proxy route of one hop (undefined: direct, `NO_PROXY` exempts its host), or why it cannot be
 * taken. Decided anew for each hop: a redirect may lead to a host `NO_PROXY` exempts, or the other way round.
 */
export function proxyRouteOf(
    option: string | URL | true,
    destination: Destination,
    headers: EffectiveOptions['headers']
): ProxyRoute | HttpError | undefined {
    const url = proxyOf(option, destination);
    if (!(url instanceof URL)) {
        return url;
    }

    return {
        url,
        name: redactedProxy(url),
        tunnel: destination.isHttps,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        credential: destination.isHttps ? headers[proxyHeader] : undefined,
        connectStatus: undefined,
        connectStatusText: undefined,
        connectHeaders: undefined,
        connected: false
    };
}

/**
 * The headers a hop sends, a proxy credential never among those its origin sees: an http target's
 * request goes to the proxy and keeps it (the proxy consumes it); a tunnel carries it on the CONNECT
 * instead; a direct hop drops it.
 */
export function originHeaders(
    headers: EffectiveOptions['headers'],
    route: ProxyRoute | undefined
): EffectiveOptions['headers'] {
    if (headers[proxyHeader] === undefined || (route !== undefined && !route.tunnel)) {
        return headers;
    }

    const { [proxyHeader]: _dropped, ...rest } = headers;
    return rest;
}

/** The proxy of one hop: the option's URL, or from the environment for `true` (NO_PROXY applies). */
function proxyOf(proxy: string | URL | true, destination: Destination): URL | HttpError | undefined {
    if (proxy !== true) {
        return parseProxy(proxy) as URL;
    }

    const fromEnvironment = proxyPackages().getProxyForUrl(destination.href);
    if (fromEnvironment === '') {
        return undefined;
    }

    const variable = proxyVariable(destination.isHttps ? 'https' : 'http');
    // proxy-from-env gives a value without a scheme the target's scheme; like curl, take it as an http proxy.
    const raw = variable === undefined ? undefined : process.env[variable];
    const url = parseProxy(raw !== undefined && !raw.includes('://') ? `http://${raw}` : fromEnvironment);
    if (typeof url === 'string') {
        return invalidOption(`The proxy from the environment (${variable}) ${url}`);
    }

    return url;
}

/** The variable proxy-from-env took the proxy from: lower case first, as it reads them. */
function proxyVariable(scheme: 'http' | 'https'): string | undefined {
    for (const name of [`${scheme}_proxy`, `${scheme.toUpperCase()}_PROXY`, 'all_proxy', 'ALL_PROXY']) {
        if (process.env[name]) {
            return name;
        }
    }

    return undefined;
}

/** The proxy URL for messages: scheme, host and port, with `***` for any credentials. */
export function redactedProxy(url: URL): string {
    const credentials = url.username !== '' || url.password !== '' ? '***@' : '';
    return `${url.protocol}//${credentials}${url.host}`;
}

/**
 * The 502 for a response that is the proxy's refusal rather than the origin's answer: a CONNECT
 * answered with anything but 200 (the agent hands its response on as if it were the origin's), or
 * a 407 to an absolute-form request. Undefined for a response from the origin.
 */
export function proxyRefusal(route: ProxyRoute, res: HopResponse): HttpError | undefined {
    if (route.tunnel) {
        return tunnelRefusal(route);
    }

    return res.statusCode === 407 ? refusal(route, 407, res.statusMessage ?? '', res.headers) : undefined;
}

/** The 502 for a tunnel whose CONNECT the proxy answered with anything but 200; undefined for a tunnel it opened. */
export function tunnelRefusal(route: ProxyRoute): HttpError | undefined {
    const statusCode = route.connectStatus;
    return statusCode === undefined || statusCode === 200
        ? undefined
        : refusal(route, statusCode, route.connectStatusText ?? '', route.connectHeaders ?? {});
}

function refusal(route: ProxyRoute, statusCode: number, statusText: string, headers: IncomingHttpHeaders): HttpError {
    const what = route.tunnel ? 'the tunnel' : 'the request';
    return badUpstream(`Proxy ${route.name} refused ${what} with ${statusCode} ${statusText}`.trimEnd(), {
        proxy: route.name,
        statusCode,
        statusText,
        headers
    });
}

/** The 502 for a network error: naming the proxy when it could not be reached, as `requestError` otherwise. */
export function proxyRequestError(route: ProxyRoute, err: CodedError): HttpError {
    if (route.connected) {
        return requestError(err);
    }

    // The code stays readable where it always is (data.code), for retries and error attributes.
    const unreachable: CodedError = new Error(`proxy ${route.name} could not be reached: ${err.message}`, {
        cause: err
    });
    if (err.code !== undefined) {
        unreachable.code = err.code;
    }
    return requestError(unreachable);
}
