import type { Agent, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Idle connections retired before the server closes them: a response's `Keep-Alive: timeout=N`
 * says how long the server keeps the connection idle, and a pooled socket idle for that long, less
 * a margin, is destroyed rather than reused (the README's "Stale connections"). Node's agent reads
 * the hint only to shorten an agent `timeout` it already has, which the default pools have not.
 */

/** Taken off the server's idle timeout: a request must reach it well before it closes. */
export const keepAliveMarginMs = 1_000;

// The idle limit the last response on a socket announced, in ms (0: do not keep it).
const idleLimit = Symbol('tracewire.idleLimit');
type HintedSocket = Socket & { [idleLimit]?: number | undefined };

// Set on an agent whose keepSocketAlive() applies the limit: each agent is wrapped once.
const retires = Symbol('tracewire.retiresIdleSockets');
type RetiringAgent = Agent & { [retires]?: true };

/** The idle timeout in seconds a `Keep-Alive` header announces, or undefined when it has none. */
export function keepAliveTimeout(header: string | string[] | undefined): number | undefined {
    if (typeof header !== 'string') {
        return undefined;
    }

    const match = /(?:^|[\s,;])timeout\s*=\s*"?(\d{1,9})/i.exec(header);
    return match === null ? undefined : Number(match[1]);
}

/** Notes on the response's socket how long it may stay idle, when the response says so. */
export function noteKeepAlive(res: IncomingMessage): void {
    const socket = res.socket as HintedSocket | null;
    if (socket === null) {
        return;
    }

    const seconds = keepAliveTimeout(res.headers['keep-alive']);
    if (seconds !== undefined) {
        socket[idleLimit] = Math.max(0, seconds * 1000 - keepAliveMarginMs);
    } else if (socket[idleLimit] !== undefined) {
        // The latest response speaks for the connection.
        socket[idleLimit] = undefined;
    }
}

/**
 * Makes `agent` (ours, or one the caller passed) retire idle sockets at the limit noted on them:
 * its `keepSocketAlive()` hook, which Node calls as a socket goes back to the pool, is wrapped once.
 */
export function retireIdleSockets(agent: Agent): void {
    const retiring = agent as RetiringAgent;
    if (retiring[retires] === true || typeof agent.keepSocketAlive !== 'function') {
        return;
    }

    // Typed as returning void by @types/node, the hook returns whether the socket may be kept.
    const keepSocketAlive = agent.keepSocketAlive as (this: Agent, socket: Socket) => boolean;
    retiring[retires] = true;
    agent.keepSocketAlive = function keepSocketAliveWithinServerLimit(this: Agent, socket: Socket): boolean {
        if (!keepSocketAlive.call(this, socket)) {
            return false;
        }

        const limit = (socket as HintedSocket)[idleLimit];
        if (limit === undefined) {
            return true;
        }

        if (limit === 0) {
            return false;
        }

        // The agent's 'timeout' handler destroys a free socket that idles this long.
        if (socket.timeout === undefined || socket.timeout === 0 || socket.timeout > limit) {
            socket.setTimeout(limit);
        }

        return true;
    };
}
