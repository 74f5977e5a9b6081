import type { Agent } from 'node:http';
import type { Socket } from 'node:net';
import type { Attributes, Meter, ObservableResult, ObservableUpDownCounter } from '@opentelemetry/api';
import type { OpenHttp2Session } from '../src/client/index.js';
import {
    ATTR_HTTP_CONNECTION_STATE,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    HTTP_CONNECTION_STATE_VALUE_ACTIVE,
    HTTP_CONNECTION_STATE_VALUE_IDLE,
    METRIC_HTTP_CLIENT_OPEN_CONNECTIONS
} from './semconv.js';

type Pools = Readonly<Record<string, readonly Socket[] | undefined>>;

interface Series {
    readonly attributes: Attributes;
    count: number;
}

// `host:port:` at the start of an agent's pool name (http and https agents both begin with it). An
// IPv6 literal host has colons of its own; its sockets are then asked for their peer instead.
const poolNamePrefix = /^([^:]+):(\d*):/;

/** How many series of servers without a connection are still reported as 0. */
const knownSeriesLimit = 1000;

/**
 * `http.client.open_connections`: the sockets of the agents, read when the metrics are collected.
 * An agent keeps the sockets serving a request in `sockets` and the kept-alive ones waiting for
 * the next request in `freeSockets`, and drops a socket from both once it closes, so one look at
 * both is the state of the pool: `active` and `idle` connections per `server.address`/`server.port`.
 * An HTTP/2 session is one connection, `active` while it carries a stream, whatever their number.
 */
export class OpenConnections {
    private readonly gauge: ObservableUpDownCounter;
    private readonly callback = (result: ObservableResult): void => this.observe(result);
    // Every series reported so far: one that has no socket left is reported as 0, since an
    // asynchronous instrument would otherwise repeat its last value forever (and every reader of
    // the meter collects on its own, so the zero cannot be reported just once).
    private readonly known = new Map<string, Attributes>();

    constructor(
        meter: Meter,
        private readonly agentsOf: () => Iterable<Agent>,
        private readonly sessionsOf: () => Iterable<OpenHttp2Session>
    ) {
        this.gauge = meter.createObservableUpDownCounter(METRIC_HTTP_CLIENT_OPEN_CONNECTIONS, {
            description: 'Number of outbound HTTP connections that are currently active or idle on the client.',
            unit: '{connection}'
        });
        this.gauge.addCallback(this.callback);
    }

    stop(): void {
        this.gauge.removeCallback(this.callback);
    }

    private observe(result: ObservableResult): void {
        const current = new Map<string, Series>();
        const seen = new Set<Agent>();
        for (const agent of this.agentsOf()) {
            if (seen.has(agent)) {
                continue;
            }

            seen.add(agent);
            countPools(current, agent.sockets as Pools, HTTP_CONNECTION_STATE_VALUE_ACTIVE, agent);
            countPools(current, agent.freeSockets as Pools, HTTP_CONNECTION_STATE_VALUE_IDLE, agent);
        }

        for (const session of this.sessionsOf()) {
            const state = session.active ? HTTP_CONNECTION_STATE_VALUE_ACTIVE : HTTP_CONNECTION_STATE_VALUE_IDLE;
            add(current, state, session.address, session.port, 1);
        }

        for (const [key, series] of current) {
            result.observe(series.count, series.attributes);
            this.known.set(key, series.attributes);
        }

        for (const [key, attributes] of this.known) {
            if (!current.has(key)) {
                result.observe(0, attributes);
            }
        }

        if (this.known.size > knownSeriesLimit) {
            // Only a client talking to thousands of servers gets here: forget those with no connection.
            for (const key of this.known.keys()) {
                if (!current.has(key)) {
                    this.known.delete(key);
                }
            }
        }
    }
}

function countPools(into: Map<string, Series>, pools: Pools, state: string, agent: Agent): void {
    for (const name in pools) {
        const sockets = pools[name];
        if (sockets === undefined || sockets.length === 0) {
            continue;
        }

        const match = poolNamePrefix.exec(name);
        if (match !== null) {
            const port = match[2] === '' ? defaultPortOf(agent) : Number(match[2]);
            add(into, state, match[1]!, port, sockets.length);
            continue;
        }

        for (const socket of sockets) {
            // remoteAddress is undefined until the socket connects, and after it is destroyed.
            if (socket.remoteAddress !== undefined && socket.remotePort !== undefined) {
                add(into, state, socket.remoteAddress, socket.remotePort, 1);
            }
        }
    }
}

function add(into: Map<string, Series>, state: string, address: string, port: number, count: number): void {
    const key = `${state} ${address} ${port}`;
    const series = into.get(key);
    if (series !== undefined) {
        series.count += count;
        return;
    }

    const attributes: Attributes = {};
    attributes[ATTR_HTTP_CONNECTION_STATE] = state;
    attributes[ATTR_SERVER_ADDRESS] = address;
    attributes[ATTR_SERVER_PORT] = port;
    into.set(key, { attributes, count });
}

function defaultPortOf(agent: Agent): number {
    const port = (agent as { defaultPort?: unknown }).defaultPort;
    return typeof port === 'number' ? port : 80;
}
