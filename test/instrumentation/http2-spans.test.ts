import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_REQUEST_RESEND_COUNT,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_NETWORK_PROTOCOL_VERSION,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    ATTR_URL_FULL,
    METRIC_HTTP_CLIENT_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
    ATTR_HTTP2_GOAWAY_ERROR_CODE,
    ATTR_HTTP2_SESSION_END,
    ATTR_RESEND_REASON,
    ATTR_RESENT,
    instrumentClient,
    PHASE_ATTRIBUTES
} from '../../instrumentation/index.js';
import {
    ATTR_HTTP_CONNECTION_STATE,
    ATTR_NETWORK_PEER_ADDRESS,
    ATTR_URL_SCHEME,
    METRIC_HTTP_CLIENT_CONNECTION_DURATION,
    METRIC_HTTP_CLIENT_OPEN_CONNECTIONS
} from '../../instrumentation/semconv.js';
import { Client, type Http2Options } from '../../src/client/index.js';
import { expectReleased, timersBefore } from '../client/wire/http2/released.js';
import {
    type Http2Handler,
    type Http2TestServer,
    type Relay,
    startHttp2,
    startRelay
} from '../client/wire/http2/servers.js';
import { rejection } from '../client/wire/http2/settling.js';
import { setupOtel } from './otel.js';

/**
 * What the spans and metrics of the instrumentation say of HTTP/2 (README "HTTP/2", "Metrics"): the
 * protocol version spelled `2`, a session counted as one connection of the pool, active while it
 * carries a stream, whose duration is recorded once when it closes; on the span of a hop whose
 * session ended under it, how it ended (GOAWAY and its code, an unanswered PING), and on the hop that
 * re-sends it, why.
 */

const { constants } = http2;
type ServerStream = http2.ServerHttp2Stream;

let timers = 0;
let otel: ReturnType<typeof setupOtel>;
let api: Client;
// What each test started, closed after it whatever its outcome.
let closers: (() => Promise<void>)[];

beforeEach(() => {
    timers = timersBefore();
    closers = [];
});

afterEach(async () => {
    // The last started first: the client and its instrumentation before the servers it spoke to.
    for (const close of closers.reverse()) {
        await close();
    }
});

/** A client of its own (pools included), instrumented with the optional metrics into an SDK of its own. */
function instrumented(http2Option: Http2Options, extra: object = {}): Client {
    otel = setupOtel();
    api = new Client().defaults({ events: true, rejectUnauthorized: false, http2: http2Option, ...extra });
    const instrumentation = instrumentClient(api, {
        tracerProvider: otel.tracerProvider,
        meterProvider: otel.meterProvider,
        optionalMetrics: true,
        // The exception as a span event, which these tests read.
        spanEvents: true
    });
    const [ownOtel, ownAgents] = [otel, api.agents];
    closers.push(async () => {
        instrumentation.disable();
        await ownOtel.shutdown();
        // A test that failed before expectReleased() leaves no connection behind either.
        for (const agent of [ownAgents.http, ownAgents.https, ownAgents.httpsAllowUnauthorized]) {
            agent.destroy();
        }
    });
    return api;
}

async function h2Server(handler: Http2Handler | undefined, options: Parameters<typeof startHttp2>[1] = {}) {
    const server = await startHttp2(handler, options);
    closers.push(() => server.close());
    return server;
}

const toMs = ([seconds, nanos]: [number, number]) => seconds * 1e3 + nanos / 1e6;

/** The finished spans of the requests to `url`, in the order their hops started. */
function spansTo(url: string): ReadableSpan[] {
    return otel
        .spans()
        .filter((span) => span.attributes[ATTR_URL_FULL] === url)
        .sort((a, b) => toMs(a.startTime) - toMs(b.startTime));
}

/** The attributes tracewire adds of HTTP/2 sessions and re-sends, on one span. */
function transportAttributes(span: ReadableSpan): string[] {
    return Object.keys(span.attributes).filter(
        (name) => name.startsWith('tracewire.http2.') || name === ATTR_RESEND_REASON || name === ATTR_RESENT
    );
}

