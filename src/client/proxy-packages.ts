import { createRequire } from 'node:module';
import type { HttpProxyAgent } from 'http-proxy-agent';
import type { HttpsProxyAgent } from 'https-proxy-agent';
import type { getProxyForUrl } from 'proxy-from-env';

/**
 * The packages behind the `proxy` option, loaded the first time a hop goes through a proxy rather
 * than with the client. With what they load in turn they hold about 0.9 MB of a process's heap,
 * more than the client itself, and every full garbage collection of a process walks that, in
 * services most of which never use a proxy (in a client downloading large bodies, whose buffers
 * bring a full collection every few requests, that was 15% of its CPU).
 *
 * They are loaded with require(), synchronously, where the hop decides its route: the agent
 * packages are ES modules, which require() loads on every Node line the package supports.
 */
export interface ProxyPackages {
    readonly HttpProxyAgent: typeof HttpProxyAgent;
    readonly HttpsProxyAgent: typeof HttpsProxyAgent;
    readonly getProxyForUrl: typeof getProxyForUrl;
}

const load = createRequire(import.meta.url);
let packages: ProxyPackages | undefined;

/** The proxy packages, loaded on the first call. */
export function proxyPackages(): ProxyPackages {
    packages ??= {
        HttpProxyAgent: (load('http-proxy-agent') as typeof import('http-proxy-agent')).HttpProxyAgent,
        HttpsProxyAgent: (load('https-proxy-agent') as typeof import('https-proxy-agent')).HttpsProxyAgent,
        getProxyForUrl: (load('proxy-from-env') as typeof import('proxy-from-env')).getProxyForUrl
    };
    return packages;
}
