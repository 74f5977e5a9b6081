import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Attributes } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import {
    ATTR_ERROR_TYPE,
    ATTR_NETWORK_PEER_ADDRESS,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    ATTR_URL_SCHEME
} from '@opentelemetry/semantic-conventions';
import {
    METRIC_HTTP_CLIENT_CONNECTION_DURATION as INCUBATING_CONNECTION_DURATION,
    METRIC_DNS_LOOKUP_DURATION as INCUBATING_DNS_LOOKUP_DURATION,
    ATTR_DNS_QUESTION_NAME as INCUBATING_DNS_QUESTION_NAME
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
    ATTR_TIMEOUT_PHASE,
    type ClientInstrumentation,
    instrumentClient,
    PHASE_ATTRIBUTES,
    PHASE_EVENTS
} from '../../instrumentation/index.js';
import {
    ATTR_DNS_QUESTION_NAME,
    METRIC_DNS_LOOKUP_DURATION,
    METRIC_HTTP_CLIENT_CONNECTION_DURATION
} from '../../instrumentation/semconv.js';
import { client } from '../../src/client/index.js';
import { refusedUrl, startHttp, startHttps, type TestServer } from '../client/helpers.js';
import { setupOtel } from './otel.js';

// Delays injected by the servers and the lookup below; a phase must measure at least most of its
// delay, and stay within generous bounds on a loaded 2-core machine.
const delay = 120;
const atLeast = (delay * 0.8) / 1000;
// The dns phase starts when the request is told its lookup began, which a loaded loop tells late: the
// lookup's delay less 60 ms of such lag (test/client/wire/timings.test.ts allows the same).
const dnsAtLeast = (delay - 60) / 1000;

/**
 * `/think`: waits before the headers. `/trickle`: headers, then the body in two pieces `delay` apart.
 * `/to-name`: redirects to the same server by name; `/to-stall` to `/stall`. `/stall`: never answers.
 */
function handler(req: IncomingMessage, res: ServerResponse): void {
    if (req.url === '/think') {
        setTimeout(() => res.end('thought'), delay);
    } else if (req.url === '/trickle') {
        res.writeHead(200, { 'content-length': 4 });
        res.write('tr');
        setTimeout(() => res.end('ic'), delay);
    } else if (req.url === '/to-name') {
        res.writeHead(302, { location: `http://localhost:${(req.socket.localPort ?? 0).toString()}/` }).end();
    } else if (req.url === '/to-stall') {
        res.writeHead(302, { location: '/stall' }).end();
    } else if (req.url === '/stall') {
        // Nothing: the client's bound must end it.
    } else {
        res.end('ok');
    }
}

/** A lookup of `localhost` that takes `delay` ms, answering 127.0.0.1. */
const slowLookup: LookupFunction = (hostname, options, callback) => {
    setTimeout(() => dnsLookup(hostname, { ...options, family: 4 }, callback as never), delay);
};

/** A lookup that never answers. */
const blackHoleLookup: LookupFunction = () => {};

let http: TestServer;
let https: TestServer;
const otel = setupOtel();
const agents = {
    http: new HttpAgent({ keepAlive: true }),
    https: new HttpsAgent({ keepAlive: true }),
    httpsAllowUnauthorized: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
};
const api = client.defaults({ events: true, agents });
const instrumentation = instrumentClient(api, {
    tracerProvider: otel.tracerProvider,
    meterProvider: otel.meterProvider,
    optionalMetrics: true,
    phaseEvents: true,
    // The moments and the exception as span events, which these tests read.
    spanEvents: true
});

beforeAll(async () => {
    [http, https] = await Promise.all([startHttp(handler), startHttps(handler)]);
});

afterAll(async () => {
    instrumentation.disable();
    for (const agent of Object.values(agents)) {
        agent.destroy();
    }

    await Promise.all([http.close(), https.close()]);
    await otel.shutdown();
});