/**
 * The span of a hop the server never processed and the client sent again (docs/observability.md,
 * "Re-sent hops"): no ERROR status, no error.type, no exception; `tracewire.resent` says why it was sent again.
 */
function expectUnprocessedResend(span: ReadableSpan, reason: string): void {
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    expect(span.events.map((event) => event.name)).not.toContain('exception');
    expect(span.attributes[ATTR_RESENT]).toBe(reason);
}

/** The phase attributes a span has, by phase. */
function phasesOf(span: ReadableSpan): string[] {
    return Object.entries(PHASE_ATTRIBUTES)
        .filter(([, name]) => span.attributes[name] !== undefined)
        .map(([phase]) => phase);
}

/** `http.client.open_connections` now, by state, after checking every series names `origin`. */
async function openConnections(origin: { port: number }): Promise<Record<string, number>> {
    const byState: Record<string, number> = {};
    for (const point of (await otel.metrics()).get(METRIC_HTTP_CLIENT_OPEN_CONNECTIONS)?.points ?? []) {
        const state = point.attributes[ATTR_HTTP_CONNECTION_STATE] as string;
        expect(point.attributes).toEqual({
            [ATTR_HTTP_CONNECTION_STATE]: state,
            [ATTR_SERVER_ADDRESS]: '127.0.0.1',
            [ATTR_SERVER_PORT]: origin.port
        });
        byState[state] = point.value as number;
    }

    return byState;
}

describe('HTTP/2 on client spans and metrics', () => {
    it('a GET over h2 (TLS, ALPN): network.protocol.version 2 on the span and the duration, the phases of an HTTP/1.1 hop', async () => {
        // Also answers HTTP/1.1, for the same request without http2 to compare with.
        const server = await h2Server((_req, res) => res.end('hello'), { allowHTTP1: true });
        instrumented({ idleTimeout: 100 });
        const h2 = await api.get(`${server.url}/h2`);
        expect(h2.res.httpVersion).toBe('2.0');
        const h1 = await api.get(`${server.url}/h1`, { http2: false });
        expect(h1.res.httpVersion).toBe('1.1');

        await expect.poll(() => otel.spans().length).toBe(2);
        const [h2Span] = spansTo(`${server.url}/h2`);
        const [h1Span] = spansTo(`${server.url}/h1`);
        expect(h2Span!.attributes).toMatchObject({
            [ATTR_NETWORK_PROTOCOL_VERSION]: '2',
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200
        });
        expect(h2Span!.status.code).toBe(SpanStatusCode.UNSET);
        expect(transportAttributes(h2Span!)).toEqual([]);
        expect(h1Span!.attributes[ATTR_NETWORK_PROTOCOL_VERSION]).toBe('1.1');

        // Both opened a TLS connection to an address: every phase but the name lookup, as durations.
        expect(phasesOf(h2Span!)).toEqual(['wait', 'tcp', 'tls', 'request', 'firstByte', 'download']);
        expect(phasesOf(h2Span!)).toEqual(phasesOf(h1Span!));
        for (const name of Object.values(PHASE_ATTRIBUTES)) {
            const duration = h2Span!.attributes[name];
            expect(duration === undefined || (typeof duration === 'number' && duration >= 0)).toBe(true);
        }

        const durations = (await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION)).map((point) => ({
            version: point.attributes[ATTR_NETWORK_PROTOCOL_VERSION],
            count: point.count
        }));
        expect(durations).toEqual(
            expect.arrayContaining([
                { version: '2', count: 1 },
                { version: '1.1', count: 1 }
            ])
        );
        expect(durations).toHaveLength(2);
        await expectReleased(api, [server], timers);
    });

    it('streams multiplexed on one session: one connection, active then idle; its duration recorded once, when it closes', async () => {
        const held: http2.Http2ServerResponse[] = [];
        const server = await h2Server((_req, res) => {
            res.writeHead(200);
            res.write('he');
            held.push(res);
        });
        // A session that outlives the test's looks: the server closes it when the test says.
        instrumented({ idleTimeout: 60_000 });
        const calls = [1, 2, 3].map((n) => api.request('GET', `${server.url}/held/${n}`));
        await expect.poll(() => held.length).toBe(3);
        const responses = await Promise.all(calls);
        expect(server.sessions).toHaveLength(1);

        expect(await openConnections(server)).toEqual({ active: 1 });
        expect((await otel.metrics()).get(METRIC_HTTP_CLIENT_CONNECTION_DURATION)).toBeUndefined();

        const bodies = responses.map((res) => api.read(res));
        for (const res of held) {
            res.end('llo');
        }

        expect((await Promise.all(bodies)).map(String)).toEqual(['hello', 'hello', 'hello']);
        await expect.poll(() => openConnections(server)).toEqual({ active: 0, idle: 1 });
        // Each hop's socket is the session's: none of them ended it.
        expect((await otel.metrics()).get(METRIC_HTTP_CLIENT_CONNECTION_DURATION)).toBeUndefined();
        for (const span of otel.spans()) {
            expect(span.attributes[ATTR_NETWORK_PROTOCOL_VERSION]).toBe('2');
        }

        // The server ends the session (GOAWAY NO_ERROR, then the connection closes).
        server.sessions[0]!.close();
        const connectionDurations = async () =>
            (await otel.metrics()).get(METRIC_HTTP_CLIENT_CONNECTION_DURATION)?.points ?? [];
        await expect.poll(connectionDurations, { timeout: 10_000 }).toHaveLength(1);
        const [point] = await connectionDurations();
        expect(point!.attributes).toEqual({
            [ATTR_SERVER_ADDRESS]: '127.0.0.1',
            [ATTR_SERVER_PORT]: server.port,
            [ATTR_URL_SCHEME]: 'https',
            [ATTR_NETWORK_PROTOCOL_VERSION]: '2',
            [ATTR_NETWORK_PEER_ADDRESS]: '127.0.0.1'
        });
        expect((point!.value as { count: number }).count).toBe(1);
        await expect.poll(() => openConnections(server)).toEqual({ active: 0, idle: 0 });
        await expectReleased(api, [server], timers);
    });
});

