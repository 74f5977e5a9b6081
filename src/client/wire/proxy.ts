import type {
    ClientRequest,
    IncomingHttpHeaders,
    IncomingMessage,
    RequestOptions as NodeRequestOptions
} from 'node:http';
import type { Socket } from 'node:net';
import type { checkServerIdentity, PeerCertificate } from 'node:tls';
import type { HttpProxyAgent } from 'http-proxy-agent';
import type { HttpsProxyAgent } from 'https-proxy-agent';
import { net, tls } from '../../common/node-modules.js';
import type { HttpError } from '../../errors/index.js';
import { badUpstream, type CodedError, invalidOption, requestError } from '../contract/errors.js';
import type { Agents, EffectiveOptions } from '../contract/types.js';
import { parseProxy, usesProxy } from '../options/proxy.js';
import type { Destination } from './destination.js';
import { proxyPackages } from './proxy-packages.js';

/**
 * The `proxy` request option: the proxy agents (`http-proxy-agent` for http targets, which sends
 * them to the proxy in absolute form; `https-proxy-agent` for https targets, through a CONNECT
 * tunnel with TLS end to end) and the environment (`proxy-from-env` for `HTTP(S)_PROXY` and
 * `NO_PROXY`), all three loaded by the first hop that needs them (proxy-packages.ts). This module
 * decides, per hop, whether and through which proxy a request goes.
 */

/** What a hop going through a proxy needs to report on it. One object per hop. */
export interface ProxyRoute {
    /** The proxy's URL for messages: credentials replaced by `***`. */
    readonly name: string;
    /** True for an https target (a CONNECT tunnel); false for an http one (absolute-form requests). */
    readonly tunnel: boolean;
    /** The proxy's host name (or address, without brackets): what a new connection to it resolves. */
    readonly hostname: string;
    /** The status of the proxy's answer to CONNECT, once it came (only on a new tunnel). */
    connectStatus: number | undefined;
    connectStatusText: string | undefined;
    connectHeaders: IncomingHttpHeaders | undefined;
    /** True once the request has a socket: errors from then on are not the proxy's being unreachable. */
    connected: boolean;
}

const proxyHeader = 'proxy-authorization';

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

/**
 * Routes a hop through its proxy, if any: sets the proxy's agent on `nodeOptions` and moves a
 * caller's `proxy-authorization` header where only the proxy sees it. Returns the route to watch
 * (undefined for a direct hop) or the error that stops the hop.
 */
export function routeThroughProxy(
    nodeOptions: NodeRequestOptions,
    destination: Destination,
    proxy: string | URL | true,
    agents: Agents
): ProxyRoute | HttpError | undefined {
    const url = proxyOf(proxy, destination);
    const headers = nodeOptions.headers as Record<string, string | number | readonly string[]>;
    const credential = headers[proxyHeader];
    if (credential !== undefined) {
        // A proxy credential: never for an origin. An http target's request goes to the proxy and keeps
        // it (the proxy consumes it); a tunnel carries it on the CONNECT; a direct hop drops it.
        if (url === undefined || !(url instanceof URL) || destination.isHttps) {
            const { [proxyHeader]: _dropped, ...rest } = headers;
            nodeOptions.headers = rest as NodeRequestOptions['headers'];
        }
    }

    if (!(url instanceof URL)) {
        return url;
    }

    if (destination.isHttps) {
        carryOriginTls(nodeOptions, destination);
    }

    nodeOptions.agent = proxyAgent(agents, url, destination.isHttps, destination.isHttps ? credential : undefined);
    // The proxy agents tell a tunnel from a forwarded request by the scheme.
    nodeOptions.protocol = destination.protocol;
    return {
        name: redactedProxy(url),
        tunnel: destination.isHttps,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        connectStatus: undefined,
        connectStatusText: undefined,
        connectHeaders: undefined,
        connected: false
    };
}

/**
 * The settings of a TLS connection to the origin, as `tls.connect()` takes them: what a custom
 * https agent carries to trust an in-house CA, present a client certificate or pin the protocol.
 */
const originTlsOptions = [
    'ALPNProtocols',
    'ca',
    'cert',
    'checkServerIdentity',
    'ciphers',
    'clientCertEngine',
    'crl',
    'dhparam',
    'ecdhCurve',
    'honorCipherOrder',
    'key',
    'maxVersion',
    'minDHSize',
    'minVersion',
    'passphrase',
    'pfx',
    'privateKeyEngine',
    'privateKeyIdentifier',
    'rejectUnauthorized',
    'secureContext',
    'secureOptions',
    'secureProtocol',
    'servername',
    'session',
    'sessionIdContext',
    'sigalgs'
] as const;

/**
 * Puts the TLS settings of the https agent the hop would use without a proxy on its options: the
 * tunnel's agent makes the TLS connection to the origin from them, so the origin is checked and
 * greeted exactly as on a direct connection. Settings of the request itself win, as with Node's agents.
 */
