import * as http2 from 'node:http2';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client, type ResponseDetails } from '../../../../src/client/index.js';
import { type RawConnection, type RawHttp2Server, startRawHttp2 } from './raw-server.js';
import { expectReleased, timersBefore } from './released.js';
import { type Http2TestServer, startHttp2 } from './servers.js';
import { codeOf, rejection, settled } from './settling.js';

/**
 * Servers that cut an exchange on purpose (README "HTTP/2"): a stream reset with each error code
 * (written by hand: raw-server.ts), a stream destroyed, its session destroyed or told to go away
 * with an error, its connection closed, a body ended short of its content-length — before the
 * response, and half way through its body. Whatever cuts it, the promise settles: a 502 before the
 * response (not re-sent unless `retry`), and after it a read that fails, never a truncated body
 * passed off as complete; a stream's reset keeps its session for the next request, a session's end
 * closes it.
 */

const { constants } = http2;

/** How a server cuts one stream; `session`: the session goes with it. */
interface Cut {
    readonly name: string;
    readonly session?: boolean;
    /** With `node:http2`. */
    readonly node?: (stream: http2.ServerHttp2Stream, socket: Socket) => void;
    /** With frames written by hand. */
    readonly raw?: (connection: RawConnection, streamId: number) => void;
}

const resetCodes = [
    ['NO_ERROR', constants.NGHTTP2_NO_ERROR],
    ['PROTOCOL_ERROR', constants.NGHTTP2_PROTOCOL_ERROR],
    ['INTERNAL_ERROR', constants.NGHTTP2_INTERNAL_ERROR],
    ['FLOW_CONTROL_ERROR', constants.NGHTTP2_FLOW_CONTROL_ERROR],
    ['STREAM_CLOSED', constants.NGHTTP2_STREAM_CLOSED],
    ['CANCEL', constants.NGHTTP2_CANCEL],
    ['ENHANCE_YOUR_CALM', constants.NGHTTP2_ENHANCE_YOUR_CALM],
    ['HTTP_1_1_REQUIRED', constants.NGHTTP2_HTTP_1_1_REQUIRED],
    ['an unknown code', 0xabc]
] as const;

const cuts: Cut[] = [
    ...resetCodes.map(([name, code]) => ({
        name: `RST_STREAM ${name}`,
        raw: (connection: RawConnection, id: number) => connection.rst(id, code)
    })),
    {
        name: 'GOAWAY NO_ERROR naming the stream processed, then the connection closed',
        session: true,
        raw: (connection, id) => {
            connection.goaway(id, constants.NGHTTP2_NO_ERROR);
            connection.socket.end();
        }
    },
    { name: 'the connection closed (raw)', session: true, raw: (connection) => connection.socket.destroy() },
    { name: 'the stream destroyed (Node: RST_STREAM NO_ERROR)', node: (stream) => stream.destroy() },
    {
        name: 'the stream destroyed with an error (Node: INTERNAL_ERROR)',
        node: (stream) => stream.destroy(new Error('x'))
    },
    { name: 'the session destroyed (Node)', session: true, node: (stream) => stream.session?.destroy() },
    {
        name: 'GOAWAY INTERNAL_ERROR naming the stream processed (Node)',
        session: true,
        node: (stream) => stream.session?.goaway(constants.NGHTTP2_INTERNAL_ERROR, stream.id)
    },
    { name: 'the connection closed (Node)', session: true, node: (_stream, socket) => socket.destroy() }
];

let server: Http2TestServer;
let raw: RawHttp2Server;
// What the servers do with the next stream of /before or /mid (the raw server: with its next stream).
let cut: Cut = cuts[0] as Cut;
let when: 'before' | 'mid' | 'answer' = 'answer';
// The requests of /flaky so far: the first of each pair is reset.
let flaky = 0;
// How the raw server answers its next stream, when a test writes the whole answer itself.
let rawAnswer: ((connection: RawConnection, streamId: number) => void) | undefined;