describe("HTTP/2 hops in their own call's context", () => {
    it('concurrent calls of three callers on one session: each redirect hop is a child of its own caller', async () => {
        const server = await h2Server(undefined);
        server.server.on('stream', (stream, headers) => {
            const path = String(headers[':path']);
            if (path.startsWith('/moved/')) {
                // Answered once all three streams are open on the session, from its callbacks.
                setTimeout(() => {
                    stream.respond({ ':status': 302, location: `/target/${path.slice('/moved/'.length)}` });
                    stream.end();
                }, 20);
            } else {
                stream.respond({ ':status': 200 });
                stream.end('ok');
            }
        });
        instrumented({ idleTimeout: 100 }, { redirects: 1 });
        const tracer = otel.tracerProvider.getTracer('callers');
        const callers = ['a', 'b', 'c'].map((name) => tracer.startSpan(name));
        await Promise.all(
            callers.map((caller, i) =>
                context.with(trace.setSpan(context.active(), caller), () => api.get(`${server.url}/moved/${i}`))
            )
        );
        expect(server.sessions).toHaveLength(1);

        await expect.poll(() => otel.spans().length).toBe(6);
        for (const [i, caller] of callers.entries()) {
            const hops = [...spansTo(`${server.url}/moved/${i}`), ...spansTo(`${server.url}/target/${i}`)];
            expect(hops.map((span) => span.parentSpanContext?.spanId)).toEqual([
                caller.spanContext().spanId,
                caller.spanContext().spanId
            ]);
        }

        await expectReleased(api, [server], timers, { serversClose: false });
    });
});

