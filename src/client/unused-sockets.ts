import type { Agent } from 'node:http';
import type { Socket } from 'node:net';

// What keepSocketAlive() is at run time (the @types/node of Node 20 declare it as returning void).
type KeepSocketAlive = (this: Agent, socket: Socket) => boolean;
// The request a socket is handed back for: Node sets `_httpMessage` on the socket (not in @types/node).
type PooledSocket = Socket & { _httpMessage?: { res?: unknown } | null };

// The agents already guarded: each is wrapped once, whoever made it.
const guarded = new WeakSet<Agent>();

/**
 * Keeps `agent` from pooling a socket whose request never used it. Since Node 24 a request ties
 * itself to its socket as soon as the agent hands it over, so a request ended before that (abort,
 * destroy, a failing listener, a refused payload) gives the socket back to the agent as if it had
 * carried a whole exchange, and a keep-alive agent parks it, still connecting or (through a proxy)
 * tunnelled: a connection left open at the client and the server per cancelled request. Node 20 and
 * 22 closed it. `keepSocketAlive()` is the agent's documented hook for that decision; a socket whose
 * request got no response carried nothing worth keeping and is closed instead.
 */
export function closeUnusedOnRelease(agent: Agent | boolean | undefined): void {
    if (typeof agent !== 'object' || guarded.has(agent)) {
        return;
    }

    guarded.add(agent);
    const pooled = agent as unknown as { keepSocketAlive: KeepSocketAlive };
    const keepSocketAlive = pooled.keepSocketAlive;
    pooled.keepSocketAlive = function keepUsedSocketAlive(this: Agent, socket: PooledSocket): boolean {
        return socket._httpMessage?.res != null && keepSocketAlive.call(this, socket);
    };
}
