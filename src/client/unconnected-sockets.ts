import type { Agent } from 'node:http';
import type { Socket } from 'node:net';

// What keepSocketAlive() is at run time (the @types/node of Node 20 declare it as returning void).
type KeepSocketAlive = (this: Agent, socket: Socket) => boolean;

// The agents already guarded: each is wrapped once, whoever made it.
const guarded = new WeakSet<Agent>();

/**
 * Keeps `agent` from pooling a socket that never connected. Since Node 24 a request ties itself to
 * its socket as soon as the agent hands it over, so a request ended before that socket connected
 * (abort, destroy, a failing listener, a refused payload) gives the socket back to the agent as if
 * it had carried a whole exchange, and a keep-alive agent parks it: a connection left open at the
 * client and the server. Node 20 and 22 closed it. `keepSocketAlive()` is the agent's documented
 * hook for that decision; a socket still connecting has carried nothing and is closed instead.
 */
export function closeUnconnectedOnRelease(agent: Agent | boolean | undefined): void {
    if (typeof agent !== 'object' || guarded.has(agent)) {
        return;
    }

    guarded.add(agent);
    const pooled = agent as unknown as { keepSocketAlive: KeepSocketAlive };
    const keepSocketAlive = pooled.keepSocketAlive;
    pooled.keepSocketAlive = function keepConnectedSocketAlive(this: Agent, socket: Socket): boolean {
        return !socket.connecting && keepSocketAlive.call(this, socket);
    };
}