describe('HTTP/2 session ends on the spans of the hops they failed', () => {
    let server: Http2TestServer;
    // The streams the server holds until `count` came; then `then` decides what to do with them.
    let onStream: (stream: ServerStream, headers: http2.IncomingHttpHeaders) => void;
    const lastProcessed = new WeakMap<http2.ServerHttp2Session, number>();

    function answer(stream: ServerStream): void {
        const last = lastProcessed.get(stream.session as http2.ServerHttp2Session) ?? Number.POSITIVE_INFINITY;
        if (!stream.destroyed && !stream.closed && !stream.headersSent && (stream.id ?? 0) <= last) {
            stream.respond({ ':status': 200 });
            stream.end('done');
        }
    }

    function goAwayAfter(count: number, code: number, answerFirst: boolean): void {
        const held: ServerStream[] = [];
        onStream = (stream) => {
            stream.resume();
            held.push(stream);
            if (held.length < count) {
                return;
            }

            onStream = (next) => {
                next.resume();
                answer(next);
            };
            const [first] = held as [ServerStream];
            const session = first.session as http2.ServerHttp2Session;
            // The server processed only the first stream: those above it are for a new session.
            lastProcessed.set(session, first.id ?? 0);
            session.goaway(code, first.id ?? 0);
            if (answerFirst) {
                setTimeout(() => answer(first), 20);
            }
        };
    }

    beforeEach(async () => {
        server = await h2Server(undefined);
        server.server.on('stream', (stream, headers) => onStream(stream, headers));
        instrumented({ idleTimeout: 100 });
    });

    it('GOAWAY NO_ERROR mid-flight: the cut hop says so, the hop that re-sends it says why; the call succeeds', async () => {
        goAwayAfter(2, constants.NGHTTP2_NO_ERROR, true);
        const [a, b] = await Promise.all(['a', 'b'].map((id) => api.get(`${server.url}/${id}`)));
        expect(String(a!.payload)).toBe('done');
        expect(String(b!.payload)).toBe('done');
        expect(server.sessions).toHaveLength(2);

        await expect.poll(() => otel.spans().length).toBe(3);
        // The processed stream completed on the session that went away: nothing failed it.
        const [processed] = spansTo(`${server.url}/a`);
        expect(processed!.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(200);
        expect(transportAttributes(processed!)).toEqual([]);

        const [cut, resent, ...more] = spansTo(`${server.url}/b`);
        expect(more).toEqual([]);
        // Never processed, sent again, answered: no error anyone saw; the span says what happened instead.
        expectUnprocessedResend(cut!, 'http2-goaway');
        expect(cut!.attributes).toMatchObject({
            [ATTR_HTTP2_SESSION_END]: 'goaway',
            [ATTR_HTTP2_GOAWAY_ERROR_CODE]: 'NO_ERROR'
        });
        expect(cut!.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBeUndefined();
        expect(cut!.attributes[ATTR_RESEND_REASON]).toBeUndefined();
        expect(cut!.attributes[ATTR_HTTP_REQUEST_RESEND_COUNT]).toBeUndefined();
        expect(transportAttributes(cut!).sort()).toEqual(
            [ATTR_HTTP2_GOAWAY_ERROR_CODE, ATTR_HTTP2_SESSION_END, ATTR_RESENT].sort()
        );

        expect(resent!.status.code).toBe(SpanStatusCode.UNSET);
        expect(resent!.attributes).toMatchObject({
            [ATTR_RESEND_REASON]: 'http2-goaway',
            [ATTR_HTTP_REQUEST_RESEND_COUNT]: 1,
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
            [ATTR_NETWORK_PROTOCOL_VERSION]: '2'
        });
        expect(transportAttributes(resent!)).toEqual([ATTR_RESEND_REASON]);
        // The duration points: two hops answered 200, the cut one with no error.type but the reason it was sent again.
        const points = (await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION)).map((point) => ({
            status: point.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE],
            error: point.attributes[ATTR_ERROR_TYPE],
            resent: point.attributes[ATTR_RESENT],
            count: point.count
        }));
        expect(points).toEqual(
            expect.arrayContaining([
                { status: 200, error: undefined, resent: undefined, count: 2 },
                { status: undefined, error: undefined, resent: 'http2-goaway', count: 1 }
            ])
        );
        expect(points).toHaveLength(2);
        await expectReleased(api, [server], timers, { serversClose: false });
    });

    it('GOAWAY with an error code: the processed stream it fails names the code, the re-sent one succeeds', async () => {
        goAwayAfter(2, constants.NGHTTP2_INTERNAL_ERROR, false);
        const [a, b] = ['a', 'b'].map((id) => api.get(`${server.url}/${id}`));
        const err = await rejection(a!);
        expect(err.output.statusCode).toBe(502);
        expect(String((await b!).payload)).toBe('done');

        await expect.poll(() => otel.spans().length).toBe(3);
        const [failed, ...moreA] = spansTo(`${server.url}/a`);
        expect(moreA).toEqual([]);
        expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
        expect(failed!.attributes).toMatchObject({
            [ATTR_HTTP2_SESSION_END]: 'goaway',
            [ATTR_HTTP2_GOAWAY_ERROR_CODE]: 'INTERNAL_ERROR'
        });
        // The processed stream's failure reached its caller: an error, with its exception.
        expect(failed!.attributes[ATTR_ERROR_TYPE]).toBe('ERR_HTTP2_SESSION_ERROR');
        expect(failed!.events.map((event) => event.name)).toEqual(['exception']);
        expect(failed!.attributes[ATTR_RESENT]).toBeUndefined();
        const [cut, resent] = spansTo(`${server.url}/b`);
        expectUnprocessedResend(cut!, 'http2-goaway');
        expect(cut!.attributes).toMatchObject({
            [ATTR_HTTP2_SESSION_END]: 'goaway',
            [ATTR_HTTP2_GOAWAY_ERROR_CODE]: 'INTERNAL_ERROR'
        });
        expect(resent!.attributes).toMatchObject({
            [ATTR_RESEND_REASON]: 'http2-goaway',
            [ATTR_HTTP_REQUEST_RESEND_COUNT]: 1,
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200
        });
        await expectReleased(api, [server], timers, { serversClose: false });
    });
});

