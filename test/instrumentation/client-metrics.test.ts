import { EventEmitter, once } from 'node:events';
import { createServer, Agent as HttpAgent, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ValueType } from '@opentelemetry/api';
import {
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_NETWORK_PROTOCOL_VERSION,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    METRIC_HTTP_CLIENT_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import {
    ATTR_HTTP_CONNECTION_STATE,
    METRIC_HTTP_CLIENT_ACTIVE_REQUESTS,
    METRIC_HTTP_CLIENT_OPEN_CONNECTIONS,
    METRIC_HTTP_CLIENT_REQUEST_BODY_SIZE,
    METRIC_HTTP_CLIENT_RESPONSE_BODY_SIZE
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentClient } from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import { startProxy } from '../client/test-proxy.js';
import { setupOtel } from './otel.js';

let server: Server;
let base: string;
let port: number;
const held = new EventEmitter<{ held: [ServerResponse] }>();

beforeAll(async () => {
    server = createServer((req, res) => {
        if (req.url === '/held') {
            res.writeHead(200, { 'content-length': 5 });
            res.write('he');
            held.emit('held', res);
            return;
        }

        req.resume();
        req.on('end', () => res.end('ok'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
});

afterAll(() => {
    server.closeAllConnections();
    server.close();
});

/** A client with pools of its own, instrumented into a reader of its own. */
function instrumented(optionalMetrics: boolean) {
    const otel = setupOtel();
    const agents = {
        http: new HttpAgent({ keepAlive: true }),
        https: new HttpsAgent({ keepAlive: true }),
        httpsAllowUnauthorized: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
    };
    const api = client.defaults({ events: true, agents });
    const handle = instrumentClient(api, { meterProvider: otel.meterProvider, optionalMetrics });
    return {
        api,
        agents,
        otel,
        async close() {
            handle.disable();
            agents.http.destroy();
            await otel.shutdown();
        }
    };
}

/** Waits for `count` requests held by the server after their first bytes. */
function heldResponses(count: number): Promise<ServerResponse[]> {
    return new Promise((resolve) => {
        const responses: ServerResponse[] = [];
        const onHeld = (res: ServerResponse) => {
            responses.push(res);
            if (responses.length === count) {
                held.off('held', onHeld);
                resolve(responses);
            }
        };
        held.on('held', onHeld);
    });
}

const serverAttributes = () => ({ [ATTR_SERVER_ADDRESS]: '127.0.0.1', [ATTR_SERVER_PORT]: port });

describe('optional client metrics', () => {
    it('without optionalMetrics, only http.client.request.duration is recorded', async () => {
        const { api, otel, close } = instrumented(false);
        await api.post(`${base}/echo`, { payload: 'hello' });
        expect([...(await otel.metrics()).keys()]).toEqual([METRIC_HTTP_CLIENT_REQUEST_DURATION]);
        await close();
    });

    it('without optionalMetrics, no connection is followed: a new socket gets no listener of the instrumentation', async () => {
        const closeListeners = async (optionalMetrics: boolean) => {
            const { api, agents, close } = instrumented(optionalMetrics);
            await api.post(`${base}/echo`, { payload: 'hello' });
            const sockets = Object.values(agents.http.freeSockets).flat();
            expect(sockets).toHaveLength(1);
            const count = sockets[0]!.listenerCount('close');
            await close();
            return count;
        };
        const without = await closeListeners(false);
        // With them, http.client.connection.duration waits for the connection's close.
        expect(await closeListeners(true)).toBe(without + 1);
    });

    it('http.client.request.body.size and http.client.response.body.size: histograms in By, with the attributes of the duration', async () => {
        const { api, otel, close } = instrumented(true);
        await api.post(`${base}/echo`, { payload: 'x'.repeat(1234) });
        const metrics = await otel.metrics();
        const attributes = {
            [ATTR_HTTP_REQUEST_METHOD]: 'POST',
            ...serverAttributes(),
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
            [ATTR_NETWORK_PROTOCOL_VERSION]: '1.1'
        };
        expect(metrics.get(METRIC_HTTP_CLIENT_REQUEST_DURATION)!.points[0]!.attributes).toEqual(attributes);
        for (const [name, bytes, description] of [
            [METRIC_HTTP_CLIENT_REQUEST_BODY_SIZE, 1234, 'Size of HTTP client request bodies.'],
            [METRIC_HTTP_CLIENT_RESPONSE_BODY_SIZE, 2, 'Size of HTTP client response bodies.']
        ] as const) {
            const metric = metrics.get(name)!;
            expect(metric).toMatchObject({ unit: 'By', type: 'HISTOGRAM', valueType: ValueType.INT, description });
            expect(metric.points).toEqual([{ attributes, value: { count: 1, sum: bytes } }]);
        }

        await close();
    });

    it('http.client.active_requests: an UpDownCounter in {request}, up while a hop runs, down once its body is in', async () => {
        const { api, otel, close } = instrumented(true);
        const serverSide = heldResponses(1);
        const res = await api.request('GET', `${base}/held`);
        const [pending] = await serverSide;
        const attributes = { [ATTR_HTTP_REQUEST_METHOD]: 'GET', ...serverAttributes() };

        const during = (await otel.metrics()).get(METRIC_HTTP_CLIENT_ACTIVE_REQUESTS)!;
        expect(during).toMatchObject({
            unit: '{request}',
            type: 'UP_DOWN_COUNTER',
            valueType: ValueType.INT,
            isMonotonic: false,
            description: 'Number of active HTTP requests.'
        });
        expect(during.points).toEqual([{ attributes, value: 1 }]);

        const body = api.read(res);
        pending!.end('llo');
        expect(String(await body)).toBe('hello');
        const after = (await otel.metrics()).get(METRIC_HTTP_CLIENT_ACTIVE_REQUESTS)!;
        expect(after.points).toEqual([{ attributes, value: 0 }]);
        await close();
    });

    it('http.client.open_connections: the sockets of the pools, active then idle, gone once closed', async () => {
        const { api, otel, close } = instrumented(true);
        const connections = async () => {
            const metric = (await otel.metrics()).get(METRIC_HTTP_CLIENT_OPEN_CONNECTIONS);
            const byState: Record<string, number> = {};
            for (const point of metric?.points ?? []) {
                expect(point.attributes).toEqual({
                    [ATTR_HTTP_CONNECTION_STATE]: point.attributes[ATTR_HTTP_CONNECTION_STATE],
                    ...serverAttributes()
                });
                byState[point.attributes[ATTR_HTTP_CONNECTION_STATE] as string] = point.value as number;
            }

            return byState;
        };

        const metric = (await otel.metrics()).get(METRIC_HTTP_CLIENT_OPEN_CONNECTIONS);
        expect(metric).toBeUndefined();

        // Two requests at once: two sockets opened, both serving a request.
        const serverSide = heldResponses(2);
        const responses = await Promise.all([api.request('GET', `${base}/held`), api.request('GET', `${base}/held`)]);
        const pending = await serverSide;
        expect(await connections()).toEqual({ active: 2 });
        const described = (await otel.metrics()).get(METRIC_HTTP_CLIENT_OPEN_CONNECTIONS)!;
        expect(described).toMatchObject({
            unit: '{connection}',
            type: 'OBSERVABLE_UP_DOWN_COUNTER',
            isMonotonic: false,
            description: 'Number of outbound HTTP connections that are currently active or idle on the client.'
        });

        // Bodies read: the kept-alive sockets wait in the pool.
        const bodies = responses.map((res) => api.read(res));
        for (const res of pending) {
            res.end('llo');
        }

        await Promise.all(bodies);
        await expect.poll(connections).toEqual({ active: 0, idle: 2 });

        // The server closes them: the pool is empty.
        server.closeAllConnections();
        await expect.poll(connections).toEqual({ active: 0, idle: 0 });
        await close();
    });

    it('http.client.open_connections: connections through a proxy, named by the server behind it', async () => {
        // The proxy pools are the client's own, made on the first proxied request.
        const proxy = await startProxy();
        const { api, otel, close } = instrumented(true);
        const proxied = api.defaults({ proxy: proxy.url });
        const connections = async () => {
            const points = (await otel.metrics()).get(METRIC_HTTP_CLIENT_OPEN_CONNECTIONS)?.points ?? [];
            return points.map((point) => ({ ...point.attributes, value: point.value }));
        };

        try {
            const serverSide = heldResponses(1);
            const res = await proxied.request('GET', `${base}/held`);
            const [pending] = await serverSide;
            expect(await connections()).toEqual([
                { [ATTR_HTTP_CONNECTION_STATE]: 'active', ...serverAttributes(), value: 1 }
            ]);
            const body = api.read(res);
            pending!.end('llo');
            expect(String(await body)).toBe('hello');
            await expect
                .poll(connections)
                .toContainEqual({ [ATTR_HTTP_CONNECTION_STATE]: 'idle', ...serverAttributes(), value: 1 });
            expect(proxy.open.size).toBe(1);
        } finally {
            await proxy.close();
            await close();
        }
    });

    it('http.client.open_connections: a server at an IPv6 address is named by its address and port', async (ctx) => {
        const v6 = createServer((_req, res) => res.end('ok'));
        v6.listen(0, '::1');
        const listening = await Promise.race([
            once(v6, 'listening').then(() => true),
            once(v6, 'error').then(() => false)
        ]);
        if (!listening) {
            // A machine without IPv6 loopback cannot run this one.
            ctx.skip();
        }

        const v6Port = (v6.address() as AddressInfo).port;
        const { api, otel, close } = instrumented(true);
        try {
            await api.get(`http://[::1]:${v6Port}/`);
            await expect
                .poll(async () => (await otel.metrics()).get(METRIC_HTTP_CLIENT_OPEN_CONNECTIONS)?.points)
                .toEqual([
                    {
                        attributes: {
                            [ATTR_HTTP_CONNECTION_STATE]: 'idle',
                            [ATTR_SERVER_ADDRESS]: '::1',
                            [ATTR_SERVER_PORT]: v6Port
                        },
                        value: 1
                    }
                ]);
        } finally {
            await close();
            v6.closeAllConnections();
            v6.close();
        }
    });
});
