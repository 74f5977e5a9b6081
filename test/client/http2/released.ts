import { expect } from 'vitest';
import type { Agents, Client } from '../../../src/client/index.js';
import { sessionPoolOf } from '../../../src/client/wire/http2/pool.js';
import { socketCount, timerCount } from '../helpers.js';
import type { RawHttp2Server } from './raw-server.js';
import type { Http2TestServer, Relay } from './servers.js';

/**
 * What every HTTP/2 test checks once its requests are over: nothing left behind. The client's
 * sessions close (they are given a short `idleTimeout`), the servers see their sessions and
 * connections closed, the client's agents hold no socket, and no timer keeps the process alive
 * beyond those there were before the test.
 */

/** The sessions a client's pool holds now (busy or idle). */
export function clientSessions(agents: Agents): number {
    return [...sessionPoolOf(agents).openSessions()].length;
}

/** Timers keeping the process alive before the test, to compare with after it. */
export function timersBefore(): number {
    return timerCount();
}

export async function expectReleased(
    api: Client,
    servers: readonly (Http2TestServer | Relay | RawHttp2Server)[],
    timers: number
): Promise<void> {
    // HTTP/1.1 (an origin that answered ALPN with it) is kept alive in the agents until they let go.
    for (const agent of [api.agents.http, api.agents.https, api.agents.httpsAllowUnauthorized]) {
        agent.destroy();
    }

    await expect.poll(() => agentSockets(api.agents), { timeout: 10_000 }).toBe(0);

    await expect.poll(() => clientSessions(api.agents), { timeout: 10_000 }).toBe(0);
    for (const server of servers) {
        if ('sessions' in server) {
            await expect.poll(() => server.openSessions(), { timeout: 10_000 }).toBe(0);
        }

        await expect.poll(() => server.openConnections(), { timeout: 10_000 }).toBe(0);
    }

    await expect.poll(() => timerCount()).toBeLessThanOrEqual(timers);
}

function agentSockets(agents: Agents): number {
    return socketCount(agents.http) + socketCount(agents.https) + socketCount(agents.httpsAllowUnauthorized);
}
