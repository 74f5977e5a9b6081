import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Agents } from './types.js';

/** Fresh pools (README, "Agents"): no socket cap, and keep-alive so sequential requests reuse connections. */
export function createAgents(): Agents {
    return {
        http: new HttpAgent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY }),
        https: new HttpsAgent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY }),
        httpsAllowUnauthorized: new HttpsAgent({
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
    if (!(candidate.http instanceof HttpAgent)) {
        throw new TypeError('Option agents.http must be an http.Agent');
    }

    for (const key of ['https', 'httpsAllowUnauthorized'] as const) {
        if (!(candidate[key] instanceof HttpsAgent)) {
            throw new TypeError(`Option agents.${key} must be an https.Agent`);
        }
    }
}
