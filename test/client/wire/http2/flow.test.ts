import type * as http2 from 'node:http2';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../../../src/client/index.js';
import { startHttp, type TestServer } from '../../helpers.js';
import { expectReleased, timersBefore } from './released.js';
import { type Http2Handler, type Http2TestServer, startHttp2, startRelay } from './servers.js';
import { codeOf, rejection } from './settling.js';

/**
 * The flow above the transport seam, over HTTP/2 (README "HTTP/2"; docs/architecture.md, "The
 * transport seam"): redirects (also to an HTTP/1.1 origin), `retry`, `deadline`, `timeouts` (the
 * connection's phases bound only a hop that opens a session), `timeout`, `signal` and `req.abort()`
 * (RST_STREAM CANCEL, the session kept for the next request), `req.destroy(err)`.
 */

let server: Http2TestServer;
let other: Http2TestServer;
let http1: TestServer;
// How many times each path was asked, for the paths that answer differently the second time.
const asked = new Map<string, number>();

const handler: Http2Handler = (req, res) => {
    const url = new URL(req.url, 'https://x');
    const count = (asked.get(url.pathname) ?? 0) + 1;
    asked.set(url.pathname, count);
    switch (url.pathname) {
        case '/redirect':
            res.writeHead(302, { location: '/target' }).end();
            return;
        case '/to-other':
            res.writeHead(302, { location: `${other.url}/target` }).end();
            return;
        case '/to-http1':
            res.writeHead(307, { location: `${http1.url}/target` }).end();
            return;
        case '/flaky':
            res.writeHead(count === 1 ? 503 : 200).end(count === 1 ? 'busy' : 'fine now');
            return;
        case '/slow':
            setTimeout(() => res.end('late'), 500).unref();
            return;
        case '/slow-body':
            res.writeHead(200).write('the first half, ');
            setTimeout(() => res.end('the second half'), 500).unref();
            return;
        default:
            res.end(`${req.method} ${url.pathname} over ${req.httpVersion}`);
    }
};

beforeAll(async () => {
    server = await startHttp2(handler);
    other = await startHttp2(handler);
    http1 = await startHttp((req, res) => res.end(`${req.method} ${req.url} over ${req.httpVersion}`));
});

afterAll(async () => {
    await server.close();
    await other.close();
    await http1.close();
});

let timers = 0;
let api: Client;
beforeEach(() => {
    timers = timersBefore();
    asked.clear();
    api = new Client().defaults({ http2: { idleTimeout: 150 }, rejectUnauthorized: false });
});

// The path of each stream the server received.
const paths = new WeakMap<http2.ServerHttp2Stream, string>();

/** The server's stream of the last request to `path`: its `rstCode` says how it was closed. */
function lastStream(path: string): http2.ServerHttp2Stream | undefined {
    return server.streams.findLast((stream) => paths.get(stream) === path);
}

beforeAll(() => {
    server.server.on('stream', (stream, headers) => paths.set(stream, String(headers[':path'])));
});

