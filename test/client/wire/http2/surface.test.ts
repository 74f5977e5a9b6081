import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import * as dns from 'node:dns';
import { lookup as dnsLookup } from 'node:dns';
import { type AddressInfo, createServer, type LookupFunction, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLIENT_CHANNELS, Client, type HopRequest } from '../../../../src/client/index.js';
import { Http2Request, isHttp2Request } from '../../../../src/client/wire/http2/request.js';
import { isHttpError } from '../../../../src/errors/index.js';
import { startHttps } from '../../helpers.js';
import { startProxy, type TestProxy } from '../../test-proxy.js';
import { expectReleased, timersBefore } from './released.js';
import { type Http2TestServer, startHttp2 } from './servers.js';
import { rejection } from './settling.js';

/**
 * What a caller sees of an HTTP/2 exchange above the seam (README "HTTP/2"): `promise.req` and the
 * `request` event's `req` (an `Http2Request`: request.ts), the events and diagnostics channels once
 * per hop, the cache storing and serving an HTTP/2 response, and proxies (a CONNECT tunnel, then
 * ALPN inside it; a refused CONNECT as the same 502 as HTTP/1.1's).
 */

let server: Http2TestServer;
let answered = 0;

beforeAll(async () => {
    server = await startHttp2((req, res) => {
        answered++;
        if (req.url === '/cached') {
            res.setHeader('cache-control', 'max-age=60');
        } else if (req.url === '/redirect') {
            res.writeHead(302, { location: '/target' }).end();
            return;
        } else if (req.url === '/moved') {
            // A permanent redirect with a lifetime and a small body of declared length, as servers send one.
            const body = 'Moved to /cached';
            res.writeHead(301, { location: '/cached', 'cache-control': 'max-age=60', 'content-length': body.length });
            res.end(body);
            return;
        }

        res.end(`${req.url} ${req.headers['x-late'] ?? ''}`.trim());
    });
});

afterAll(() => server.close());

let timers = 0;
let api: Client;
beforeEach(() => {
    timers = timersBefore();
    answered = 0;
    api = new Client().defaults({ http2: { idleTimeout: 150 }, rejectUnauthorized: false });
});