beforeAll(async () => {
    server = await startHttp2(undefined);
    server.server.on('stream', (stream, headers) => {
        // The session's own socket is a proxy that refuses destroy(): the connection as accepted.
        const port = stream.session?.socket.remotePort;
        const socket = server.connections.find((one) => one.remotePort === port) as Socket;
        const path = headers[':path'];
        if (path === '/before') {
            cut.node?.(stream, socket);
        } else if (path === '/mid') {
            stream.respond({ ':status': 200, 'content-type': 'text/plain' });
            stream.write('the first half of the body, ', () => setTimeout(() => cut.node?.(stream, socket), 20));
        } else if (path === '/short') {
            stream.respond({ ':status': 200, 'content-length': 1000 });
            stream.end('fewer than a thousand bytes');
        } else if (path === '/flaky' && flaky++ % 2 === 0) {
            stream.destroy(new Error('every other one'));
        } else {
            stream.respond({ ':status': 200 });
            stream.end('fine');
        }
    });
    raw = await startRawHttp2((connection) => {
        connection.settings();
        connection.on('request', (id: number) => {
            const written = rawAnswer;
            rawAnswer = undefined;
            if (written !== undefined) {
                written(connection, id);
                return;
            }

            const now = when;
            when = 'answer';
            if (now === 'before') {
                cut.raw?.(connection, id);
            } else if (now === 'mid') {
                connection.headers(id, 200, { 'content-type': 'text/plain' });
                connection.data(id, 'the first half of the body, ');
                setTimeout(() => cut.raw?.(connection, id), 20);
            } else {
                connection.headers(id, 200);
                connection.data(id, 'fine', true);
            }
        });
    });
});

afterAll(async () => {
    await server.close();
    await raw.close();
});

let timers = 0;
let api: Client;
beforeEach(() => {
    // A cut written for the other server leaves this one's next stream to be answered.
    when = 'answer';
    timers = timersBefore();
    api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
});

/** The URL of `path` on the server the cut is written for, ready to cut the next stream `at`. */
function cutting(one: Cut, at: 'before' | 'mid'): string {
    cut = one;
    when = at;
    return one.raw === undefined ? `${server.url}/${at}` : `${raw.url}/${at}`;
}

function connectionsOf(one: Cut): number {
    return one.raw === undefined ? server.connections.length : raw.connections.length;
}

function serversOf(one: Cut) {
    return one.raw === undefined ? [server] : [raw];
}

