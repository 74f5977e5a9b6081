import type { RequestOptions as NodeRequestOptions } from 'node:http';
import type { Destination } from './destination.js';
import type { Agents, EffectiveOptions } from './types.js';

/**
 * Marks the options handed to `http(s).request()` so `@opentelemetry/instrumentation-http` can skip
 * our requests (`ignoreOutgoingRequestHook`): the client's own events already make their span.
 */
export const clientRequestMarker = Symbol.for('tracewire.client');

/** The options of `http(s).request()`: only the keys that apply, so Node's defaults stay in force. */
export function toNodeOptions(
    destination: Destination,
    method: string,
    headers: EffectiveOptions['headers'],
    options: EffectiveOptions,
    agents: Agents
): NodeRequestOptions {
    const isHttps = destination.isHttps;
    const nodeOptions: NodeRequestOptions & { [clientRequestMarker]: true; [key: string]: unknown } = {
        protocol: destination.protocol,
        hostname: destination.hostname,
        port: destination.port,
        path: destination.path,
        method,
        headers: headers as NodeRequestOptions['headers'],
        agent:
            options.agent !== undefined
                ? options.agent
                : isHttps
                  ? options.rejectUnauthorized === false
                      ? agents.httpsAllowUnauthorized
                      : agents.https
                  : agents.http,
        [clientRequestMarker]: true
    };

    if (destination.auth !== undefined) {
        nodeOptions.auth = destination.auth;
    }

    if (isHttps) {
        if (options.rejectUnauthorized !== undefined) {
            nodeOptions.rejectUnauthorized = options.rejectUnauthorized;
        }

        if (options.ciphers !== undefined) {
            nodeOptions.ciphers = options.ciphers;
        }

        if (options.secureProtocol !== undefined) {
            nodeOptions.secureProtocol = options.secureProtocol;
        }
    }

    if (options.socketPath !== undefined) {
        nodeOptions.socketPath = options.socketPath;
    }

    if (options.lookup !== undefined) {
        nodeOptions.lookup = options.lookup;
    }

    if (options.family !== undefined) {
        nodeOptions.family = options.family;
    }

    if (options.hints !== undefined) {
        nodeOptions.hints = options.hints;
    }

    return nodeOptions;
}