describe('HTTP/2 REFUSED_STREAM on the spans', () => {
    let server: Http2TestServer;
    beforeEach(async () => {
        server = await h2Server(undefined);
        instrumented({ idleTimeout: 100 });
    });

    /** Refuses the first `refusals` streams, then answers. */
    function refuse(refusals: number): void {
        server.server.on('stream', (stream) => {
            if (refusals-- > 0) {
                stream.close(constants.NGHTTP2_REFUSED_STREAM);
            } else {
                stream.respond({ ':status': 200 });
                stream.end('done');
            }
        });
    }

    it('refused once: the refused hop is no error, says it was sent again and why; the re-send succeeds', async () => {
        refuse(1);
        expect(String((await api.get(`${server.url}/refused-once`)).payload)).toBe('done');

        await expect.poll(() => otel.spans().length).toBe(2);
        const [refused, resent] = spansTo(`${server.url}/refused-once`);
        expectUnprocessedResend(refused!, 'http2-refused-stream');
        expect(transportAttributes(refused!)).toEqual([ATTR_RESENT]);
        expect(resent!.status.code).toBe(SpanStatusCode.UNSET);
        expect(resent!.attributes).toMatchObject({
            [ATTR_RESEND_REASON]: 'http2-refused-stream',
            [ATTR_HTTP_REQUEST_RESEND_COUNT]: 1,
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200
        });
        await expectReleased(api, [server], timers, { serversClose: false });
    });

    it('refused twice: the first hop is a re-sent one, the second is the error the caller got', async () => {
        refuse(2);
        const err = await rejection(api.request('DELETE', `${server.url}/refused-twice`));
        expect(err.output.statusCode).toBe(502);

        await expect.poll(() => otel.spans().length).toBe(2);
        const [refused, failed] = spansTo(`${server.url}/refused-twice`);
        expectUnprocessedResend(refused!, 'http2-refused-stream');
        expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
        expect(failed!.attributes).toMatchObject({
            [ATTR_ERROR_TYPE]: 'ERR_HTTP2_REFUSED_STREAM',
            [ATTR_RESEND_REASON]: 'http2-refused-stream'
        });
        expect(failed!.attributes[ATTR_RESENT]).toBeUndefined();
        expect(failed!.events.map((event) => event.name)).toEqual(['exception']);
        const errors = (await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION)).map((point) => ({
            error: point.attributes[ATTR_ERROR_TYPE],
            resent: point.attributes[ATTR_RESENT]
        }));
        expect(errors).toEqual(
            expect.arrayContaining([
                { error: undefined, resent: 'http2-refused-stream' },
                { error: 'ERR_HTTP2_REFUSED_STREAM', resent: undefined }
            ])
        );
        expect(errors).toHaveLength(2);
        await expectReleased(api, [server], timers, { serversClose: false });
    });
});