function carryOriginTls(nodeOptions: NodeRequestOptions, destination: Destination): void {
    const options = nodeOptions as Record<string, unknown>;
    const agentOptions = (nodeOptions.agent as { options?: Record<string, unknown> } | undefined)?.options;
    for (const name of originTlsOptions) {
        if (options[name] === undefined && agentOptions?.[name] !== undefined) {
            options[name] = agentOptions[name];
        }
    }

    const host = destination.hostname.replace(/^\[|\]$/g, '');
    if (options.servername === undefined && net.isIP(host) !== 0 && options.rejectUnauthorized !== false) {
        // The tunnel's agent names a host name as the server name, but connects to an IP origin without
        // its host, so TLS would check the certificate against another name: check it against the IP.
        // Only here, where the check matters: since Node 22 a per-request checkServerIdentity keeps the
        // connection out of the pool.
        const check =
            (options.checkServerIdentity as typeof checkServerIdentity | undefined) ?? tls.checkServerIdentity;
        options.checkServerIdentity = (_name: string, certificate: PeerCertificate) => check(host, certificate);
    }
}

/** The proxy URL for messages: scheme, host and port, with `***` for any credentials. */
export function redactedProxy(url: URL): string {
    const credentials = url.username !== '' || url.password !== '' ? '***@' : '';
    return `${url.protocol}//${credentials}${url.host}`;
}

type ProxyAgent = HttpProxyAgent<string> | HttpsProxyAgent<string>;

// One pool per proxy (and per CONNECT credential), kept alive like the direct ones, for as long as
// the client's agents live: clients derived with defaults() share them.
const poolsByAgents = new WeakMap<Agents, Map<string, ProxyAgent>>();

/**
 * How many proxy pools a client keeps. Proxies are few, but credentials can vary per request (a
 * rotating token in the URL or the header): the least recently used pool beyond this goes, so
 * nothing grows without bound.
 */
export const proxyPoolLimit = 64;

function proxyAgent(
    agents: Agents,
    url: URL,
    isHttps: boolean,
    credential: string | number | readonly string[] | undefined
): ProxyAgent {
    let pools = poolsByAgents.get(agents);
    if (pools === undefined) {
        pools = new Map();
        poolsByAgents.set(agents, pools);
    }

    const key = `${isHttps ? 'tunnel' : 'forward'} ${url.href}${credential === undefined ? '' : `\n${String(credential)}`}`;
    let agent = pools.get(key);
    if (agent !== undefined) {
        // Most recently used last: the Map's order is the eviction order.
        pools.delete(key);
        pools.set(key, agent);
        return agent;
    }

    const options = { keepAlive: true, maxSockets: Number.POSITIVE_INFINITY };
    const { HttpProxyAgent, HttpsProxyAgent } = proxyPackages();
    agent = isHttps
        ? new HttpsProxyAgent(
              url,
              credential === undefined
                  ? options
                  : { ...options, headers: { 'Proxy-Authorization': String(credential) } }
          )
        : new HttpProxyAgent(url, options);
    pools.set(key, agent);
    if (pools.size > proxyPoolLimit) {
        const [oldestKey, oldest] = pools.entries().next().value as [string, ProxyAgent];
        pools.delete(oldestKey);
        retire(oldest);
    }

    return agent;
}

/** Closes a pool's idle connections; those in use close when their request is done. */
function retire(agent: ProxyAgent): void {
    agent.keepAlive = false;
    for (const sockets of Object.values(agent.freeSockets)) {
        for (const socket of sockets ?? []) {
            socket.destroy();
        }
    }
}

/** Follows a proxied request: whether it got a socket, and the proxy's answer to CONNECT. */
export function watchProxy(req: ClientRequest, route: ProxyRoute): void {
    req.once('socket', (socket: Socket) => {
        // A tunnel's socket comes once CONNECT succeeded, a kept-alive one was connected before. A new
        // connection to the proxy is only made once it is established, TLS handshake included for an
        // https:// proxy: an untrusted proxy certificate is the proxy's failure, not the origin's.
        if (route.tunnel || req.reusedSocket || (!socket.connecting && !(socket instanceof tls.TLSSocket))) {
            route.connected = true;
            return;
        }

        socket.once(socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', () => {
            route.connected = true;
        });
    });
    if (route.tunnel) {
        req.once(
            'proxyConnect',
            (connect: { statusCode?: number; statusText?: string; headers?: IncomingHttpHeaders }) => {
                route.connectStatus = connect.statusCode;
                route.connectStatusText = connect.statusText;
                route.connectHeaders = connect.headers;
            }
        );
    }
}

/**
 * The 502 for a response that is the proxy's refusal rather than the origin's answer: a CONNECT
 * answered with anything but 200 (the agent hands its response on as if it were the origin's), or
 * a 407 to an absolute-form request. Undefined for a response from the origin.
 */
export function proxyRefusal(route: ProxyRoute, res: IncomingMessage): HttpError | undefined {
    let statusCode: number;
    let statusText: string;
    let headers: IncomingHttpHeaders;
    if (route.tunnel) {
        if (route.connectStatus === undefined || route.connectStatus === 200) {
            return undefined;
        }

        statusCode = route.connectStatus;
        statusText = route.connectStatusText ?? '';
        headers = route.connectHeaders ?? {};
    } else {
        if (res.statusCode !== 407) {
            return undefined;
        }

        statusCode = 407;
        statusText = res.statusMessage ?? '';
        headers = res.headers;
    }

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