describe('HTTP/2 surface: the request a caller holds', () => {
    it('promise.req and the request event give one Http2Request with the members of a stream', async () => {
        const traced = api.defaults({ events: true });
        const seen: HopRequest[] = [];
        traced.events.on('request', (req) => {
            seen.push(req);
            // Still before the stream goes out: a listener may set a field, as on a ClientRequest.
            req.setHeader('x-late', 'set in the request event');
            expect(req.headersSent).toBe(false);
            expect(req.writableEnded).toBe(false);
            // No connection yet, and not closed: as a ClientRequest's `socket` and `closed` say it.
            expect(req.socket).toBeNull();
            expect(req.closed).toBe(false);
        });
        const promise = traced.request('GET', `${server.url}/members?q=1`);
        // The documented way to tell a stream apart, narrowing the declared ClientRequest without a cast.
        if (!isHttp2Request(promise.req)) {
            throw new Error('promise.req is not an Http2Request');
        }

        const req = promise.req;
        expect(req).toBeInstanceOf(Http2Request);
        expect(seen).toEqual([req]);
        expect(req).toMatchObject({
            method: 'GET',
            path: '/members?q=1',
            host: '127.0.0.1',
            protocol: 'https:',
            aborted: false
        });
        expect(req.getHeader(':path')).toBe('/members?q=1');
        expect(req.getHeader('X-Late')).toBe('set in the request event');
        expect(req.hasHeader('x-late')).toBe(true);
        expect(req.getHeaderNames()).toEqual(expect.arrayContaining([':method', ':scheme', ':authority', ':path']));
        const events: string[] = [];
        for (const name of ['response', 'finish', 'close']) {
            req.on(name, () => events.push(name));
        }

        const res = await promise;
        expect(String(await api.read(res))).toBe('/members?q=1 set in the request event');
        expect(req.headersSent).toBe(true);
        expect(req.writableEnded).toBe(true);
        expect(req.stream?.id).toBe(1);
        expect(req.socket?.remotePort).toBe(server.port);
        expect(req.reusedSocket).toBe(false);
        expect(() => req.setHeader('x-too-late', 'no')).toThrow(
            expect.objectContaining({ code: 'ERR_HTTP_HEADERS_SENT' })
        );
        await expect.poll(() => events).toEqual(['finish', 'response', 'close']);
        expect(req.closed).toBe(true);

        const again = traced.request('GET', `${server.url}/again`);
        await api.read(await again);
        expect((again.req as unknown as Http2Request).reusedSocket).toBe(true);
        expect((again.req as unknown as Http2Request).socket).toBe(req.socket);
        await expectReleased(api, [server], timers);
    });

    it('removeHeader before the stream goes out; abort() once, however often it is called', async () => {
        const traced = api.defaults({ events: true, headers: { 'x-late': 'removed' } });
        traced.events?.on('request', (req) => req.removeHeader('X-Late'));
        const { payload } = await traced.get(`${server.url}/removed`);
        expect(String(payload)).toBe('/removed');

        const promise = api.request('GET', `${server.url}/twice`);
        const req = promise.req as unknown as Http2Request;
        req.abort();
        req.abort();
        expect(req.aborted).toBe(true);
        await expect(promise).rejects.toThrow('Client request aborted');
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 surface: events and diagnostics channels', () => {
    it('report each hop once, a redirect included', async () => {
        const traced = api.defaults({ events: true });
        const fromEvents: string[] = [];
        const fromChannels: string[] = [];
        traced.events?.on('preRequest', (uri) => fromEvents.push(`preRequest ${uri.pathname}`));
        traced.events?.on('request', (req) => fromEvents.push(`request ${req.path}`));
        traced.events?.on('response', (err, details) =>
            fromEvents.push(`response ${details.uri.pathname} ${err ?? details.res?.httpVersion}`)
        );
        const listeners = {
            preRequest: (message: unknown) => fromChannels.push(`preRequest ${(message as { uri: URL }).uri.pathname}`),
            request: (message: unknown) =>
                fromChannels.push(`request ${(message as { req: { path: string } }).req.path}`),
            response: (message: unknown) =>
                fromChannels.push(`response ${(message as { details: { uri: URL } }).details.uri.pathname}`)
        };
        for (const name of ['preRequest', 'request', 'response'] as const) {
            subscribe(CLIENT_CHANNELS[name], listeners[name]);
        }

        try {
            await traced.get(`${server.url}/redirect`, { redirects: 1 });
        } finally {
            for (const name of ['preRequest', 'request', 'response'] as const) {
                unsubscribe(CLIENT_CHANNELS[name], listeners[name]);
            }
        }

        expect(fromEvents).toEqual([
            'preRequest /redirect',
            'request /redirect',
            'response /redirect 2.0',
            'preRequest /target',
            'request /target',
            'response /target 2.0'
        ]);
        expect(fromChannels).toEqual([
            'preRequest /redirect',
            'request /redirect',
            'response /redirect',
            'preRequest /target',
            'request /target',
            'response /target'
        ]);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 surface: the cache', () => {
    it('stores an HTTP/2 response and serves it', async () => {
        const cached = api.defaults({ cache: true });
        const first = await cached.get(`${server.url}/cached`);
        expect(first.res.httpVersion).toBe('2.0');
        const second = await cached.get(`${server.url}/cached`);
        expect(String(second.payload)).toBe('/cached');
        expect(second.res.headers['cache-status']).toMatch(/^tracewire; hit/);
        expect(answered).toBe(1);
        await expectReleased(api, [server], timers);
    });

    // The client lets go of a 3xx it follows: a small body of declared length is read to its end, so the
    // cache gets it whole (destroying the stream cut the body under the cache, which never stored the 301).
    it('stores a 301 it follows and follows it from the cache next time', async () => {
        const cached = api.defaults({ cache: true, redirects: 3 });
        expect(String((await cached.get(`${server.url}/moved`)).payload)).toBe('/cached');
        const second = await cached.get(`${server.url}/moved`);
        expect(String(second.payload)).toBe('/cached');
        expect(second.res.headers['cache-status']).toMatch(/^tracewire; hit/);
        expect(answered).toBe(2);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 surface: proxies', () => {
    let proxy: TestProxy;
    let guarded: TestProxy;
    beforeAll(async () => {
        proxy = await startProxy();
        guarded = await startProxy('user:secret');
    });
    afterAll(async () => {
        await proxy.close();
        await guarded.close();
    });

    it('reaches an https origin through a CONNECT tunnel, ALPN inside it, one tunnel for concurrent requests', async () => {
        const proxied = api.defaults({ proxy: proxy.url });
        const tunnels = proxy.tunnels.length;
        const results = await Promise.all([1, 2, 3].map((n) => proxied.get(`${server.url}/through/${n}`)));
        expect(results.map(({ res }) => res.httpVersion)).toEqual(['2.0', '2.0', '2.0']);
        expect(proxy.tunnels.length - tunnels).toBe(1);
        expect(proxy.tunnels.at(-1)?.target).toBe(`127.0.0.1:${server.port}`);
        await expectReleased(api, [server], timers);
        await expect.poll(() => proxy.open.size).toBe(0);
    });

    it('names an IPv6 origin in brackets on the CONNECT line', async () => {
        // Listening on every address: the test proxy connects to 127.0.0.1 whatever the target.
        const six = await startHttp2((req, res) => res.end(req.url), { host: '::' });
        try {
            const url = `https://[::1]:${six.port}/six`;
            const { res, payload } = await api.get(url, { proxy: proxy.url });
            expect([res.httpVersion, String(payload)]).toEqual(['2.0', '/six']);
            expect(proxy.tunnels.at(-1)?.target).toBe(`[::1]:${six.port}`);
            await expectReleased(api, [six], timers);
        } finally {
            await six.close();
        }
    });

    it('resolves the proxy by the system, not by lookup, family or hints (direct connections only), as HTTP/1.1 does', async () => {
        const asked: string[] = [];
        const lookup = ((hostname: string, options: object, callback: never) => {
            asked.push(hostname);
            dnsLookup(hostname, options, callback);
        }) as unknown as LookupFunction;
        const options = { proxy: `http://localhost:${proxy.port}`, lookup, family: 6 as const, hints: dns.ADDRCONFIG };
        const h2 = await api.get(`${server.url}/resolved`, options);
        const origin1 = await startHttps((_req, res) => res.end('ok'));
        try {
            const h1 = await new Client().get(`${origin1.url}/resolved`, { ...options, rejectUnauthorized: false });
            expect([h2.res.httpVersion, h1.res.httpVersion]).toEqual(['2.0', '1.1']);
        } finally {
            await origin1.close();
        }

        expect(asked).toEqual([]);
        expect(proxy.tunnels.slice(-2).map((tunnel) => tunnel.target)).toEqual([
            `127.0.0.1:${server.port}`,
            `127.0.0.1:${origin1.port}`
        ]);
        await expectReleased(api, [server], timers);
    });

    it('a CONNECT the proxy refuses (407) is the 502 the HTTP/1.1 path gives', async () => {
        const url = `${server.url}/refused`;
        const h2 = await rejection(api.get(url, { proxy: `http://127.0.0.1:${guarded.port}` }));
        const h1 = await rejection(
            new Client().get(url, { proxy: `http://127.0.0.1:${guarded.port}`, rejectUnauthorized: false })
        );
        expect(isHttpError(h2, 502)).toBe(true);
        expect(h2.message).toBe(h1.message);
        expect(h2.message).toBe(
            `Proxy http://127.0.0.1:${guarded.port} refused the tunnel with 407 Proxy Authentication Required`
        );
        expect(h2.data).toEqual(h1.data);
        await expectReleased(api, [server], timers);
        await expect.poll(() => guarded.open.size).toBe(0);
    });

    it('a proxy that cannot be reached: a 502 naming it, with the network error code', async () => {
        const err = await rejection(api.get(`${server.url}/unreachable`, { proxy: 'http://127.0.0.1:1' }));
        expect(isHttpError(err, 502)).toBe(true);
        expect(err.message).toMatch(/^Client request error: proxy http:\/\/127\.0\.0\.1:1 could not be reached: /);
        expect((err.data as { code?: string }).code).toBe('ECONNREFUSED');
        await expectReleased(api, [server], timers);
    });

    it('a proxy that never answers the CONNECT: the request timeout lets go of the tunnel', async () => {
        const silent = createServer((socket) => socket.on('error', () => {}).resume());
        const accepted: Socket[] = [];
        silent.on('connection', (socket) => accepted.push(socket));
        await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
        try {
            const port = (silent.address() as AddressInfo).port;
            const err = await rejection(
                api.get(`${server.url}/silent`, { proxy: `http://127.0.0.1:${port}`, timeout: 150 })
            );
            expect(err.output.statusCode).toBe(504);
            await expect.poll(() => accepted.length > 0 && accepted.every((socket) => socket.destroyed)).toBe(true);
            await expectReleased(api, [server], timers);
        } finally {
            for (const socket of accepted) {
                socket.destroy();
            }

            await new Promise((resolve) => silent.close(resolve));
        }
    });

    it("carries the caller's proxy-authorization on the CONNECT, never to the origin", async () => {
        const credential = `Basic ${Buffer.from('user:secret').toString('base64')}`;
        const { res } = await api.get(`${server.url}/header-credentials`, {
            proxy: `http://127.0.0.1:${guarded.port}`,
            headers: { 'proxy-authorization': credential }
        });
        expect(res.httpVersion).toBe('2.0');
        expect(guarded.tunnels.at(-1)?.headers['proxy-authorization']).toBe(credential);
        await expectReleased(api, [server], timers);
    });

    it('with the proxy credentials, the tunnel opens', async () => {
        const { res } = await api.get(`${server.url}/with-credentials`, { proxy: guarded.url });
        expect(res.httpVersion).toBe('2.0');
        expect(guarded.tunnels.at(-1)?.headers['proxy-authorization']).toBe(
            `Basic ${Buffer.from('user:secret').toString('base64')}`
        );
        await expectReleased(api, [server], timers);
    });
});
