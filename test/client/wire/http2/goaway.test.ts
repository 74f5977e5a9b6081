import * as http2 from 'node:http2';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, type RequestUri, type ResendReason } from '../../../../src/client/index.js';
import type { HttpError } from '../../../../src/errors/index.js';
import { seeded } from '../../../seeded.js';
import { startRawHttp2 } from './raw-server.js';
import { expectReleased, timersBefore } from './released.js';
import { type Http2TestServer, startHttp2 } from './servers.js';
import { codeOf, rejection, settled } from './settling.js';

/**
 * What a server says it did not process (README "HTTP/2"; RFC 9113 6.8, 8.7): the streams above a
 * GOAWAY's last stream id, and a REFUSED_STREAM. They are sent again at once, once, on a session
 * that can take them, whatever their method, when their payload can be sent again; the streams the
 * server processed complete (after a GOAWAY NO_ERROR) or fail (after one with an error).
 */

const { constants } = http2;
type ServerStream = http2.ServerHttp2Stream;

let server: Http2TestServer;
// What the server does with the streams of the test: by default, answer each with its x-id and body.
let onStream: (stream: ServerStream, headers: http2.IncomingHttpHeaders) => void = answer;
// The x-id of each request the server answered (processed), in order.
let processed: string[] = [];

// The last stream id of the GOAWAY each session sent: the streams above it are not processed.
const lastProcessed = new WeakMap<http2.ServerHttp2Session, number>();

/** A GOAWAY, once per session: a second one may not raise the last stream id (RFC 9113 6.8). */
function goAway(stream: ServerStream, code: number, lastStreamId: number): void {
    const session = stream.session as http2.ServerHttp2Session;
    if (!lastProcessed.has(session)) {
        lastProcessed.set(session, lastStreamId);
        session.goaway(code, lastStreamId);
    }
}

function answer(stream: ServerStream, headers: http2.IncomingHttpHeaders): void {
    const chunks: Buffer[] = [];
    const respond = () => {
        const last = lastProcessed.get(stream.session as http2.ServerHttp2Session) ?? Number.POSITIVE_INFINITY;
        if (stream.destroyed || stream.closed || stream.headersSent || (stream.id ?? 0) > last) {
            return;
        }

        processed.push(String(headers['x-id']));
        stream.respond({ ':status': 200 });
        stream.end(`${headers['x-id']} ${headers[':method']} ${Buffer.concat(chunks).toString()}`);
    };
    if (stream.readableEnded) {
        // Node may have read an empty body to its end already.
        respond();
    } else {
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', respond);
    }
}

let timers = 0;
let api: Client;
let resends: { id: string; reason: ResendReason | undefined }[];
beforeEach(async () => {
    timers = timersBefore();
    processed = [];
    onStream = answer;
    server = await startHttp2(undefined);
    server.server.on('stream', (stream, headers) => onStream(stream, headers));
    api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false, events: true });
    resends = [];
    api.events?.on('preRequest', (uri: RequestUri) =>
        resends.push({ id: String(uri.headers['x-id']), reason: uri.resendReason })
    );
});

afterEach(() => server.close());

/** Holds the session's first `count` streams; once all came, `then` decides what to do with them. */
type Held = [ServerStream, http2.IncomingHttpHeaders];

function whenStreams(count: number, then: (first: Held, streams: Held[]) => void): void {
    const held: Held[] = [];
    onStream = (stream, headers) => {
        held.push([stream, headers]);
        if (held.length === count) {
            onStream = answer;
            then(held[0] as Held, held);
        }
    };
}

function get(id: string, options: object = {}) {
    return api.request('GET', `${server.url}/${id}`, { headers: { 'x-id': id }, ...options });
}

async function body(promise: ReturnType<typeof get>): Promise<string> {
    return String(await api.read(await promise));
}

