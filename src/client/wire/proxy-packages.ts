import type { HttpProxyAgent } from 'http-proxy-agent';
import type { HttpsProxyAgent } from 'https-proxy-agent';
import type { getProxyForUrl } from 'proxy-from-env';
import { requirePackage } from '../../common/node-modules.js';

/**
 * The packages behind the `proxy` option, loaded the first time a hop goes through a proxy rather
 * than with the client. With what they load in turn they hold about 0.25 MB of a process's heap,
 * which every full garbage collection of the process walks, in services most of which never use a
 * proxy (README, "Import footprint").
 *
 * They are loaded with require(), synchronously, where the hop decides its route: the agent
 * packages are ES modules, which require() loads on every Node line the package supports.
 */
export interface ProxyPackages {
    readonly HttpProxyAgent: typeof HttpProxyAgent;
    readonly HttpsProxyAgent: typeof HttpsProxyAgent;
    readonly getProxyForUrl: typeof getProxyForUrl;
}

let packages: ProxyPackages | undefined;

/** The proxy packages, loaded on the first call. */
export function proxyPackages(): ProxyPackages {
    packages ??= {
        HttpProxyAgent: (requirePackage('http-proxy-agent') as typeof import('http-proxy-agent')).HttpProxyAgent,
        HttpsProxyAgent: (requirePackage('https-proxy-agent') as typeof import('https-proxy-agent')).HttpsProxyAgent,
        getProxyForUrl: (requirePackage('proxy-from-env') as typeof import('proxy-from-env')).getProxyForUrl
    };
    return packages;
}