/** The spans of one call, in the order their hops started. */
async function spansOf(call: () => Promise<unknown>): Promise<ReadableSpan[]> {
    otel.reset();
    await call().catch(() => {});
    return [...otel.spans()].sort((a, b) => toMs(a.startTime) - toMs(b.startTime));
}

const toMs = ([seconds, nanos]: [number, number]) => seconds * 1e3 + nanos / 1e6;
const eventNames = (span: ReadableSpan) => span.events.map((event) => event.name);
const phaseOf = (span: ReadableSpan, phase: keyof typeof PHASE_ATTRIBUTES) =>
    span.attributes[PHASE_ATTRIBUTES[phase]] as number | undefined;

async function points(name: string): Promise<{ attributes: Attributes; count: number; sum: number }[]> {
    const metrics = await otel.metrics();
    return (metrics.get(name)?.points ?? []).map((point) => ({
        attributes: point.attributes,
        ...(point.value as { count: number; sum: number })
    }));
}

/**
 * How long the failing resolvers below take. The lookup is measured from the socket's moment, taken
 * just after the resolver is called: a loaded machine descheduling the process in between shortens
 * the measure, so the tests ask for half of it — still far from the zero of a lookup not measured.
 */
const resolverDelay = 100;

describe('phases on client spans (README "Phases on client spans")', () => {
    it('a new plain-http connection: an event at each moment, in order, inside the span; no lookup, no TLS', async () => {
        const [span] = await spansOf(() => api.get(`${http.url}/think`));
        expect(eventNames(span!)).toEqual([
            PHASE_EVENTS.socket,
            PHASE_EVENTS.connect,
            PHASE_EVENTS.upload,
            PHASE_EVENTS.response,
            PHASE_EVENTS.end
        ]);
        const times = span!.events.map((event) => toMs(event.time));
        expect(times).toEqual([...times].sort((a, b) => a - b));
        // The span starts just after `timings.start` and ends after `end`: the events lie within it (1 ms of clock rounding).
        expect(times[0]!).toBeGreaterThanOrEqual(toMs(span!.startTime) - 1);
        expect(times.at(-1)!).toBeLessThanOrEqual(toMs(span!.endTime) + 1);
        // The server's think time is the first-byte phase.
        expect(phaseOf(span!, 'firstByte')).toBeGreaterThanOrEqual(atLeast);
        expect(phaseOf(span!, 'firstByte')).toBeLessThan(5);
        expect(phaseOf(span!, 'tcp')).toBeGreaterThanOrEqual(0);
        expect(phaseOf(span!, 'dns')).toBeUndefined();
        expect(phaseOf(span!, 'tls')).toBeUndefined();
        // The event gap and the attribute tell the same duration.
        const at = (name: string) => toMs(span!.events.find((event) => event.name === name)!.time);
        expect(at(PHASE_EVENTS.response) - at(PHASE_EVENTS.upload)).toBeCloseTo(phaseOf(span!, 'firstByte')! * 1000, 0);
    });

    it('a reused connection has no connect event and no tcp phase; a slow download is the download phase', async () => {
        await api.get(`${http.url}/`);
        const [span] = await spansOf(() => api.get(`${http.url}/trickle`));
        expect(eventNames(span!)).not.toContain(PHASE_EVENTS.connect);
        expect(phaseOf(span!, 'tcp')).toBeUndefined();
        expect(phaseOf(span!, 'download')).toBeGreaterThanOrEqual(atLeast);
        expect(eventNames(span!).at(-1)).toBe(PHASE_EVENTS.end);
    });

    it('a new https connection to a name: the lookup and the handshake, with the DNS and connection metrics', async () => {
        const url = `https://localhost:${https.port}/`;
        const [span] = await spansOf(() => api.get(url, { rejectUnauthorized: false, lookup: slowLookup }));
        expect(eventNames(span!)).toEqual([
            PHASE_EVENTS.socket,
            PHASE_EVENTS.lookup,
            PHASE_EVENTS.connect,
            PHASE_EVENTS.secureConnect,
            PHASE_EVENTS.upload,
            PHASE_EVENTS.response,
            PHASE_EVENTS.end
        ]);
        expect(phaseOf(span!, 'dns')).toBeGreaterThanOrEqual(dnsAtLeast);
        expect(phaseOf(span!, 'tls')).toBeGreaterThan(0);

        const lookups = (await points(METRIC_DNS_LOOKUP_DURATION)).filter(
            (point) =>
                point.attributes[ATTR_DNS_QUESTION_NAME] === 'localhost' &&
                point.attributes[ATTR_ERROR_TYPE] === undefined
        );
        expect(lookups).toHaveLength(1);
        expect(lookups[0]!.count).toBe(1);
        expect(lookups[0]!.sum).toBeCloseTo(phaseOf(span!, 'dns')!, 3);

        // The connection's duration is recorded when it closes: close the pool.
        expect(await points(METRIC_HTTP_CLIENT_CONNECTION_DURATION)).toEqual([]);
        agents.httpsAllowUnauthorized.destroy();
        await expect.poll(async () => (await points(METRIC_HTTP_CLIENT_CONNECTION_DURATION)).length).toBeGreaterThan(0);
        const [connection] = await points(METRIC_HTTP_CLIENT_CONNECTION_DURATION);
        expect(connection!.attributes).toMatchObject({
            [ATTR_SERVER_ADDRESS]: 'localhost',
            [ATTR_SERVER_PORT]: https.port,
            [ATTR_URL_SCHEME]: 'https',
            [ATTR_NETWORK_PEER_ADDRESS]: '127.0.0.1',
            'network.protocol.version': '1.1'
        });
        expect(connection!.count).toBe(1);
        expect(connection!.sum).toBeGreaterThan(0);
    });

    it('a lookup that runs out of time: its phase on the span of the hop that failed, a failed lookup in dns.lookup.duration', async () => {
        // The first hop goes to an IP literal (no lookup); the redirect names a host whose lookup never answers.
        const spans = await spansOf(() =>
            api.get(`${http.url}/to-name`, { lookup: blackHoleLookup, timeouts: { lookup: 100 }, redirects: 1 })
        );
        expect(spans).toHaveLength(2);
        const [redirect, failed] = spans;
        expect(redirect!.attributes[ATTR_TIMEOUT_PHASE]).toBeUndefined();
        expect(redirect!.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
        expect(failed!.attributes[ATTR_TIMEOUT_PHASE]).toBe('lookup');
        expect(failed!.attributes[ATTR_ERROR_TYPE]).toBe('timeout');
        expect(eventNames(failed!)).toEqual([PHASE_EVENTS.socket, 'exception']);

        const lookups = (await points(METRIC_DNS_LOOKUP_DURATION)).filter(
            (point) => point.attributes[ATTR_ERROR_TYPE] === 'timeout'
        );
        expect(lookups).toHaveLength(1);
        expect(lookups[0]!.attributes[ATTR_DNS_QUESTION_NAME]).toBe('localhost');
        expect(lookups[0]!.count).toBe(1);
        expect(lookups[0]!.sum).toBeGreaterThanOrEqual(0.08);
    });

    it('a name that does not resolve: a failed lookup with its error code', async () => {
        const notFound: LookupFunction = (hostname, _options, callback) => {
            const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
            setTimeout(() => callback(err, '', 4), resolverDelay);
        };
        const [span] = await spansOf(() => api.get(`http://nowhere.invalid:${http.port}/`, { lookup: notFound }));
        expect(span!.attributes[ATTR_ERROR_TYPE]).toBe('ENOTFOUND');
        expect(span!.attributes[ATTR_TIMEOUT_PHASE]).toBeUndefined();
        const failed = (await points(METRIC_DNS_LOOKUP_DURATION)).filter(
            (point) => point.attributes[ATTR_DNS_QUESTION_NAME] === 'nowhere.invalid'
        );
        expect(failed).toHaveLength(1);
        expect(failed[0]!.attributes[ATTR_ERROR_TYPE]).toBe('ENOTFOUND');
        expect(failed[0]!.sum).toBeGreaterThanOrEqual(resolverDelay / 2 / 1000);
    });

    it("a resolver's failure while the name resolves is a failed lookup; an error that does not say it is a resolver's, an abort, an address or a refused connection is none", async () => {
        // A resolver's failure of its own (here a DNS server's SERVFAIL), and an error without a code:
        // nothing in it, or in the hop's timings, tells it from a failure of a connection made elsewhere.
        const failing =
            (err: Error): LookupFunction =>
            (_hostname, _options, callback) =>
                setTimeout(() => callback(err, '', 4), resolverDelay);
        const servfail = Object.assign(new Error('queryA ESERVFAIL resolver.test'), { code: 'ESERVFAIL' });
        await spansOf(() => api.get(`http://servfail.test:${http.port}/`, { lookup: failing(servfail) }));
        await spansOf(() =>
            api.get(`http://plain.test:${http.port}/`, { lookup: failing(new Error('the resolver is down')) })
        );
        // Aborted while the name resolves: the lookup did not fail, the caller stopped waiting.
        const aborting = new AbortController();
        const abortedCall = api.get(`http://aborted.test:${http.port}/`, {
            lookup: blackHoleLookup,
            signal: aborting.signal
        });
        setTimeout(() => aborting.abort(), 20);
        await abortedCall.catch(() => {});
        // Nothing to resolve: an address that refuses the connection.
        await api.get(refusedUrl).catch(() => {});

        const failedLookups = (await points(METRIC_DNS_LOOKUP_DURATION)).filter(
            (point) => point.attributes[ATTR_ERROR_TYPE] !== undefined
        );
        const byName = Object.fromEntries(
            failedLookups.map((point) => [point.attributes[ATTR_DNS_QUESTION_NAME], point.attributes[ATTR_ERROR_TYPE]])
        );
        expect(byName['servfail.test']).toBe('ESERVFAIL');
        expect(byName).not.toHaveProperty('plain.test');
        expect(byName).not.toHaveProperty('aborted.test');
        expect(byName).not.toHaveProperty('127.0.0.1');
        const point = failedLookups.find((each) => each.attributes[ATTR_DNS_QUESTION_NAME] === 'servfail.test')!;
        expect(point.count).toBe(1);
        expect(point.sum).toBeGreaterThanOrEqual(resolverDelay / 2 / 1000);
    });

    it('a server that does not answer: the response phase on the span, its events up to the upload', async () => {
        const [span] = await spansOf(() => api.get(`${http.url}/stall`, { timeouts: { response: 100 } }));
        expect(span!.attributes[ATTR_TIMEOUT_PHASE]).toBe('response');
        expect(span!.attributes[ATTR_ERROR_TYPE]).toBe('timeout');
        // New or pooled, the connection was there and the request sent: nothing after the upload.
        expect(eventNames(span!).slice(-2)).toEqual([PHASE_EVENTS.upload, 'exception']);
        expect(eventNames(span!)).not.toContain(PHASE_EVENTS.response);
        expect(phaseOf(span!, 'firstByte')).toBeUndefined();
    });

    it('a retried response timeout: the phase on the span of each hop that ran out', async () => {
        const spans = await spansOf(() =>
            api.get(`${http.url}/stall`, { timeouts: { response: 80 }, retry: { limit: 1, backoff: () => 0 } })
        );
        expect(spans).toHaveLength(2);
        expect(spans.map((span) => span.attributes[ATTR_TIMEOUT_PHASE])).toEqual(['response', 'response']);
        expect(spans.map((span) => span.attributes[ATTR_ERROR_TYPE])).toEqual(['timeout', 'timeout']);
    });

    it('the deadline: named on the span of the hop it cut short', async () => {
        // The redirected hop never answers: a deadline long enough for the 302 whatever the load
        // always cuts that hop, the second.
        const spans = await spansOf(() => api.get(`${http.url}/to-stall`, { deadline: 1000, redirects: 1 }));
        expect(spans).toHaveLength(2);
        const [redirect, cut] = spans;
        expect(redirect!.attributes[ATTR_TIMEOUT_PHASE]).toBeUndefined();
        expect(cut!.attributes[ATTR_TIMEOUT_PHASE]).toBe('deadline');
        expect(cut!.attributes[ATTR_ERROR_TYPE]).toBe('timeout');
    });

    it("the connection and DNS metric names are the conventions' (copied, not imported from their incubating entry)", () => {
        expect(METRIC_HTTP_CLIENT_CONNECTION_DURATION).toBe(INCUBATING_CONNECTION_DURATION);
        expect(METRIC_DNS_LOOKUP_DURATION).toBe(INCUBATING_DNS_LOOKUP_DURATION);
        expect(ATTR_DNS_QUESTION_NAME).toBe(INCUBATING_DNS_QUESTION_NAME);
    });
});

describe('phaseEvents: false, the default', () => {
    const quietAgents = {
        http: new HttpAgent({ keepAlive: true }),
        https: new HttpsAgent({ keepAlive: true }),
        httpsAllowUnauthorized: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
    };
    const quiet = client.defaults({ events: true, agents: quietAgents });
    let handle: ClientInstrumentation;

    beforeAll(() => {
        handle = instrumentClient(quiet, { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider });
    });

    afterAll(() => {
        handle.disable();
        for (const agent of Object.values(quietAgents)) {
            agent.destroy();
        }
    });

    it('every phase an attribute and no event; the phases add up to the span, each moment its start plus the phases before it', async () => {
        const url = `https://localhost:${https.port}/think`;
        const phases = Object.keys(PHASE_ATTRIBUTES) as (keyof typeof PHASE_ATTRIBUTES)[];
        // The hop's timings start just before the span and end just before it, microseconds apart, unless the
        // process pauses between the two moments (a collection, the scheduler): on a loaded machine that is
        // milliseconds, now and then. A pause is rare; a phase missing or misplaced is in every hop: the closest
        // of three hops, each on a new connection, is held to the bound.
        let gap = Number.POSITIVE_INFINITY;
        for (let hop = 0; hop < 3 && gap >= 5; hop++) {
            quietAgents.httpsAllowUnauthorized.destroy();
            const [span] = await spansOf(() => quiet.get(url, { rejectUnauthorized: false, lookup: slowLookup }));
            expect(span!.events).toEqual([]);
            for (const phase of phases) {
                expect(phaseOf(span!, phase), phase).toBeGreaterThanOrEqual(0);
            }

            expect(phaseOf(span!, 'dns')).toBeGreaterThanOrEqual(dnsAtLeast);
            expect(phaseOf(span!, 'firstByte')).toBeGreaterThanOrEqual(atLeast);
            const sum = phases.reduce((total, phase) => total + phaseOf(span!, phase)!, 0);
            gap = Math.min(gap, Math.abs(sum * 1000 - (toMs(span!.endTime) - toMs(span!.startTime))));
        }

        expect(gap).toBeLessThan(5);
    });

    it('a hop that runs out of time: its phase and error.type as with the events, and no event (its exception is a log record)', async () => {
        const [span] = await spansOf(() => quiet.get(`${http.url}/stall`, { timeouts: { response: 100 } }));
        expect(span!.attributes[ATTR_TIMEOUT_PHASE]).toBe('response');
        expect(span!.attributes[ATTR_ERROR_TYPE]).toBe('timeout');
        expect(eventNames(span!)).toEqual([]);
        expect(phaseOf(span!, 'request')).toBeGreaterThanOrEqual(0);
        expect(phaseOf(span!, 'firstByte')).toBeUndefined();
    });
});
