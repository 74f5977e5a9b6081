import type { RequestOptions as NodeRequestOptions } from 'node:http';
import { http, https } from '../../../common/node-modules.js';
import type { Agents, EffectiveOptions } from '../../contract/types.js';
import { agentFor, putRequestTls, putResolution } from '../connection-settings.js';
import type { Destination } from '../destination.js';

/**
 * Marks the headers object of the options handed to `http(s).request()` so
 * `@opentelemetry/instrumentation-http` can skip our requests (`ignoreOutgoingRequestHook`): the
 * client's own events already make their span. On the headers, not on the options themselves, which
 * Node copies key by key (see `toNodeOptions`); the options a hook is given share the headers object.
 */
export const clientRequestMarker = Symbol.for('tracewire.client');

/**
 * The options of `http(s).request()`: only the keys that apply, so Node's defaults stay in force.
 * Node copies this object three times per request (into the request, then with the agent's options
 * into dictionaries for `addRequest()`), so every key costs on each request, and past six of ours a
 * dictionary outgrows its first table (one key more cost a GET as much again as the rest of the
 * client's own work): the host goes in as `host` (Node would add it beside `hostname`), the method
 * only when it is not Node's default GET, and `protocol` only where someone reads it.
 */
export function toNodeOptions(
    destination: Destination,
    method: string,
    headers: EffectiveOptions['headers'],
    options: EffectiveOptions,
    agents: Agents
): NodeRequestOptions {
    const isHttps = destination.isHttps;
    const agent = agentFor(destination, options, agents);
    (headers as Record<symbol, unknown>)[clientRequestMarker] = true;
    const host = destination.hostname;
    const port = destination.port;
    const path = destination.path;
    const nodeHeaders = headers as NodeRequestOptions['headers'];
    const nodeOptions: NodeRequestOptions & { [key: string]: unknown } =
        method === 'GET'
            ? { host, port, path, headers: nodeHeaders, agent }
            : { host, port, path, method, headers: nodeHeaders, agent };

    if (!isNodeAgent(agent)) {
        // Node checks the scheme against the agent's own; an agent of another make (agent-base's proxy
        // agents, a caller's subclass) may read it to tell a TLS endpoint.
        nodeOptions.protocol = destination.protocol;
    }

    if (destination.auth !== undefined) {
        nodeOptions.auth = destination.auth;
    }

    if (isHttps) {
        putRequestTls(options, nodeOptions);
    }

    if (options.socketPath !== undefined) {
        nodeOptions.socketPath = options.socketPath;
    }

    putResolution(options, nodeOptions);
    return nodeOptions;
}

/** An agent made by `node:http` or `node:https` themselves (or none: `false` makes Node create one). */
function isNodeAgent(agent: NodeRequestOptions['agent']): boolean {
    if (typeof agent !== 'object' || agent === null) {
        return true;
    }

    const make = agent.constructor;
    return make === http.Agent || make === https.Agent;
}