describe('HTTP/2 GOAWAY: the streams above the last stream id are sent again, once', () => {
    it('GOAWAY NO_ERROR: the processed stream completes on its session, the others are re-sent on a new one', async () => {
        whenStreams(3, ([first]) => {
            goAway(first, constants.NGHTTP2_NO_ERROR, first.id ?? 0);
            setTimeout(() => answer(first, { 'x-id': 'a', ':method': 'GET' }), 20);
        });
        const results = await Promise.all(['a', 'b', 'c'].map((id) => body(get(id))));
        expect(results).toEqual(['a GET ', 'b GET ', 'c GET ']);
        expect(processed.sort()).toEqual(['a', 'b', 'c']);
        expect(resends).toEqual([
            { id: 'a', reason: undefined },
            { id: 'b', reason: undefined },
            { id: 'c', reason: undefined },
            { id: 'b', reason: 'http2-goaway' },
            { id: 'c', reason: 'http2-goaway' }
        ]);
        expect(server.sessions).toHaveLength(2);
        expect(server.streams.slice(3).map((stream) => server.sessionOf(stream))).toEqual([1, 1]);
        await expectReleased(api, [server], timers, { serversClose: false });
    });

    it('re-sends a POST with a Buffer payload too: the server said it did not process it', async () => {
        whenStreams(2, ([first, headers]) => {
            goAway(first, constants.NGHTTP2_NO_ERROR, first.id ?? 0);
            answer(first, headers);
        });
        const posts = ['p1', 'p2'].map((id) =>
            api.request('POST', `${server.url}/post`, {
                headers: { 'x-id': id },
                payload: Buffer.from(`body of ${id}`)
            })
        );
        const results = await Promise.all(posts.map((promise) => promise.then((res) => api.read(res)).then(String)));
        expect(results).toEqual(['p1 POST body of p1', 'p2 POST body of p2']);
        expect(processed).toEqual(['p1', 'p2']);
        expect(resends.filter(({ reason }) => reason === 'http2-goaway').map(({ id }) => id)).toEqual(['p2']);
        await expectReleased(api, [server], timers, { serversClose: false });
    });

    it('re-sends a stream payload from the copy kept for it (http2 keeps one, as redirects and retry do)', async () => {
        whenStreams(2, ([first, headers]) => {
            goAway(first, constants.NGHTTP2_NO_ERROR, first.id ?? 0);
            answer(first, headers);
        });
        const post = (id: string) =>
            api.request('POST', `${server.url}/post`, {
                headers: { 'x-id': id },
                payload: Readable.from([`streamed ${id}`])
            });
        const results = await Promise.all(
            [post('s1'), post('s2')].map((promise) => promise.then((res) => api.read(res)).then(String))
        );
        expect(results).toEqual(['s1 POST streamed s1', 's2 POST streamed s2']);
        expect(processed).toEqual(['s1', 's2']);
        expect(resends.filter(({ reason }) => reason === 'http2-goaway').map(({ id }) => id)).toEqual(['s2']);
        await expectReleased(api, [server], timers, { serversClose: false });
    });

    it('fails a stream payload read past its copy (1 MiB) with a 502, data.code ERR_HTTP2_GOAWAY', async () => {
        // The server takes the whole body of the second stream in (a window of 4 MiB), then says it
        // processed only the first (Node's goaway() takes a last stream id of 0 as "the last processed").
        await server.close();
        server = await startHttp2(undefined, { settings: { initialWindowSize: 4 * 1024 * 1024 } });
        let first: [ServerStream, http2.IncomingHttpHeaders] | undefined;
        server.server.on('stream', (stream, headers) => {
            if (first === undefined) {
                first = [stream, headers];
                return;
            }

            stream.resume();
            stream.on('end', () => {
                const [held, heldHeaders] = first as [ServerStream, http2.IncomingHttpHeaders];
                goAway(held, constants.NGHTTP2_NO_ERROR, held.id ?? 0);
                answer(held, heldHeaders);
            });
        });
        const kept = api.request('GET', `${server.url}/first`, { headers: { 'x-id': 'first' } });
        await expect.poll(() => first !== undefined).toBe(true);
        const big = Buffer.alloc(1024 * 1024 + 64 * 1024, 'x');
        const err = await rejection(
            api.request('POST', `${server.url}/post`, {
                headers: { 'x-id': 'big' },
                payload: Readable.from([big.subarray(0, 600_000), big.subarray(600_000)])
            })
        );
        expect(err.output.statusCode).toBe(502);
        expect(codeOf(err)).toBe('ERR_HTTP2_GOAWAY');
        expect(resends.filter(({ reason }) => reason !== undefined)).toEqual([]);
        expect(String(await api.read(await kept))).toBe('first GET ');
        await expectReleased(api, [server], timers, { serversClose: false });
    });

    it('GOAWAY with an error code: the processed stream fails with it, the others are re-sent', async () => {
        whenStreams(3, ([first]) => {
            goAway(first, constants.NGHTTP2_INTERNAL_ERROR, first.id ?? 0);
        });
        const [a, b, c] = ['a', 'b', 'c'].map((id) => get(id));
        const err = await rejection(a as Promise<unknown>);
        expect(err.output.statusCode).toBe(502);
        expect(codeOf(err)).toBe('ERR_HTTP2_SESSION_ERROR');
        expect(await body(b as ReturnType<typeof get>)).toBe('b GET ');
        expect(await body(c as ReturnType<typeof get>)).toBe('c GET ');
        expect(processed.sort()).toEqual(['b', 'c']);
        await expectReleased(api, [server], timers, { serversClose: false });
    });

    it('sends a stream again only once: above the last stream id twice is a 502, data.code ERR_HTTP2_GOAWAY', async () => {
        // Node's server reads a last stream id of 0 as the last one it processed: written by hand here.
        const raw = await startRawHttp2((connection) => {
            connection.settings();
            connection.on('request', () => connection.goaway(0, constants.NGHTTP2_NO_ERROR));
        });
        const err = await rejection(api.request('GET', `${raw.url}/twice`, { headers: { 'x-id': 'twice' } }));
        expect(err.output.statusCode).toBe(502);
        expect(codeOf(err)).toBe('ERR_HTTP2_GOAWAY');
        expect(err.message).toMatch(/before processing stream 1 \(it processed up to 0\)$/);
        expect(resends.map(({ reason }) => reason)).toEqual([undefined, 'http2-goaway']);
        expect(raw.connections).toHaveLength(2);
        await expectReleased(api, [raw], timers);
        await raw.close();
    });
});