describe('HTTP/2 a session that stops answering PINGs, on the spans', () => {
    let server: Http2TestServer;
    let relay: Relay;
    beforeEach(async () => {
        // The first request is left unanswered (its connection goes silent under it); the others are answered.
        let requests = 0;
        server = await h2Server(
            (req, res) => {
                requests++;
                if (requests > 1) {
                    res.end(`answered ${req.url}`);
                }
            },
            { h2c: true }
        );
        relay = await startRelay(server);
        // Closed before the server, as its connections are the server's clients.
        closers.push(() => relay.close());
    });

    const watched: Http2Options = { h2c: true, pingInterval: 50, pingTimeout: 300, idleTimeout: 100 };

    /** Makes the connection go silent once the request's stream reached the server. */
    async function silence(): Promise<void> {
        await expect.poll(() => server.streams.length).toBe(1);
        relay.freeze();
    }

    it('without retry: the failed hop has tracewire.http2.session_end ping-timeout, and no GOAWAY code', async () => {
        instrumented(watched);
        const call = api.get(`${relay.url}/silent`);
        await silence();
        const err = await rejection(call);
        expect(err.output.statusCode).toBe(502);

        await expect.poll(() => otel.spans().length).toBe(1);
        const [span] = spansTo(`${relay.url}/silent`);
        expect(span!.status.code).toBe(SpanStatusCode.ERROR);
        expect(span!.attributes[ATTR_HTTP2_SESSION_END]).toBe('ping-timeout');
        expect(transportAttributes(span!)).toEqual([ATTR_HTTP2_SESSION_END]);
        await expectReleased(api, [relay], timers);
    });

    it('with retry: the first hop says ping-timeout, the retry succeeds as a re-send with no resend reason', async () => {
        instrumented(watched, { retry: { limit: 1, backoff: () => 0 } });
        const call = api.get(`${relay.url}/silent`);
        await silence();
        expect(String((await call).payload)).toBe('answered /silent');
        expect(relay.connections).toBe(2);

        await expect.poll(() => otel.spans().length).toBe(2);
        const [first, retried] = spansTo(`${relay.url}/silent`);
        expect(first!.status.code).toBe(SpanStatusCode.ERROR);
        expect(first!.attributes[ATTR_HTTP2_SESSION_END]).toBe('ping-timeout');
        expect(retried!.attributes).toMatchObject({
            [ATTR_HTTP_REQUEST_RESEND_COUNT]: 1,
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
            [ATTR_NETWORK_PROTOCOL_VERSION]: '2'
        });
        expect(transportAttributes(retried!)).toEqual([]);
        await expectReleased(api, [relay], timers);
    });
});

describe('HTTP/1.1 unchanged', () => {
    let server: HttpServer;
    beforeEach(async () => {
        server = createHttpServer((_req, res) => res.end('plain'));
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        closers.push(
            () =>
                new Promise<void>((resolve) => {
                    server.closeAllConnections();
                    server.close(() => resolve());
                })
        );
    });

    it('a plain http GET from a client with http2 on: network.protocol.version 1.1, no tracewire.http2.* attribute', async () => {
        instrumented({ idleTimeout: 100 });
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/plain`;
        const { payload } = await api.get(url);
        expect(String(payload)).toBe('plain');

        await expect.poll(() => otel.spans().length).toBe(1);
        const [span] = spansTo(url);
        expect(span!.attributes).toMatchObject({
            [ATTR_NETWORK_PROTOCOL_VERSION]: '1.1',
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200
        });
        expect(transportAttributes(span!)).toEqual([]);
        const durations = await otel.histogram(METRIC_HTTP_CLIENT_REQUEST_DURATION);
        expect(durations.map((point) => point.attributes[ATTR_NETWORK_PROTOCOL_VERSION])).toEqual(['1.1']);
        await expectReleased(api, [], timers);
    });
});