describe('HTTP/2 flow: redirects', () => {
    it('follows a redirect on the same session', async () => {
        const connections = server.connections.length;
        const { res, payload } = await api.get(`${server.url}/redirect`, { redirects: 1 });
        expect(res.statusCode).toBe(200);
        expect(res.httpVersion).toBe('2.0');
        expect(String(payload)).toBe('GET /target over 2.0');
        expect(server.connections.length - connections).toBe(1);
        await expectReleased(api, [server], timers);
    });

    it('follows a redirect to another HTTP/2 origin, on a session of its own', async () => {
        const { res, payload } = await api.get(`${server.url}/to-other`, { redirects: 1 });
        expect(res.httpVersion).toBe('2.0');
        expect(String(payload)).toBe('GET /target over 2.0');
        await expectReleased(api, [server, other], timers);
    });

    it('follows a redirect from an HTTP/2 origin to an HTTP/1.1 one, a POST keeping its payload on a 307', async () => {
        const { res, payload } = await api.post(`${server.url}/to-http1`, { redirects: 1, payload: 'kept' });
        expect(res.httpVersion).toBe('1.1');
        expect(String(payload)).toBe('POST /target over 1.1');
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 flow: retry, deadline, timeouts', () => {
    it('retries a 503 on the same session', async () => {
        const connections = server.connections.length;
        const { res, payload } = await api.get(`${server.url}/flaky`, { retry: { limit: 1, backoff: () => 0 } });
        expect(res.statusCode).toBe(200);
        expect(String(payload)).toBe('fine now');
        expect(asked.get('/flaky')).toBe(2);
        expect(server.connections.length - connections).toBe(1);
        await expectReleased(api, [server], timers);
    });

    it('a deadline stops a stream under way with RST_STREAM CANCEL and keeps the session', async () => {
        await api.get(`${server.url}/warm`);
        const connections = server.connections.length;
        const err = await rejection(api.get(`${server.url}/slow`, { deadline: 100 }));
        expect(err.output.statusCode).toBe(504);
        expect((err.data as { phase?: string }).phase).toBe('deadline');
        await expect.poll(() => lastStream('/slow')?.rstCode).toBe(8);
        const { res } = await api.get(`${server.url}/after`);
        expect(res.statusCode).toBe(200);
        expect(server.connections.length).toBe(connections);
        await expectReleased(api, [server], timers);
    });

    it('times a hop that opens a session with its connect and TLS phases, and one on a live session without them', async () => {
        const first = await api.get(`${server.url}/first`, { timeouts: { connect: 5000, secureConnect: 5000 } });
        const { timings } = first.res as typeof first.res & {
            timings: import('../../../../src/client/index.js').Timings;
        };
        expect(timings.connect).toBeDefined();
        expect(timings.secureConnect).toBeDefined();
        expect(timings.phases.tcp).toBeGreaterThanOrEqual(0);
        expect(timings.phases.tls).toBeGreaterThanOrEqual(0);
        const second = await api.get(`${server.url}/second`, { timeouts: { connect: 1, secureConnect: 1 } });
        const reused = (second.res as typeof second.res & { timings: typeof timings }).timings;
        expect(reused.lookup).toBeUndefined();
        expect(reused.connect).toBeUndefined();
        expect(reused.secureConnect).toBeUndefined();
        expect(reused.phases).toMatchObject({ dns: undefined, tcp: undefined, tls: undefined });
        expect(reused.socket).toBeDefined();
        expect(reused.phases.firstByte).toBeGreaterThanOrEqual(0);
        await expectReleased(api, [server], timers);
    });

    it('bounds the TLS handshake of a hop that opens a session by timeouts.secureConnect', async () => {
        // The server's bytes come 300 ms late: its half of the handshake too.
        const relay = await startRelay(server, 300);
        const err = await rejection(api.get(`${relay.url}/`, { timeouts: { secureConnect: 100 } }));
        expect(err.output.statusCode).toBe(504);
        expect((err.data as { phase?: string }).phase).toBe('secureConnect');
        await expectReleased(api, [relay], timers);
        await relay.close();
    });

    it('bounds the wait for the response by timeouts.response: the stream is cancelled, the session kept', async () => {
        await api.get(`${server.url}/warm`);
        const connections = server.connections.length;
        const err = await rejection(api.get(`${server.url}/slow`, { timeouts: { response: 100 } }));
        expect(err.output.statusCode).toBe(504);
        expect((err.data as { phase?: string }).phase).toBe('response');
        await expect.poll(() => lastStream('/slow')?.rstCode).toBe(8);
        await api.get(`${server.url}/after`);
        expect(server.connections.length).toBe(connections);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 flow: cancelling a stream keeps its session', () => {
    const endings: { title: string; status: number; message: RegExp; run(url: string): Promise<unknown> }[] = [
        {
            title: 'the request timeout',
            status: 504,
            message: /^Client request timeout$/,
            run: (url) => api.get(url, { timeout: 100 })
        },
        {
            title: 'the signal',
            status: 500,
            message: /^Client request aborted$/,
            run: (url) => api.get(url, { signal: AbortSignal.timeout(100) })
        },
        {
            title: 'req.abort() once the request is out',
            status: 500,
            message: /^Client request aborted$/,
            run: (url) => {
                const promise = api.request('GET', url);
                promise.req?.once('finish', () => promise.req?.abort());
                return promise;
            }
        },
        {
            title: 'req.abort() before the stream exists',
            status: 500,
            message: /^Client request aborted$/,
            run: (url) => {
                const promise = api.request('GET', url);
                promise.req?.abort();
                return promise;
            }
        },
        {
            title: 'req.destroy(err)',
            status: 502,
            message: /^Client request error: gone$/,
            run: (url) => {
                const promise = api.request('GET', url);
                promise.req?.once('finish', () => promise.req?.destroy(new Error('gone')));
                return promise;
            }
        },
        {
            title: 'req.destroy() without an error',
            status: 500,
            message: /^Client request aborted$/,
            run: (url) => {
                const promise = api.request('GET', url);
                promise.req?.once('finish', () => promise.req?.destroy());
                return promise;
            }
        }
    ];
    for (const ending of endings) {
        it(`${ending.title}: ${ending.status}, RST_STREAM CANCEL, and the session carries the next request`, async () => {
            await api.get(`${server.url}/warm`);
            const connections = server.connections.length;
            const streams = server.streams.length;
            const err = await rejection(ending.run(`${server.url}/slow`));
            expect(err.output.statusCode).toBe(ending.status);
            expect(err.message).toMatch(ending.message);
            if (server.streams.length > streams) {
                await expect.poll(() => lastStream('/slow')?.rstCode).toBe(8);
            }

            const { res } = await api.get(`${server.url}/after`);
            expect(res.statusCode).toBe(200);
            expect(server.connections.length).toBe(connections);
            await expectReleased(api, [server], timers);
        });
    }

    it('req.abort() after the response fails its body, and keeps the session', async () => {
        const promise = api.request('GET', `${server.url}/slow-body`);
        const res = await promise;
        const reading = api.read(res);
        promise.req?.abort();
        const err = await rejection(reading);
        expect(err.message).toBe('Payload stream closed prematurely');
        expect(codeOf(err)).toBeUndefined();
        await expectReleased(api, [server], timers);
    });
});
