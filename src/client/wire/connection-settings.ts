import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { net } from '../../common/node-modules.js';
import type { Agents, EffectiveOptions } from '../contract/types.js';
import { answeringLater } from './deferred-lookup.js';
import type { Destination } from './destination.js';

/**
 * Where a hop's connection settings come from, for every transport: the agent its options choose
 * (the client's pools, or the caller's `agent`), which carries the TLS settings a caller gave it (a
 * certificate authority, a client certificate), and the request's own connection options over them
 * (its TLS options, how it resolves names). Each of those options is named here and nowhere else: the
 * HTTP/1.1 request's options, the HTTP/2 connection and the key of the sessions that may share one
 * take them from here, so a new one is added here alone.
 */

/** The agent a hop's options choose: `agent`, else the client's pool for its scheme and `rejectUnauthorized`. */
export function agentFor(
    destination: Destination,
    options: EffectiveOptions,
    agents: Agents
): HttpAgent | HttpsAgent | false {
    if (options.agent !== undefined) {
        return options.agent;
    }

    if (!destination.isHttps) {
        return agents.http;
    }

    return options.rejectUnauthorized === false ? agents.httpsAllowUnauthorized : agents.https;
}

/**
 * The settings of a TLS connection to the origin, as `tls.connect()` takes them: what a custom
 * https agent carries to trust an in-house CA, present a client certificate or pin the protocol.
 */
export const originTlsOptions = [
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
 * The settings of a TLS connection to `destination` that a transport makes itself (not through an
 * agent), as `tls.connect()` takes them: the agent's TLS settings, the request's over them, and the
 * server name to greet (none for an IP address, which TLS does not send).
 */
export function tlsSettingsFor(
    destination: Destination,
    options: EffectiveOptions,
    agent: HttpAgent | HttpsAgent | false
): Record<string, unknown> {
    const settings: Record<string, unknown> = {};
    const agentOptions = agent === false ? undefined : (agent as { options?: Record<string, unknown> }).options;
    if (agentOptions !== undefined) {
        for (const name of originTlsOptions) {
            if (agentOptions[name] !== undefined) {
                settings[name] = agentOptions[name];
            }
        }
    }

    putRequestTls(options, settings);
    if (settings.servername === undefined && net.isIP(destination.hostname) === 0) {
        settings.servername = destination.hostname;
    }

    return settings;
}

/**
 * Sets on `into` the request's own TLS options that are set (https only): as Node's agents do, they
 * win over the agent's. One `if` per option, no loop: `http1/node-options.ts` calls this for every
 * request, and the keys set are the keys Node copies.
 */
export function putRequestTls(options: EffectiveOptions, into: Record<string, unknown>): void {
    if (options.rejectUnauthorized !== undefined) {
        into.rejectUnauthorized = options.rejectUnauthorized;
    }

    if (options.ciphers !== undefined) {
        into.ciphers = options.ciphers;
    }

    if (options.secureProtocol !== undefined) {
        into.secureProtocol = options.secureProtocol;
    }
}

/** The request's TLS options as part of a key: connections that differ in them are not shared. */
export function requestTlsKey(options: EffectiveOptions): string {
    return `${String(options.rejectUnauthorized)} ${options.ciphers ?? ''} ${options.secureProtocol ?? ''}`;
}

/**
 * Sets on `into` the options that say how a host name is resolved, those that are set: the `lookup`
 * function, the address `family` and the `getaddrinfo` `hints`, as `net.connect()` and
 * `http.request()` take them. One `if` per option, as above.
 */
export function putResolution(options: EffectiveOptions, into: Record<string, unknown>): void {
    if (options.lookup !== undefined) {
        // Its answer must come after the hop follows the connection (deferred-lookup.ts).
        into.lookup = answeringLater(options.lookup);
    }

    if (options.family !== undefined) {
        into.family = options.family;
    }

    if (options.hints !== undefined) {
        into.hints = options.hints;
    }
}

/**
 * The resolution options as part of a key: `family` and `hints`. As with Node's agents, `lookup`
 * does not part connections (a function, often made afresh for each call).
 */
export function resolutionKey(options: EffectiveOptions): string {
    return `${options.family ?? ''} ${options.hints ?? ''}`;
}
