import { lookup as dnsLookup } from 'node:dns';
import { once } from 'node:events';
import { createServer, Agent as HttpAgent, type Server } from 'node:http';
import { type AddressInfo, connect, type LookupFunction } from 'node:net';
import type { Attributes } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTR_DNS_QUESTION_NAME, instrumentClient, METRIC_DNS_LOOKUP_DURATION } from '../../instrumentation/index.js';
import { client } from '../../src/client/index.js';
import { refusedUrl } from '../client/helpers.js';
import { setupOtel } from './otel.js';

/**
 * docs/observability.md "Metrics", `dns.lookup.duration`: a point for each lookup a hop did, and a
 * failed one (with its `error.type`) only for a lookup that was under way and failed — never for a hop
 * whose connection resolved no name (a pooled socket, a connection a custom agent made), nor for a name
 * that resolved.
 */

let server: Server;
let port: number;

beforeAll(async () => {
    server = createServer((req, res) => {
        req.resume();
        if (req.url === '/reset') {
            req.socket.destroy();
            return;
        }

        req.on('end', () => res.end('ok'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
});

afterAll(() => {
    server.closeAllConnections();
    server.close();
});

/** A lookup that resolves every name to 127.0.0.1, after 10 ms as a resolver answers. */
const toLoopback: LookupFunction = (_hostname, options, callback) =>
    setTimeout(() => dnsLookup('127.0.0.1', { ...options, family: 4 }, callback as never), 10);

/** A lookup that finds nothing, as getaddrinfo tells an unknown name. */
const notFound: LookupFunction = (hostname, _options, callback) => {
    const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
        code: 'ENOTFOUND',
        syscall: 'getaddrinfo',
        hostname
    });
    setTimeout(() => callback(err, '', 4), 20);
};

/** A client of its own with keep-alive pools, instrumented with the optional metrics into a reader of its own. */
function instrumented() {
    const otel = setupOtel();
    const agent = new HttpAgent({ keepAlive: true });
    const api = client.defaults({ events: true, agent });
    const handle = instrumentClient(api, { meterProvider: otel.meterProvider, optionalMetrics: true });
    return {
        api,
        async lookups(): Promise<{ attributes: Attributes; count: number }[]> {
            return (await otel.histogram(METRIC_DNS_LOOKUP_DURATION)).map(({ attributes, count }) => ({
                attributes,
                count
            }));
        },
        async close() {
            handle.disable();
            agent.destroy();
            await otel.shutdown();
        }
    };
}

const failedOnes = (points: { attributes: Attributes }[]) =>
    points.filter((point) => point.attributes[ATTR_ERROR_TYPE] !== undefined);

describe('dns.lookup.duration records a failed lookup only for a lookup that failed', () => {
    it('a refused connection to a name that resolved: the lookup, not failed', async () => {
        const { api, lookups, close } = instrumented();
        try {
            const refusedPort = new URL(refusedUrl).port;
            const err = await api.get(`http://refused.test:${refusedPort}/`, { lookup: toLoopback }).catch((e) => e);
            expect(err).toMatchObject({ data: { code: 'ECONNREFUSED' } });
            const points = await lookups();
            expect(points).toEqual([{ attributes: { [ATTR_DNS_QUESTION_NAME]: 'refused.test' }, count: 1 }]);
        } finally {
            await close();
        }
    });

    it('a refused connection to a name resolved at once (a caching resolver): no failed lookup', async () => {
        // Answered on the next tick, before the request is given its socket: the hop's timings miss the
        // lookup's end, and the refusal is no lookup's failure all the same.
        const atOnce: LookupFunction = (_hostname, options, callback) =>
            dnsLookup('127.0.0.1', { ...options, family: 4 }, callback as never);
        const { api, lookups, close } = instrumented();
        try {
            const refusedPort = new URL(refusedUrl).port;
            const err = await api.get(`http://cached.test:${refusedPort}/`, { lookup: atOnce }).catch((e) => e);
            expect(err).toMatchObject({ data: { code: 'ECONNREFUSED' } });
            expect(failedOnes(await lookups())).toEqual([]);
        } finally {
            await close();
        }
    });

    it('a name a lookup option cannot resolve: a failed lookup with its error code', async () => {
        const { api, lookups, close } = instrumented();
        try {
            const err = await api.get(`http://nowhere.test:${port}/`, { lookup: notFound }).catch((e) => e);
            expect(err).toMatchObject({ data: { code: 'ENOTFOUND' } });
            expect(await lookups()).toEqual([
                {
                    attributes: { [ATTR_DNS_QUESTION_NAME]: 'nowhere.test', [ATTR_ERROR_TYPE]: 'ENOTFOUND' },
                    count: 1
                }
            ]);
        } finally {
            await close();
        }
    });

    it('a failure on a reused keep-alive socket: no lookup at all but the one that opened it', async () => {
        const { api, lookups, close } = instrumented();
        try {
            const url = `http://reused.test:${port}`;
            await api.get(`${url}/`, { lookup: toLoopback });
            // A POST is not sent again on a new connection: its hop fails on the pooled one.
            const err = await api.post(`${url}/reset`, { payload: 'x', lookup: toLoopback }).catch((e) => e);
            expect(err).toMatchObject({ output: { statusCode: 502 } });
            expect(err.data.code).toMatch(/^(ECONNRESET|EPIPE)$/);
            const points = await lookups();
            expect(failedOnes(points)).toEqual([]);
            expect(points).toEqual([{ attributes: { [ATTR_DNS_QUESTION_NAME]: 'reused.test' }, count: 1 }]);
        } finally {
            await close();
        }
    });

    it('connections a custom agent made, to a name the hop never resolved: a reset, a refusal, no lookup', async () => {
        const { api, lookups, close } = instrumented();
        try {
            // An agent handing over a socket it connected already.
            const socket = connect(port, '127.0.0.1');
            await once(socket, 'connect');
            const connected = Object.assign(new HttpAgent(), { createConnection: () => socket });
            const reset = await api
                .post(`http://connected.test:${port}/reset`, { payload: 'x', agent: connected })
                .catch((e) => e);
            expect(reset).toMatchObject({ output: { statusCode: 502 } });

            // An agent connecting to an address of its own choosing, whatever the URL names: refused.
            const refusedPort = Number(new URL(refusedUrl).port);
            const elsewhere = Object.assign(new HttpAgent(), {
                createConnection: () => connect(refusedPort, '127.0.0.1')
            });
            const refused = await api.get(`http://elsewhere.test:${port}/`, { agent: elsewhere }).catch((e) => e);
            expect(refused).toMatchObject({ data: { code: 'ECONNREFUSED' } });
            connected.destroy();
            elsewhere.destroy();

            expect(await lookups()).toEqual([]);
        } finally {
            await close();
        }
    });
});
