import type { Socket } from 'node:net';
import { expect } from 'vitest';
import type { Agents, Client } from '../../../../src/client/index.js';
import { sessionPoolOf } from '../../../../src/client/wire/http2/pool.js';
import { socketCount, timerCount } from '../../helpers.js';
import type { RawHttp2Server } from './raw-server.js';
import type { Http2TestServer, Relay } from './servers.js';

/**
 * What every HTTP/2 test checks once its requests are over: nothing left behind. The client's
 * sessions close (they are given a short `idleTimeout`), every connection the client opened itself
 * (`net.connect`, `tls.connect`: recorded here as the code under test calls them, as an APM agent
 * would patch them) is closed, the servers see their sessions and connections closed, the client's
 * agents hold no socket, and no timer keeps the process alive beyond those there were before the test.
 */

// The sockets opened through `net.connect()` and `tls.connect()` of this test file's process.
const opened: Socket[] = [];
for (const module of [process.getBuiltinModule('node:net'), process.getBuiltinModule('node:tls')]) {
    const connect = module.connect as (...args: unknown[]) => Socket;
    (module as { connect: unknown }).connect = (...args: unknown[]) => {
        const socket = connect(...args);
        opened.push(socket);
        return socket;
    };
}

/** The sockets opened with `net.connect()` or `tls.connect()` that are still open. */
export function clientSockets(): Socket[] {
    return opened.filter((socket) => !socket.destroyed);
}

export function openSockets(): number {
    return clientSockets().length;
}

/** The sessions a client's pool holds now (busy or idle). */
export function clientSessions(agents: Agents): number {
    return [...sessionPoolOf(agents).openSessions()].length;
}

/** Timers keeping the process alive before the test, to compare with after it. */
export function timersBefore(): number {
    return timerCount();
}

/**
 * `serversClose: false` for a server that stops reading a connection it sent GOAWAY on (a `node:http2`
 * server does): it never sees the client close it, and only the client's side is checked.
 */
export async function expectReleased(
    api: Client,
    servers: readonly (Http2TestServer | Relay | RawHttp2Server)[],
    timers: number,
    { serversClose = true }: { serversClose?: boolean } = {}
): Promise<void> {
    // HTTP/1.1 (an origin that answered ALPN with it) is kept alive in the agents until they let go.
    for (const agent of [api.agents.http, api.agents.https, api.agents.httpsAllowUnauthorized]) {
        agent.destroy();
    }

    // Looked at every 10 ms (Vitest's default is 50): each wait ends soon after what it waits for (the idle
    // timeout, a close), and a test of these files calls it once or more; the bound is the same.
    const poll = { timeout: 10_000, interval: 10 };
    await expect.poll(() => agentSockets(api.agents), poll).toBe(0);

    await expect.poll(() => clientSessions(api.agents), { ...poll, message: 'client sessions' }).toBe(0);
    await expect.poll(() => openSockets(), { ...poll, message: 'client sockets' }).toBe(0);
    for (const server of serversClose ? servers : []) {
        if ('sessions' in server) {
            await expect.poll(() => server.openSessions(), { ...poll, message: 'server sessions' }).toBe(0);
        }

        await expect.poll(() => server.openConnections(), { ...poll, message: 'server connections' }).toBe(0);
    }

    await expect.poll(() => timerCount(), poll).toBeLessThanOrEqual(timers);
}

function agentSockets(agents: Agents): number {
    return socketCount(agents.http) + socketCount(agents.https) + socketCount(agents.httpsAllowUnauthorized);
}
