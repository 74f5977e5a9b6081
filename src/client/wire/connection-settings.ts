import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { net } from '../../common/node-modules.js';
import type { Agents, EffectiveOptions } from '../contract/types.js';
import type { Destination } from './destination.js';

/**
 * Where a hop's connection settings come from, for every transport: the agent its options choose
 * (the client's pools, or the caller's `agent`), which carries the TLS settings a caller gave it (a
 * certificate authority, a client certificate), and the request's own TLS options over them.
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

    if (options.rejectUnauthorized !== undefined) {
        settings.rejectUnauthorized = options.rejectUnauthorized;
    }

    if (options.ciphers !== undefined) {
        settings.ciphers = options.ciphers;
    }

    if (options.secureProtocol !== undefined) {
        settings.secureProtocol = options.secureProtocol;
    }

    if (settings.servername === undefined && net.isIP(destination.hostname) === 0) {
        settings.servername = destination.hostname;
    }

    return settings;
}
