import type { Agent } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

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
 *   agent `timeout` it already has, which the default pools have not. One lazily armed timer per
 *   agent does it (`IdleSweep`), not a socket timeout: a release only stamps the socket.
 * - Each socket kept is stamped with the order of its release, so that when one turns out stale the
 *   free sockets of its pool idle at least as long can be retired too (`retireIdlePeers`).
 */

/** Taken off the server's idle timeout: a request must reach it well before it closes. */
export const keepAliveMarginMs = 1_000;

// The timer functions as the module found them: pool housekeeping keeps its own clock, as Node's socket
// timeouts do, when a test later fakes the global ones (vi.useFakeTimers() counts and drives only the
// caller's timers, such as a retry's wait).
const { setTimeout: startTimer, clearTimeout: stopTimer } = globalThis;

// A timer can fire a little before its time (it counts from the event loop's cached clock): a socket
// due within this is retired by the sweep at hand rather than by another timer a few ms later.
const sweepSlackMs = 10;

// What keepSocketAlive() is at run time (the @types/node of Node 20 declare it as returning void).
type KeepSocketAlive = (this: Agent, socket: Socket) => boolean;

/**
 * What the policy notes on a pooled socket at each release. One record per socket, made at its first
 * release and rewritten in place after: one property of ours on Node's socket, not one per fact (a
 * store of a new key on Node's objects is among the slowest property accesses there are).
 */
interface ReleaseStamp {
    /** When the socket went back to its pool, as an order of releases: earlier means idle longer. */
    releasedAt: number;
    /** What the socket had read when it went back: whatever it reads later belongs to its next request. */
    bytesAtRelease: number;
    /** When the idle socket is to be retired (on the clock of `performance.now()`), if its server said when. */
    retireAt: number | undefined;
}

const stampOf = Symbol('tracewire.releaseStamp');
// The request a socket is handed back for: Node sets `_httpMessage` on the socket (not in @types/node).
type PooledSocket = Socket & {
    _httpMessage?: { res?: { headers: Record<string, string | string[] | undefined> } | null } | null;
    [stampOf]?: ReleaseStamp;
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
    const sweep = new IdleSweep(agent);
    const pooled = agent as unknown as { keepSocketAlive: KeepSocketAlive };
    const keepSocketAlive = pooled.keepSocketAlive;
    pooled.keepSocketAlive = function keepSocketAliveByPolicy(this: Agent, socket: PooledSocket): boolean {
        const res = socket._httpMessage?.res;
        if (res == null || !keepSocketAlive.call(this, socket)) {
            return false;
        }

        const seconds = keepAliveTimeout(res.headers['keep-alive']);
        let retireAt: number | undefined;
        if (seconds !== undefined) {
            const limit = seconds * 1000 - keepAliveMarginMs;
            if (limit <= 0) {
                return false;
            }

            retireAt = sweep.retireAfter(limit);
        }

        // Without a hint, none: the latest response speaks for the connection.
        const stamp = socket[stampOf];
        if (stamp === undefined) {
            socket[stampOf] = { releasedAt: ++releases, bytesAtRelease: socket.bytesRead, retireAt };
        } else {
            stamp.releasedAt = ++releases;
            stamp.bytesAtRelease = socket.bytesRead;
            stamp.retireAt = retireAt;
        }

        return true;
    };
}

/**
 * Retires the free sockets of one agent whose idle limit has passed. One timer for the agent, armed
 * for the earliest limit known and only while one is pending, instead of an idle timeout per socket:
 * that one was cleared by the agent's own `keepSocketAlive()` and set again by the policy at every
 * release, and refreshed by every read and write of the request in between. A socket reused before
 * its limit is skipped (it is not free); released again, it carries its new limit.
 */
class IdleSweep {
    private timer: NodeJS.Timeout | undefined;
    // When the timer fires, on the clock of `performance.now()`; Infinity while none is armed.
    private due = Number.POSITIVE_INFINITY;

    constructor(private readonly agent: Agent) {}

    /** When a socket going back to the pool now is to be retired, after `limit` ms idle; the sweep is armed for it. */
    retireAfter(limit: number): number {
        const now = performance.now();
        const at = now + limit;
        // With one server the limits come in order: the timer armed already fires first.
        if (at < this.due) {
            this.arm(at, now);
        }

        return at;
    }

    private arm(at: number, now: number): void {
        if (this.timer !== undefined) {
            stopTimer(this.timer);
        }

        this.due = at;
        // Unref'd like the pooled sockets themselves: an idle pool never keeps the process alive.
        this.timer = startTimer(sweepIdle, at - now, this).unref();
    }

    /** Destroys the free sockets that are due (the agent drops them as they close) and re-arms for the next. */
    sweep(): void {
        this.timer = undefined;
        this.due = Number.POSITIVE_INFINITY;
        const now = performance.now();
        let next = Number.POSITIVE_INFINITY;
        const pools = this.agent.freeSockets;
        for (const name in pools) {
            for (const socket of (pools[name] ?? []) as PooledSocket[]) {
                const at = socket[stampOf]?.retireAt;
                if (at === undefined || socket.destroyed) {
                    continue;
                }

                if (at - now <= sweepSlackMs) {
                    socket.destroy();
                } else if (at < next) {
                    next = at;
                }
            }
        }

        if (next !== Number.POSITIVE_INFINITY) {
            this.arm(next, now);
        }
    }
}

function sweepIdle(sweep: IdleSweep): void {
    sweep.sweep();
}

/**
 * The bytes `socket` read since it last went back to its pool: for a request on a reused socket, 0
 * while no byte of its response has come. A socket pooled before the policy applied to its agent
 * gives all it ever read, which never counts as nothing.
 */
export function bytesSinceRelease(socket: Socket): number {
    const mark = (socket as PooledSocket)[stampOf]?.bytesAtRelease;
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
    const since = (stale as PooledSocket)[stampOf]?.releasedAt;
    for (const [name, busy] of Object.entries(agent.sockets)) {
        if (busy?.includes(stale)) {
            for (const socket of agent.freeSockets[name] ?? []) {
                const at = (socket as PooledSocket)[stampOf]?.releasedAt;
                // Unstamped: pooled before the policy, or a stale socket of unknown age: retire it.
                if (since === undefined || at === undefined || at <= since) {
                    socket.destroy();
                }
            }

            return;
        }
    }
}