describe('HTTP/2 resets: a stream cut before its response', () => {
    for (const one of cuts) {
        it(`${one.name}: a 502, not re-sent; ${one.session ? 'a new session' : 'the session kept'} for the next request`, async () => {
            const base = one.raw === undefined ? server.url : raw.url;
            await api.get(`${base}/warm`);
            const connections = connectionsOf(one);
            const hops: ResponseDetails[] = [];
            const traced = api.defaults({ events: true });
            traced.events?.on('response', (_err, details) => hops.push(details));
            const err = await rejection(traced.request('GET', cutting(one, 'before')));
            expect(err.output.statusCode).toBe(502);
            expect(err.message).toMatch(/^Client request error: /);
            expect(codeOf(err)).toMatch(/^ERR_HTTP2_|^ECONNRESET$/);
            expect(hops).toHaveLength(1);
            const { res } = await api.get(`${base}/after`);
            expect(res.statusCode).toBe(200);
            expect(connectionsOf(one) - connections).toBe(one.session ? 1 : 0);
            await expectReleased(api, serversOf(one), timers);
        });
    }

    it('a reset before the response is sent again with retry, and the retry succeeds on the same session', async () => {
        const traced = api.defaults({ events: true });
        const hops: (string | undefined)[] = [];
        traced.events?.on('response', (err) => hops.push(err === undefined ? 'ok' : codeOf(err)));
        const streams = server.streams.length;
        const { res, payload } = await traced.get(`${server.url}/flaky`, { retry: { limit: 1, backoff: () => 0 } });
        expect(res.statusCode).toBe(200);
        expect(String(payload)).toBe('fine');
        expect(hops).toEqual(['ERR_HTTP2_STREAM_ERROR', 'ok']);
        expect(server.streams.length - streams).toBe(2);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 resets: a stream cut half way through its body', () => {
    for (const one of cuts) {
        it(`${one.name}: the read fails, never a truncated body passed off as whole`, async () => {
            const { value, err } = await settled(api.get(cutting(one, 'mid')));
            expect(value).toBeUndefined();
            expect(err?.message).toBe('Payload stream closed prematurely');
            expect(err?.output.statusCode).toBe(500);

            const res = await api.request('GET', cutting(one, 'mid'));
            expect(res.statusCode).toBe(200);
            const read = await settled(api.read(res));
            expect(read.value).toBeUndefined();
            expect(read.err?.message).toBe('Payload stream closed prematurely');
            expect(res.complete).toBe(false);
            const base = one.raw === undefined ? server.url : raw.url;
            const { res: after } = await api.get(`${base}/after`);
            expect(after.statusCode).toBe(200);
            await expectReleased(api, serversOf(one), timers);
        });
    }

    it('a body ended short of its content-length fails its read', async () => {
        const { value, err } = await settled(api.get(`${server.url}/short`));
        expect(value).toBeUndefined();
        expect(err?.message).toBe('Payload stream closed prematurely');
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 resets: RST_STREAM after the body, without END_STREAM', () => {
    // Seen from Node's own server under load: every byte its content-length declares, then RST_STREAM
    // NO_ERROR where the last (empty) DATA frame with END_STREAM should have been.
    const body = Buffer.alloc(40_000, 'x');
    const cases = [
        {
            name: 'NO_ERROR after every declared byte',
            length: body.length,
            code: constants.NGHTTP2_NO_ERROR,
            whole: true
        },
        {
            name: 'NO_ERROR with bytes still declared',
            length: body.length + 1,
            code: constants.NGHTTP2_NO_ERROR,
            whole: false
        },
        {
            name: 'NO_ERROR after a body of no declared length',
            length: undefined,
            code: constants.NGHTTP2_NO_ERROR,
            whole: false
        },
        { name: 'CANCEL after every declared byte', length: body.length, code: constants.NGHTTP2_CANCEL, whole: false }
    ];
    for (const one of cases) {
        it(`${one.name}: ${one.whole ? 'the body is whole' : 'the read fails'}`, async () => {
            rawAnswer = (connection, id) => {
                connection.headers(id, 200, one.length === undefined ? {} : { 'content-length': String(one.length) });
                // In frames of the default maximum size, the first window's worth.
                for (let at = 0; at < body.length; at += 16_384) {
                    connection.data(id, body.subarray(at, at + 16_384));
                }

                setTimeout(() => connection.rst(id, one.code), 20);
            };
            const { value, err } = await settled(api.get(`${raw.url}/framed`));
            if (one.whole) {
                expect(err).toBeUndefined();
                expect(value?.payload).toEqual(body);
                expect(value?.res.complete).toBe(true);
            } else {
                expect(value).toBeUndefined();
                expect(err?.message).toBe('Payload stream closed prematurely');
            }

            const { res: after } = await api.get(`${raw.url}/after`);
            expect(after.statusCode).toBe(200);
            await expectReleased(api, [raw], timers);
        });
    }

    it('a HEAD answered with a content-length, then NO_ERROR: the response is whole (it has no body)', async () => {
        rawAnswer = (connection, id) => {
            connection.headers(id, 200, { 'content-length': '1000' });
            setTimeout(() => connection.rst(id, constants.NGHTTP2_NO_ERROR), 20);
        };
        const res = await api.request('HEAD', `${raw.url}/framed`);
        const payload = (await api.read(res)) as Buffer;
        expect(payload.length).toBe(0);
        expect(res.complete).toBe(true);
        await expectReleased(api, [raw], timers);
    });
});
