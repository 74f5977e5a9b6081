import { http, https } from '../../../common/node-modules.js';
import type { Agents } from '../../contract/types.js';

/** Fresh pools (README, "Agents"): no socket cap, and keep-alive so sequential requests reuse connections. */
export function createAgents(): Agents {
    return {
        http: new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY }),
        https: new https.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY }),
        httpsAllowUnauthorized: new https.Agent({
            keepAlive: true,
            maxSockets: Number.POSITIVE_INFINITY,
            rejectUnauthorized: false
        })
    };
}

/** Throws unless `agents` holds the three pools `defaults()` needs. */
export function assertAgents(agents: unknown): asserts agents is Agents {
    if (typeof agents !== 'object' || agents === null) {
        throw new TypeError('Option agents must be an object with http, https and httpsAllowUnauthorized agents');
    }

    const candidate = agents as Record<string, unknown>;
    if (!(candidate.http instanceof http.Agent)) {
        throw new TypeError('Option agents.http must be an http.Agent');
    }

    for (const key of ['https', 'httpsAllowUnauthorized'] as const) {
        if (!(candidate[key] instanceof https.Agent)) {
            throw new TypeError(`Option agents.${key} must be an https.Agent`);
        }
    }
}
