import type { Agent } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What happens when an agent takes a socket back (the README's "Agents" and "Stale connections"):
 * the one policy the client applies to every agent it sends through, its own or one the caller
 * passed, by wrapping the agent's documented `keepSocketAlive()` hook once.
 * - A socket whose request got no response is closed, not pooled. Since Node 24 a request ties itself
 *   to its socket as soon as the agent hands it over, so a request ended before that (abort, destroy,
 *   a failing listener, a refused payload) gives back a socket still connecting or (through a proxy)
 *   tunnelled, as if it had carried a whole exchange; Node 20 and 22 closed it.
 * - A socket is retired before the server's advertised `Keep-Alive: timeout=N`, less a margin: idle
 *   that long, it is destroyed rather than reused. Node's agent reads the hint only to shorten an
 *   agent `timeout` it already has, which the default pools have not.
 * - Each socket kept is stamped with the order of its release, so that when one turns out stale the
 *   free sockets of its pool idle at least as long can be retired too (`retireIdlePeers`).
 */

/** Taken off the server's idle timeout: a request must reach it well before it closes. */
export const keepAliveMarginMs = 1_000;

// What keepSocketAlive() is at run time (the @types/node of Node 20 declare it as returning void).
type KeepSocketAlive = (this: Agent, socket: Socket) => boolean;

// When a socket went back to its pool, as an order of releases: earlier means idle longer.
const releasedAt = Symbol('tracewire.releasedAt');
// What the socket had read when it went back: whatever it reads later belongs to its next request.
const bytesAtRelease = Symbol('tracewire.bytesAtRelease');
// The request a socket is handed back for: Node sets `_httpMessage` on the socket (not in @types/node).
type PooledSocket = Socket & {
    _httpMessage?: { res?: { headers: Record<string, string | string[] | undefined> } | null } | null;
    [releasedAt]?: number;
    [bytesAtRelease]?: number;
};

let releases = 0;

// The agents already under the policy: each is wrapped once, whoever made it.
const governed = new WeakSet<Agent>();

// A server sends the same `Keep-Alive` value with every response: the last one is parsed once.
let lastHeader: string | undefined;
let lastTimeout: number | undefined;

/** The idle timeout in seconds a `Keep-Alive` header announces, or undefined when it has none. */
export function keepAliveTimeout(header: string | string[] | undefined): number | undefined {
    if (typeof header !== 'string') {
        return undefined;
    }

    if (header !== lastHeader) {
        const match = /(?:^|[\s,;])timeout\s*=\s*"?(\d{1,9})/i.exec(header);
        lastTimeout = match === null ? undefined : Number(match[1]);
        lastHeader = header;
    }

    return lastTimeout;
}

/** Puts `agent` under the release policy above; called by each hop with the agent it sends through. */
export function governSocketRelease(agent: Agent | boolean | undefined): void {
    if (typeof agent !== 'object' || governed.has(agent)) {
        return;
    }

    governed.add(agent);
    const pooled = agent as unknown as { keepSocketAlive: KeepSocketAlive };
    const keepSocketAlive = pooled.keepSocketAlive;
    pooled.keepSocketAlive = function keepSocketAliveByPolicy(this: Agent, socket: PooledSocket): boolean {
        const res = socket._httpMessage?.res;
        if (res == null || !keepSocketAlive.call(this, socket)) {
            return false;
        }

        const seconds = keepAliveTimeout(res.headers['keep-alive']);
        if (seconds !== undefined) {
            const limit = seconds * 1000 - keepAliveMarginMs;
            if (limit <= 0) {
                return false;
            }

            // The agent's 'timeout' handler destroys a free socket that idles this long.
            if (socket.timeout === undefined || socket.timeout === 0 || socket.timeout > limit) {
                socket.setTimeout(limit);
            }
        }

        socket[releasedAt] = ++releases;
        socket[bytesAtRelease] = socket.bytesRead;
        return true;
    };
}

/**
 * The bytes `socket` read since it last went back to its pool: for a request on a reused socket, 0
 * while no byte of its response has come. A socket pooled before the policy applied to its agent
 * gives all it ever read, which never counts as nothing.
 */
export function bytesSinceRelease(socket: Socket): number {
    const mark = (socket as PooledSocket)[bytesAtRelease];
    return mark === undefined ? socket.bytesRead : socket.bytesRead - mark;
}

/**
 * Destroys the free sockets of `stale`'s pool (same agent, same pool name) that went back to it no
 * later than `stale` did: idle at least as long, the server's idle timeout has most likely closed
 * them too, and a re-send must not land on a second dead connection. Sockets released since (in use
 * while `stale` idled) are kept. Destroyed free sockets are skipped by the agent's next pick (they
 * lead its list, oldest first) and leave it as they close.
 */
export function retireIdlePeers(agent: Agent, stale: Socket): void {
    const since = (stale as PooledSocket)[releasedAt];
    for (const [name, busy] of Object.entries(agent.sockets)) {
        if (busy?.includes(stale)) {
            for (const socket of agent.freeSockets[name] ?? []) {
                const at = (socket as PooledSocket)[releasedAt];
                // Unstamped: pooled before the policy, or a stale socket of unknown age: retire it.
                if (since === undefined || at === undefined || at <= since) {
                    socket.destroy();
                }
            }

            return;
        }
    }
}