describe('HTTP/2 REFUSED_STREAM: sent again, once', () => {
    it('re-sends a refused stream on its session, and it succeeds', async () => {
        let refusals = 1;
        onStream = (stream, headers) => {
            if (refusals-- > 0) {
                stream.close(constants.NGHTTP2_REFUSED_STREAM);
            } else {
                answer(stream, headers);
            }
        };
        expect(await body(get('r'))).toBe('r GET ');
        expect(resends.map(({ reason }) => reason)).toEqual([undefined, 'http2-refused-stream']);
        expect(server.sessions).toHaveLength(1);
        await expectReleased(api, [server], timers, { serversClose: false });
    });

    it('refused twice: a 502, data.code ERR_HTTP2_REFUSED_STREAM, the second hop reported as the re-send', async () => {
        onStream = (stream) => stream.close(constants.NGHTTP2_REFUSED_STREAM);
        const outcomes: { reason: ResendReason | undefined; code: string | undefined }[] = [];
        api.events?.on('response', (err, details) =>
            outcomes.push({ reason: details.uri.resendReason, code: err === undefined ? undefined : codeOf(err) })
        );
        const err = await rejection(api.request('DELETE', `${server.url}/refused`, { headers: { 'x-id': 'd' } }));
        expect(err.output.statusCode).toBe(502);
        expect(codeOf(err)).toBe('ERR_HTTP2_REFUSED_STREAM');
        expect(err.message).toMatch(/refused the stream \(REFUSED_STREAM\)/);
        expect(outcomes).toEqual([
            { reason: undefined, code: 'ERR_HTTP2_REFUSED_STREAM' },
            { reason: 'http2-refused-stream', code: 'ERR_HTTP2_REFUSED_STREAM' }
        ]);
        await expectReleased(api, [server], timers, { serversClose: false });
    });
});

describe('HTTP/2 GOAWAY and REFUSED_STREAM: a seeded mix', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
        it(`seed ${seed}: every promise settles, none processed twice, a failure only for what was never processed`, async () => {
            const random = seeded(seed);
            onStream = (stream, headers) => {
                const roll = random();
                if (roll < 0.2) {
                    stream.close(constants.NGHTTP2_REFUSED_STREAM);
                } else if (roll < 0.3 && (stream.id ?? 0) > 1) {
                    // Processed up to the stream before this one: this one and any later on the session are not.
                    // (Node reads a last stream id of 0 as the last one it processed: this one.)
                    goAway(stream, constants.NGHTTP2_NO_ERROR, (stream.id ?? 0) - 2);
                } else {
                    setTimeout(() => answer(stream, headers), random() * 20);
                }
            };
            const methods = ['GET', 'POST', 'PUT', 'DELETE'];
            const calls = Array.from({ length: 30 }, (_, i) => {
                const method = methods[Math.floor(random() * methods.length)] as string;
                const payload = method === 'GET' || method === 'DELETE' ? undefined : `payload ${i}`;
                return api
                    .request(method, `${server.url}/mix`, { headers: { 'x-id': String(i) }, payload })
                    .then((res) => api.read(res))
                    .then(String);
            });
            const outcomes = await Promise.all(calls.map((call) => settled(call, 10_000)));
            const answered = new Set(processed);
            expect(processed.length).toBe(answered.size);
            outcomes.forEach(({ value, err }, i) => {
                if (err === undefined) {
                    expect(value).toMatch(new RegExp(`^${i} `));
                    expect(answered.has(String(i))).toBe(true);
                } else {
                    expect(['ERR_HTTP2_REFUSED_STREAM', 'ERR_HTTP2_GOAWAY'], (err as Error).message).toContain(
                        codeOf(err as HttpError)
                    );
                    expect(answered.has(String(i))).toBe(false);
                }
            });
            onStream = answer;
            await expectReleased(api, [server], timers, { serversClose: false });
        }, 30_000);
    }
});
