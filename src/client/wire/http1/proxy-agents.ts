import type { ClientRequest, IncomingHttpHeaders, RequestOptions as NodeRequestOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { checkServerIdentity, PeerCertificate } from 'node:tls';
import type { HttpProxyAgent } from 'http-proxy-agent';
import type { HttpsProxyAgent } from 'https-proxy-agent';
import { net, tls } from '../../../common/node-modules.js';
import type { Agents } from '../../contract/types.js';
import { originTlsOptions } from '../connection-settings.js';
import type { Destination } from '../destination.js';
import type { ProxyRoute } from '../proxy.js';
import { proxyPackages } from '../proxy-packages.js';

/**
 * A hop's proxy route on HTTP/1.1 (wire/proxy.ts decides the route): the proxy agents
 * (`http-proxy-agent` for http targets, which sends them to the proxy in absolute form;
 * `https-proxy-agent` for https targets, through a CONNECT tunnel with TLS end to end), one pool per
 * proxy, and what the request tells of its way through.
 */

/** Sends the request of `nodeOptions` through the route's proxy: its agent, and for a tunnel the origin's TLS settings. */
export function throughProxy(
    nodeOptions: NodeRequestOptions,
    destination: Destination,
    route: ProxyRoute,
    agents: Agents
): void {
    if (route.tunnel) {
        carryOriginTls(nodeOptions, destination);
    }

    nodeOptions.agent = proxyAgent(agents, route.url, route.tunnel, route.credential);
    // The proxy agents tell a tunnel from a forwarded request by the scheme.
    nodeOptions.protocol = destination.protocol;
}

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

    const host = destination.hostname;
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
