/*
 * What `http.client.open_connections` reads of the HTTP/2 sessions (README "Metrics"): the sessions
 * of a client are not in any agent's pools, so each client's session pool (http2/pool.ts) enrols here
 * as it is made. Apart from http2/ so that the instrumentation reads it without loading the HTTP/2
 * transport, which a process that never speaks HTTP/2 does not hold.
 */

/** One open session: the origin it serves, and whether it carries a stream now. */
export interface OpenSession {
    readonly address: string;
    readonly port: number;
    readonly active: boolean;
}

export interface SessionCensus {
    openSessions(): Iterable<OpenSession>;
}

// By the client's connection pools (`Agents`, shared by clients derived with `defaults()`), and all of
// them for an observer of every client (TracewireInstrumentation); weakly, as a client may be dropped.
const byAgents = new WeakMap<object, SessionCensus>();
const everyCensus = new Set<WeakRef<SessionCensus>>();

export function enrolSessionCensus(agents: object, census: SessionCensus): void {
    byAgents.set(agents, census);
    everyCensus.add(new WeakRef(census));
}

/** The open sessions of the client whose pools are `agents`; of every client when `agents` is undefined. */
export function* openSessionsOf(agents: object | undefined): Generator<OpenSession> {
    if (agents !== undefined) {
        const census = byAgents.get(agents);
        if (census !== undefined) {
            yield* census.openSessions();
        }

        return;
    }

    for (const ref of everyCensus) {
        const census = ref.deref();
        if (census === undefined) {
            everyCensus.delete(ref);
        } else {
            yield* census.openSessions();
        }
    }
}
