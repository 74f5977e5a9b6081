import * as dns from 'node:dns';
import { ClientRequest, createServer, Agent as HttpAgent, IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../../src/client/index.js';
import { cachedDestination } from '../../../src/client/wire/destination.js';
import { type HttpError, isHttpError } from '../../../src/errors/index.js';
import { MockNetwork } from '../../../src/testing/index.js';
import {
    body,
    type Echo,
    echo,
    echoReply,
    selfSignedCertificate,
    startHttp,
    startHttps,
    startUnix,
    type TestServer
} from '../helpers.js';

// What the client sends and resolves with is read from a MockNetwork's echo (docs/testing.md): the options, the
// headers and the body a hop is given are made above the transport seam. The real servers stay for what
// Node.js does below it: the agents, TLS, a UNIX socket, the lookup, IPv6, the bytes and framing it writes,
// the URL's credentials as its auth option, and the ClientRequest it makes.
const origin = 'http://request.test';
const mock = new MockNetwork();
const api = client.defaults({ mock });
mock.intercept({ origin, method: () => true })
    .reply(echoReply)
    .persist();

let server: TestServer;
let secure: TestServer;

beforeAll(async () => {
    server = await startHttp(echo);
    secure = await startHttps(echo);
});

afterAll(async () => {
    mock.close();
    await server.close();
    await secure.close();
});

/** What the mocked origin received; or a real server, at `base`, for what goes on the wire. */
async function sent(
    options: Parameters<typeof client.post>[1],
    path = '/',
    method = 'POST',
    base = origin
): Promise<Echo> {
    const caller = base === origin ? api : client;
    const res = await caller.request(method, `${base}${path}`, options);
    return JSON.parse((await caller.read<Buffer>(res)).toString()) as Echo;
}

/** A lookup that resolves every name to 127.0.0.1 and records the options it was called with. */
function loopbackLookup(calls: dns.LookupOptions[]): LookupFunction {
    return ((_hostname: string, options: dns.LookupOptions, callback: Function) => {
        calls.push(options);
        if (options.all) {
            callback(null, [{ address: '127.0.0.1', family: 4 }]);
        } else {
            callback(null, '127.0.0.1', 4);
        }
    }) as unknown as LookupFunction;
}

/** The agent of a request (a public property Node's typings leave out). */
function agentOf(req: ClientRequest | undefined): unknown {
    return (req as (ClientRequest & { agent?: unknown }) | undefined)?.agent;
}

describe('2.1 Client request options', () => {
    it('uses client.agents.http for http URIs by default', async () => {
        const promise = client.request('GET', server.url);
        expect(agentOf(promise.req)).toBe(client.agents.http);
        (await promise).resume();
    });

    it('uses client.agents.https for https URIs and rejects the self-signed certificate', async () => {
        const promise = client.request('GET', secure.url);
        expect(agentOf(promise.req)).toBe(client.agents.https);
        await expect(promise).rejects.toMatchObject({ output: { statusCode: 502 } });
    });

    it('uses client.agents.httpsAllowUnauthorized with rejectUnauthorized: false', async () => {
        const promise = client.request('GET', secure.url, { rejectUnauthorized: false });
        expect(agentOf(promise.req)).toBe(client.agents.httpsAllowUnauthorized);
        const res = await promise;
        expect(res.statusCode).toBe(200);
        res.resume();
    });

    it('passes rejectUnauthorized through when agent is false', async () => {
        const res = await client.request('GET', secure.url, { agent: false, rejectUnauthorized: false });
        expect(res.statusCode).toBe(200);
        res.resume();
    });

    it('opens a connection for the request alone with agent: false', async () => {
        const promise = client.request('GET', server.url, { agent: false });
        expect(agentOf(promise.req)).not.toBe(client.agents.http);
        const payload = JSON.parse((await client.read<Buffer>(await promise)).toString()) as Echo;
        expect(payload.headers.connection).toBe('close');
    });

    it('uses the agent given', async () => {
        const agent = new HttpAgent({ keepAlive: true });
        const promise = client.request('GET', server.url, { agent });
        expect(agentOf(promise.req)).toBe(agent);
        await client.read(await promise);
        agent.destroy();
    });

    it('resolves a uri against baseUrl as URLs resolve (path, query, trailing slash)', async () => {
        const cases: Array<[string, string, string]> = [
            ['http://h/base/', 'item', '/base/item'],
            ['http://h/base/', '/item', '/item'],
            ['http://h/base', 'item', '/item'],
            ['http://h/base/?from=base', 'item?from=uri', '/base/item?from=uri'],
            ['http://h/base/?from=base', '?from=uri', '/base/?from=uri']
        ];
        for (const [base, uri, path] of cases) {
            const baseUrl = base.replace('http://h', origin);
            const { payload } = await api.get<Echo>(uri, { baseUrl, json: true });
            expect(payload.url).toBe(path);
        }
    });

    it('sends the given headers with lower-case names', async () => {
        const echoed = await sent({ headers: { 'X-Custom': 'one', Accept: 'text/plain', 'X-Count': 2 } });
        expect(echoed.headers).toMatchObject({ 'x-custom': 'one', accept: 'text/plain', 'x-count': '2' });
    });

    it('sends a header given as an array of values', async () => {
        const echoed = await sent({ headers: { 'x-list': ['a', 'b'] } });
        expect(echoed.headers['x-list']).toBe('a, b');
    });

    it('sends a string payload with its content-length', async () => {
        const echoed = await sent({ payload: 'héllo' });
        expect(echoed.payload).toBe('héllo');
        expect(echoed.headers['content-length']).toBe(String(Buffer.byteLength('héllo')));
    });

    it('sends strings of any script byte-exact, with the length of their UTF-8 bytes', async () => {
        // ASCII, Latin-1, BMP (CJK, emoji halves) and astral characters; a lone surrogate becomes U+FFFD as Node writes it.
        for (const text of [
            'plain',
            'héllo wörld',
            '日本語のテキスト',
            '🙂 ok 🚀',
            `${'x'.repeat(70_000)}é`,
            '\ud800 lone'
        ]) {
            // As Node.js writes them on a connection.
            const echoed = await sent({ payload: text }, '/', 'POST', server.url);
            expect(echoed.payload).toBe(Buffer.from(text).toString());
            expect(echoed.headers['content-length']).toBe(String(Buffer.byteLength(text)));
        }
    });

    it('rejects, never throws, for an object payload that has no JSON, naming the option', async () => {
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        const nothing = { toJSON: () => undefined };
        for (const payload of [cyclic, { n: 1n }, nothing, [{ deep: cyclic }]]) {
            let call: Promise<unknown> | undefined;
            expect(() => {
                call = api.post(origin, { payload });
            }).not.toThrow();
            const err = await call!.catch((e: unknown) => e);
            expect(isHttpError(err)).toBe(true);
            expect((err as HttpError).message).toMatch(/^Option payload cannot be sent as JSON/);
            expect((err as HttpError).output.statusCode).toBe(500);
        }
    });

    it('sends a Buffer payload', async () => {
        const echoed = await sent({ payload: Buffer.from('bytes') });
        expect(echoed.payload).toBe('bytes');
        expect(echoed.headers['content-length']).toBe('5');
    });

    it('pipes a stream payload', async () => {
        // Node.js frames a body of unknown length.
        const echoed = await sent({ payload: Readable.from(['a', 'b', 'c']) }, '/', 'POST', server.url);
        expect(echoed.payload).toBe('abc');
        expect(echoed.headers['transfer-encoding']).toBe('chunked');
    });

    it('sends an object payload as JSON with content-type application/json', async () => {
        const echoed = await sent({ payload: { a: [1, 2] } });
        expect(JSON.parse(echoed.payload)).toEqual({ a: [1, 2] });
        expect(echoed.headers['content-type']).toBe('application/json');
    });

    it('keeps the content-type, content-length and transfer-encoding the caller set', async () => {
        const typed = await sent({ payload: { a: 1 }, headers: { 'Content-Type': 'application/vnd.x+json' } });
        expect(typed.headers['content-type']).toBe('application/vnd.x+json');
        const chunked = await sent({ payload: 'abc', headers: { 'transfer-encoding': 'chunked' } });
        expect(chunked.headers['content-length']).toBeUndefined();
        expect(chunked.payload).toBe('abc');
    });

    it('sends no body with GET or HEAD, whatever the payload (as @hapi/wreck)', async () => {
        const stream = Readable.from(['unread']);
        const echoed = await sent({ payload: 'ignored' }, '/', 'GET');
        expect(echoed.payload).toBe('');
        expect(echoed.headers['content-length']).toBeUndefined();
        const head = await api.request('HEAD', origin, { payload: stream });
        expect(head.statusCode).toBe(200);
        head.resume();
        expect(stream.readableDidRead).toBe(false);
    });

    it('offers what read() decodes (accept-encoding) when gunzip is set, unless the caller chose', async () => {
        const offer = 'createZstdDecompress' in zlib ? 'gzip, br, zstd' : 'gzip, br';
        expect((await sent({ gunzip: true } as never, '/', 'GET')).headers['accept-encoding']).toBe(offer);
        expect((await sent({ gunzip: 'force' } as never, '/', 'GET')).headers['accept-encoding']).toBe(offer);
        expect(
            (await sent({ gunzip: true, headers: { 'accept-encoding': 'br' } } as never, '/', 'GET')).headers[
                'accept-encoding'
            ]
        ).toBe('br');
        expect((await sent({}, '/', 'GET')).headers['accept-encoding']).toBeUndefined();
    });

    it('sends no body for a null payload', async () => {
        const echoed = await sent({ payload: null as unknown as string });
        expect(echoed.payload).toBe('');
    });

    it('applies secureProtocol and ciphers to the TLS connection', async () => {
        const res = await client.request('GET', secure.url, {
            rejectUnauthorized: false,
            secureProtocol: 'TLSv1_2_method',
            ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256'
        });
        const socket = res.socket as TLSSocket;
        expect(socket.getProtocol()).toBe('TLSv1.2');
        expect(socket.getCipher().name).toBe('ECDHE-ECDSA-AES128-GCM-SHA256');
        res.resume();
    });

    it('connects through socketPath', async () => {
        const unix = await startUnix(echo);
        try {
            const { payload } = await client.get<Echo>('http://localhost/over-unix', {
                socketPath: unix.socketPath,
                json: true
            });
            expect(payload.url).toBe('/over-unix');
        } finally {
            await unix.close();
        }
    });

    it('connects through socketPath with a path-only URI, Docker-API style, with host localhost', async () => {
        const unix = await startUnix(echo);
        try {
            const { payload } = await client.get<Echo>('/containers/json?all=1', {
                socketPath: unix.socketPath,
                json: true
            });
            expect(payload.url).toBe('/containers/json?all=1');
            expect(payload.headers.host).toBe('localhost');
            const res = await client.request('POST', '/v1/build', { socketPath: unix.socketPath, payload: 'x' });
            expect(JSON.parse((await client.read<Buffer>(res)).toString())).toMatchObject({
                method: 'POST',
                url: '/v1/build',
                payload: 'x'
            });
        } finally {
            await unix.close();
        }
    });

    it('a path-only URI without socketPath or baseUrl is refused, naming the URI', async () => {
        await expect(client.get('/containers/json')).rejects.toThrow(
            'Request uri "/containers/json" is not a valid URL'
        );
    });

    it('resolves host names with the lookup function, passing family and hints', async () => {
        const calls: dns.LookupOptions[] = [];
        const { payload } = await client.get<Echo>(`http://service.test:${server.port}/looked-up`, {
            lookup: loopbackLookup(calls),
            family: 4,
            hints: dns.ADDRCONFIG,
            agent: false,
            json: true
        });
        expect(payload.url).toBe('/looked-up');
        expect(calls[0]).toMatchObject({ family: 4, hints: dns.ADDRCONFIG });
    });

    it('passes family 6 to the lookup', async () => {
        const calls: dns.LookupOptions[] = [];
        await client.get(`http://service.test:${server.port}/`, {
            lookup: loopbackLookup(calls),
            family: 6,
            agent: false
        });
        expect(calls[0]?.family).toBe(6);
    });

    it('connects to an IPv6 literal', async () => {
        const v6 = createServer(echo);
        const listening = await new Promise<boolean>((resolve) => {
            v6.once('error', () => resolve(false));
            v6.listen(0, '::1', () => resolve(true));
        });
        if (listening) {
            const { port } = v6.address() as AddressInfo;
            const { payload } = await client.get<Echo>(`http://[::1]:${port}/v6`, { json: true, agent: false });
            expect(payload.url).toBe('/v6');
            await new Promise((resolve) => v6.close(resolve));
        }
    });

    it('sends the credentials of the URI as basic authorization', async () => {
        // Node.js sends them (its auth option), below the transport seam.
        const echoed = await sent({}, '/', 'GET', server.url);
        expect(echoed.headers.authorization).toBeUndefined();
        const url = server.url.replace('http://', 'http://us%40er:p%3Ass@');
        const { payload } = await client.get<Echo>(url, { json: true });
        expect(payload.headers.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    });

    it('accepts a route option and leaves the request unchanged', async () => {
        const echoed = await sent({ route: '/users/{id}' }, '/users/7', 'GET');
        expect(echoed.url).toBe('/users/7');
    });

    it('accepts a URL instance as the uri', async () => {
        const { payload } = await api.get<Echo>(new URL('/from-url?x=1', origin), { json: true });
        expect(payload.url).toBe('/from-url?x=1');
    });

    it('defaults the method to GET and sends it upper-cased', async () => {
        const res = await api.request(undefined, origin);
        expect((JSON.parse((await api.read<Buffer>(res)).toString()) as Echo).method).toBe('GET');
        const lower = await sent({}, '/', 'patch');
        expect(lower.method).toBe('PATCH');
        const uncommon = await sent({}, '/', 'purge');
        expect(uncommon.method).toBe('PURGE');
    });
});

describe('2.1-2.3 null or undefined for an optional setting means "not set"', () => {
    const unset = [null, undefined];
    for (const value of unset) {
        it(`request options set to ${value} are ignored (beforeRedirect, redirected, agent, ...)`, async () => {
            const options = Object.fromEntries(
                [
                    'agent',
                    'baseUrl',
                    'beforeRedirect',
                    'ciphers',
                    'headers',
                    'payload',
                    'redirect303',
                    'redirected',
                    'redirectMethod',
                    'redirects',
                    'rejectUnauthorized',
                    'secureProtocol',
                    'socketPath',
                    'timeout',
                    'lookup',
                    'family',
                    'hints',
                    'signal',
                    'route',
                    'gunzip',
                    'json',
                    'maxBytes'
                ].map((name) => [name, value])
            );
            const { res, payload } = await api.get<Buffer>(origin, options);
            expect(res.statusCode).toBe(200);
            expect(JSON.parse(payload.toString())).toMatchObject({ method: 'GET', url: '/' });
        });

        it(`a header set to ${value} is not sent, and does not remove a default header`, async () => {
            const withDefault = api.defaults({ headers: { 'x-default': 'kept', 'x-other': value as never } });
            const echoed = (
                await withDefault.get<Echo>(origin, {
                    json: true,
                    headers: { host: value as never, 'x-default': value as never, 'x-gone': value as never }
                })
            ).payload;
            expect(echoed.headers.host).toBe(new URL(origin).host);
            expect(echoed.headers['x-default']).toBe('kept');
            expect(echoed.headers).not.toHaveProperty('x-gone');
            expect(echoed.headers).not.toHaveProperty('x-other');
        });

        it(`an option set to ${value} keeps the default of the client`, async () => {
            const configured = api.defaults({ json: true, redirects: 1, timeout: 5000, events: value as never });
            expect(configured.events).toBeUndefined();
            const res = await configured.request('GET', origin, { redirects: value, timeout: value });
            const payload = await configured.read(res, { json: value, maxBytes: value });
            expect(payload).toMatchObject({ method: 'GET' });
            expect(client.defaults({ agents: value as never }).agents).toBe(client.agents);
        });
    }

    it('read options set to null are ignored, as are null read options', async () => {
        const res = await api.request('GET', origin);
        const payload = await api.read(res, {
            gunzip: null,
            json: null,
            maxBytes: null,
            timeout: null,
            signal: null
        });
        expect(Buffer.isBuffer(payload)).toBe(true);
        expect(await api.read(await api.request('GET', origin), null)).toBeInstanceOf(Buffer);
    });

    it('a value of the wrong type is still refused, naming the option', async () => {
        await expect(api.get(origin, { beforeRedirect: 'no' as never })).rejects.toThrow(
            'Option beforeRedirect must be a function, got string'
        );
        await expect(api.get(origin, { headers: { 'x-a': {} as never } })).rejects.toThrow(/headers\.x-a must/);
        expect(() => client.defaults({ events: 'yes' as never })).toThrow(
            'Option events must be a boolean, got string'
        );
    });
});

describe('2.1 request URIs are parsed once', () => {
    it('serves repeated URIs from a bounded cache that starts over when full', () => {
        const first = cachedDestination('http://a.test/x', undefined);
        expect(cachedDestination('http://a.test/x', undefined)).toBe(first);
        for (let i = 0; i < 1000; i++) {
            cachedDestination(`http://a.test/${i}`, undefined);
        }

        const again = cachedDestination('http://a.test/x', undefined);
        expect(again).not.toBe(first);
        expect(again).toEqual(first);
        expect(cachedDestination('y', 'http://b.test/base/')).toMatchObject({ path: '/base/y', port: 80 });
    });
});

describe('2.4 Client results', () => {
    it('request resolves with the IncomingMessage and carries the ClientRequest as req', async () => {
        const promise = client.request('GET', server.url);
        expect(promise.req).toBeInstanceOf(ClientRequest);
        const res = await promise;
        expect(res).toBeInstanceOf(IncomingMessage);
        expect(res.statusCode).toBe(200);
        res.resume();
    });

    it('read resolves with a Buffer', async () => {
        const payload = await api.read(await api.request('GET', origin));
        expect(Buffer.isBuffer(payload)).toBe(true);
    });

    it('the helpers resolve with the ended response and its payload', async () => {
        const { res, payload } = await api.get(origin);
        expect(res.complete).toBe(true);
        expect(res.readableEnded).toBe(true);
        expect(Buffer.isBuffer(payload)).toBe(true);
    });
});

describe('2.5 Agents', () => {
    it('has http, https and httpsAllowUnauthorized agents with maxSockets Infinity and keep-alive', () => {
        expect(client.agents.http).toBeInstanceOf(HttpAgent);
        expect(client.agents.https).toBeInstanceOf(HttpsAgent);
        expect(client.agents.httpsAllowUnauthorized).toBeInstanceOf(HttpsAgent);
        for (const agent of Object.values(client.agents)) {
            expect(agent.maxSockets).toBe(Number.POSITIVE_INFINITY);
            expect((agent as HttpAgent & { keepAlive: boolean }).keepAlive).toBe(true);
        }

        expect(client.agents.httpsAllowUnauthorized.options.rejectUnauthorized).toBe(false);
    });

    it('uses an agent that replaced a property (an https agent trusting the test certificate)', async () => {
        const own = client.defaults({
            agents: {
                http: new HttpAgent(),
                https: new HttpsAgent(),
                httpsAllowUnauthorized: new HttpsAgent({ rejectUnauthorized: false })
            }
        });
        await expect(own.get(secure.url)).rejects.toMatchObject({ output: { statusCode: 502 } });
        own.agents.https.destroy();
        own.agents.https = new HttpsAgent({ ca: selfSignedCertificate().cert, keepAlive: false });
        const { res } = await own.get(secure.url);
        expect(res.statusCode).toBe(200);
        expect(agentOf((res as typeof res & { req: ClientRequest }).req)).toBe(own.agents.https);
        own.agents.https.maxSockets = 3;
        expect(own.agents.https.maxSockets).toBe(3);
    });

    it('defaults() rejects agents without the three agents, naming the missing one', () => {
        const http = new HttpAgent();
        const https = new HttpsAgent();
        expect(() => client.defaults({ agents: 5 as never })).toThrow(/agents must be an object/);
        expect(() => client.defaults({ agents: { https } as never })).toThrow(/agents\.http must/);
        expect(() => client.defaults({ agents: { http, https } as never })).toThrow(
            /agents\.httpsAllowUnauthorized must/
        );
        expect(() =>
            client.defaults({ agents: { http, https: http, httpsAllowUnauthorized: https } as never })
        ).toThrow(/agents\.https must/);
    });
});

describe('2.3 Client defaults options', () => {
    it('merges defaults with per-request options, headers by name whatever their case', async () => {
        const base = api.defaults({ headers: { Authorization: 'Bearer a', 'x-one': '1' }, json: true });
        const { payload } = await base.get<Echo>(origin, { headers: { authorization: 'Bearer b' } });
        expect(payload.headers).toMatchObject({ authorization: 'Bearer b', 'x-one': '1' });
    });

    it('accumulates over repeated defaults() calls', async () => {
        const derived = api
            .defaults({ baseUrl: `${origin}/api/`, headers: { 'x-one': '1' } })
            .defaults({ headers: { 'x-two': '2' }, json: 'strict' })
            .defaults({ headers: { 'x-one': 'one' } });
        const { payload } = await derived.get<Echo>('items');
        expect(payload.url).toBe('/api/items');
        expect(payload.headers).toMatchObject({ 'x-one': 'one', 'x-two': '2' });
    });

    it('applies read defaults to read()', async () => {
        const jsonClient = api.defaults({ json: true });
        const res = await jsonClient.request('GET', origin);
        expect(await jsonClient.read(res)).toMatchObject({ method: 'GET' });
    });

    it('shares the agents of the parent unless agents are given', () => {
        expect(client.defaults({}).agents).toBe(client.agents);
    });

    it('throws for bad defaults, naming the option', () => {
        expect(() => client.defaults(null as never)).toThrow(/defaults must be an object/);
        expect(() => client.defaults({ events: 'yes' as never })).toThrow(/events must be a boolean/);
        expect(() => client.defaults({ timeout: -1 })).toThrow(/Option timeout/);
        expect(() => client.defaults({ headers: { 'x-bad': 'a\r\nb' } })).toThrow(/headers\.x-bad/);
    });
});

describe('4.A Client operations', () => {
    it('get, post, patch, put and delete send their method and the payload', async () => {
        const methods = ['get', 'post', 'patch', 'put', 'delete'] as const;
        for (const method of methods) {
            const options = method === 'get' ? { json: true } : { json: true, payload: method };
            const { payload } = await api[method]<Echo>(origin, options);
            expect(payload.method).toBe(method.toUpperCase());
            expect(payload.payload).toBe(method === 'get' ? '' : method);
        }
    });

    it('toReadableStream yields the payload in the given encoding', async () => {
        expect(await body(client.toReadableStream('héllo') as never)).toBe('héllo');
        expect((await Readable.from(client.toReadableStream('aGk=', 'base64')).toArray()).join('')).toBe('hi');
        expect(await body(client.toReadableStream(Buffer.from('buf')) as never)).toBe('buf');
        expect(await client.toReadableStream('').toArray()).toEqual([]);
        expect(() => client.toReadableStream('x', 'klingon' as BufferEncoding)).toThrow(/encoding/);
        expect(() => client.toReadableStream(5 as never)).toThrow(/payload must be/);
    });

    it('toReadableStream output can be sent as a payload', async () => {
        const echoed = await sent({ payload: client.toReadableStream('streamed') });
        expect(echoed.payload).toBe('streamed');
    });

    it('parseCacheControl returns one property per directive, numbers for delta-seconds', () => {
        expect(client.parseCacheControl('private, max-age=0, no-cache')).toEqual({
            private: true,
            'max-age': 0,
            'no-cache': true
        });
        expect(client.parseCacheControl('Public,S-MaxAge=60 , stale-while-revalidate=30')).toEqual({
            public: true,
            's-maxage': 60,
            'stale-while-revalidate': 30
        });
        expect(client.parseCacheControl('no-cache="set-cookie, x-a", ext=token, q="a\\"b"')).toEqual({
            'no-cache': 'set-cookie, x-a',
            ext: 'token',
            q: 'a"b'
        });
        expect(client.parseCacheControl('max-stale')).toEqual({ 'max-stale': true });
        expect(client.parseCacheControl('')).toEqual({});
    });

    it('parseCacheControl returns null for a malformed field rather than throwing', () => {
        for (const field of ['max-age=abc', 'max-age="1"x', 'a b', '=x', 'no-cache,,private', 'x="unterminated', ' ']) {
            expect(client.parseCacheControl(field)).toBeNull();
        }

        expect(client.parseCacheControl('__proto__=1')).toBeNull();
        expect(client.parseCacheControl(5 as never)).toBeNull();
    });
});

describe('8. Limits', () => {
    it('agents have maxSockets Infinity', () => {
        expect(Object.values(client.agents).map((agent) => agent.maxSockets)).toEqual([
            Number.POSITIVE_INFINITY,
            Number.POSITIVE_INFINITY,
            Number.POSITIVE_INFINITY
        ]);
    });

    it('redirects default to false: a 3xx is the response', async () => {
        mock.origin('http://redirecting.test').get('/').reply(302, '', { location: '/elsewhere' });
        const { res } = await api.get('http://redirecting.test/');
        expect(res.statusCode).toBe(302);
    });

    it('request and read timeouts default to 0: no timer is armed', async () => {
        // A body whose second piece comes 30 ms after the first.
        mock.origin('http://slow.test')
            .get('/')
            .reply(() => {
                const body = new Readable({ read() {} });
                body.push('a');
                setTimeout(() => body.push('b') && body.push(null), 30);
                return { status: 200, body };
            });
        const before = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
        const pending = api.get('http://slow.test/');
        const during = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
        expect(during).toBe(before);
        expect((await pending).payload).toEqual(Buffer.from('ab'));
    });

    it('maxBytes defaults to 0: no size limit', async () => {
        mock.origin('http://big.test')
            .get('/')
            .reply(200, Buffer.alloc(2 * 1024 * 1024, 1));
        const { payload } = await api.get<Buffer>('http://big.test/');
        expect(payload.length).toBe(2 * 1024 * 1024);
    });
});
