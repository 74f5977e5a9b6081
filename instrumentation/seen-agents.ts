import type { Agent } from 'node:http';
import { http } from '../src/common/node-modules.js';

/**
 * The agents whose pools `http.client.open_connections` reports (connection-pool.ts): the client's
 * own, then every other one a request went through (a per-request `agent`, a derived client's
 * pools), held weakly so an agent the application drops is not kept alive.
 */
export class SeenAgents {
    private readonly seen = new WeakSet<Agent>();
    private readonly refs = new Set<WeakRef<Agent>>();

    constructor(private readonly pools: () => object | undefined) {}

    /** Remembers the agent of a request, if it is one not met before. */
    note(agent: unknown): void {
        if (agent instanceof http.Agent && !this.seen.has(agent)) {
            this.seen.add(agent);
            this.refs.add(new WeakRef(agent));
        }
    }

    /** The client's agents (read each time, so a replaced one is seen), then those met on requests. */
    *agents(): Generator<Agent> {
        const pools = this.pools() as Record<string, unknown> | undefined;
        if (pools !== undefined && pools !== null) {
            for (const key of ['http', 'https', 'httpsAllowUnauthorized']) {
                const agent = pools[key];
                if (agent instanceof http.Agent) {
                    yield agent;
                }
            }
        }

        for (const ref of this.refs) {
            const agent = ref.deref();
            if (agent === undefined) {
                this.refs.delete(ref);
            } else {
                yield agent;
            }
        }
    }
}
