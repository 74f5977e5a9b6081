import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../../src/client/cache/stores/memory-store.js';
import type { CachedResponse, CacheStore } from '../../../src/client/contract/cache-store.js';
import type { Timings } from '../../../src/client/contract/timings.js';
import type { ResponseDetails } from '../../../src/client/contract/types.js';
import {
    type CallMessage,
    CLIENT_CHANNELS,
    CLIENT_TRACING_CHANNELS,
    client,
    type HopMessage,
    type ResponseMessage
} from '../../../src/client/index.js';
import { Client } from '../../../src/client/surface/client.js';
import { isHttpError } from '../../../src/errors/index.js';
import {
    type MockedRequest,
    type MockInterceptor,
    MockNetwork,
    type MockResponse
} from '../../../src/testing/index.js';
import { startHttp, startUnix, type TestServer } from '../helpers.js';

/**
 * README "Cache": the client's RFC 9111 cache, its origin scripted by a MockNetwork (docs/testing.md): the
 * cache sits above the transport seam, and works on a mocked exchange as on one over the network. Each test
 * uses its own paths on the mocked origin; `hits` lists what reached it, so "from the cache" is what it
 * never saw. A real server stays for what only a connection shows: a kept-alive connection that dies as it
 * is reused (a revalidation or a stale-if-error sent again first), and a UNIX socket.
 */

/** A reply to the request, given how many the path has had (this one included). */
type Route = (request: MockedRequest, count: number) => MockResponse | Promise<MockResponse>;

const origin = 'http://cache.test';
const mock = new MockNetwork();
// The root client, on the mocked origin: `cache: true` per request still takes the process's one store.
const plainClient = client.defaults({ mock });

let paths = 0;
/** A fresh URL of the mocked origin, which nothing answers yet. */
function freshUrl(): string {
    return `${origin}/p${++paths}`;
}

/** An interceptor of every method for the path of `url` (answered in order with those made before it). */
function on(url: string): MockInterceptor {
    return mock.intercept({ origin, method: () => true, path: new URL(url).pathname });
}

/** A fresh path answered by `route`; returns its URL. */
function serve(route: Route): string {
    const url = freshUrl();
    on(url)
        .reply((request) => route(request, hits(url).length))
        .persist();
    return url;
}

/** The requests the mocked origin received for the path of `url`, in order. */
function hits(url: string): MockedRequest[] {
    const path = new URL(url).pathname;
    return mock.requests.filter((request) => request.origin === origin && request.path.split('?')[0] === path);
}

function reply(status: number, headers: Record<string, string | string[]>, body: string | Buffer = ''): Route {
    return () => ({ status, headers, body });
}

/** A response stale at once that may be served for 60 s while revalidated, answered 304 to its `etag`. */
function staleWhileRevalidating(etag: string): Route {
    return (request) =>
        request.headers['if-none-match'] === etag
            ? { status: 304, headers: { 'cache-control': 'max-age=60', etag } }
            : {
                  status: 200,
                  headers: { 'cache-control': 'max-age=0, stale-while-revalidate=60', etag },
                  body: 'body'
              };
}

/** As `staleWhileRevalidating`, but a new response each time: `v1`, `v2`... with the ETag `"1"`, `"2"`... */
const changingWhileRevalidated: Route = (_request, count) => ({
    status: 200,
    headers: { 'cache-control': 'max-age=0, stale-while-revalidate=60', etag: `"${count}"` },
    body: `v${count}`
});

function cached(options: ConstructorParameters<typeof MemoryCacheStore>[0] = {}, shared = false) {
    const store = new MemoryCacheStore(options);
    return { store, client: new Client().defaults({ mock, cache: { store, shared } }) };
}

// The real server, for the connections that die as they are reused: `seen` is what reached it, by path.
type ServerRoute = (req: IncomingMessage, res: ServerResponse, count: number) => void;
const serverRoutes = new Map<string, ServerRoute>();
const seen = new Map<string, IncomingMessage[]>();
let server: TestServer;

beforeAll(async () => {
    server = await startHttp((req, res) => {
        const path = new URL(req.url!, 'http://x').pathname;
        const list = seen.get(path) ?? [];
        list.push(req);
        seen.set(path, list);
        req.resume();
        serverRoutes.get(path)!(req, res, list.length);
    });
});

afterAll(async () => {
    mock.close();
    await server.close();
});

/** A fresh path of the real server answered by `route`; returns its URL. */
function serveOnServer(route: ServerRoute): string {
    const path = `/p${++paths}`;
    serverRoutes.set(path, route);
    return server.url + path;
}

function serverHits(url: string): IncomingMessage[] {
    return seen.get(new URL(url).pathname) ?? [];
}

/** A client with a cache of its own on the network. */
function cachedOnNetwork() {
    return new Client().defaults({ cache: { store: new MemoryCacheStore() } });
}

describe('Cache: option', () => {
    it('rejects a bad cache option, naming it', async () => {
        const bad: unknown[] = ['yes', 1, [], { store: {} }, { shared: 'no' }, { methods: [] }, { methods: ['POST'] }];
        for (const cache of bad) {
            const err = await plainClient.request('GET', `${origin}/`, { cache: cache as never }).catch((e) => e);
            expect(isHttpError(err)).toBe(true);
            expect(err.message).toMatch(/^Option cache/);
        }

        expect(() => plainClient.defaults({ cache: { methods: ['DELETE'] } })).toThrow(
            'Option cache.methods must list safe methods only'
        );
    });

    it('cache: true in defaults() gives each client a store of its own', async () => {
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'one'));
        const a = new Client().defaults({ mock, cache: true });
        const b = new Client().defaults({ mock, cache: true });
        await a.get(url);
        await a.get(url);
        expect(hits(url)).toHaveLength(1);
        await b.get(url);
        expect(hits(url)).toHaveLength(2);
    });

    it('cache: true per request uses one store for the process; per-request cache: false bypasses', async () => {
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'x'));
        await plainClient.get(url, { cache: true });
        const { res } = await plainClient.get(url, { cache: true });
        expect(res.headers['cache-status']).toMatch(/^tracewire; hit/);
        const cachedClient = plainClient.defaults({ cache: true });
        await cachedClient.get(url);
        const bypassed = await cachedClient.get(url, { cache: false });
        expect(bypassed.res.headers['cache-status']).toBeUndefined();
        expect(hits(url)).toHaveLength(3);
    });

    it('a client without the option has no cache and adds no Cache-Status', async () => {
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }));
        const { res } = await plainClient.get(url);
        await plainClient.get(url);
        expect(res.headers['cache-status']).toBeUndefined();
        expect(hits(url)).toHaveLength(2);
    });
});

describe('Cache: hits, misses and Cache-Status', () => {
    it('stores a fresh response and answers the next call from the store, a readable response with Age', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60', 'x-a': 'b' }, 'payload'));
        const first = await client.request('GET', url);
        // Nothing is stored before the body has come: `stored` is added once the write has landed.
        expect(first.headers['cache-status']).toMatch(/^tracewire; fwd=miss; fwd-status=200; ttl=(59|60)$/);
        expect(String(await client.read(first))).toBe('payload');
        expect(first.headers['cache-status']).toMatch(/^tracewire; fwd=miss; fwd-status=200; stored; ttl=(59|60)$/);
        expect(first.rawHeaders.slice(-2)).toStrictEqual(['Cache-Status', first.headers['cache-status']]);
        const second = await client.request('GET', url);
        expect(second.statusCode).toBe(200);
        expect(second.statusMessage).toBe('OK');
        expect(second.headers['x-a']).toBe('b');
        expect(second.headers.age).toMatch(/^[01]$/);
        expect(second.headers['cache-status']).toMatch(/^tracewire; hit; ttl=(59|60)$/);
        expect(second.rawHeaders).toContain('Cache-Status');
        expect(String(await client.read(second))).toBe('payload');
        expect(hits(url)).toHaveLength(1);
    });

    it('appends its member to an upstream Cache-Status', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60', 'cache-status': 'origin; hit' }));
        const first = await client.get(url);
        expect(first.res.headers['cache-status']).toMatch(/^origin; hit, tracewire; fwd=miss/);
        const second = await client.get(url);
        expect(second.res.headers['cache-status']).toMatch(/^origin; hit, tracewire; hit/);
    });

    it('does not store no-store, or what a no-store request got', async () => {
        const { client, store } = cached();
        const url = serve(reply(200, { 'cache-control': 'no-store, max-age=60' }));
        const { res } = await client.get(url);
        expect(res.headers['cache-status']).toBe('tracewire; fwd=miss; fwd-status=200');
        const other = serve(reply(200, { 'cache-control': 'max-age=60' }));
        await client.get(other, { headers: { 'cache-control': 'no-store' } });
        await client.get(url);
        expect(hits(url)).toHaveLength(2);
        expect(store.count).toBe(0);
    });

    it('never stores a response whose body did not arrive whole', async () => {
        const { client, store } = cached();
        const url = freshUrl();
        on(url).reply(200, 'partial'.padEnd(100), { 'cache-control': 'max-age=60' }).cutAfter(7);
        await expect(client.get(url)).rejects.toThrow();
        expect(store.count).toBe(0);
    });

    it('does not copy a body larger than the store keeps', async () => {
        const { client, store } = cached({ maxEntrySize: 1000 });
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'x'.repeat(5000)));
        expect((await client.get(url)).payload).toHaveLength(5000);
        expect(store.count).toBe(0);
    });

    it('answers HEAD from a stored GET, without a body', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60', 'content-length': '4' }, 'body'));
        await client.get(url);
        const head = await client.request('HEAD', url);
        expect(head.headers['content-length']).toBe('4');
        expect(head.headers['cache-status']).toMatch(/hit/);
        expect(await client.read(head)).toHaveLength(0);
        expect(hits(url)).toHaveLength(1);
    });

    it('keeps variants apart by Vary', async () => {
        const { client } = cached();
        const url = serve((request) => ({
            status: 200,
            headers: { 'cache-control': 'max-age=60', vary: 'Accept' },
            body: String(request.headers.accept)
        }));
        const json = { headers: { accept: 'application/json' } };
        const html = { headers: { accept: 'text/html' } };
        expect(String((await client.get(url, json)).payload)).toBe('application/json');
        expect(String((await client.get(url, html)).payload)).toBe('text/html');
        expect(String((await client.get(url, json)).payload)).toBe('application/json');
        expect(String((await client.get(url, html)).payload)).toBe('text/html');
        expect(hits(url)).toHaveLength(2);
    });

    it("answers a caller's If-None-Match with a 304 of its own when the stored response matches", async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60', etag: '"v1"' }, 'body'));
        await client.get(url);
        const res = await client.request('GET', url, { headers: { 'if-none-match': 'W/"v1"' } });
        expect(res.statusCode).toBe(304);
        expect(await client.read(res)).toHaveLength(0);
        const other = await client.request('GET', url, { headers: { 'if-none-match': '"v2"' } });
        expect(other.statusCode).toBe(200);
        expect(hits(url)).toHaveLength(1);
    });

    it('leaves ranges and preconditions it did not make to the origin', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'body'));
        await client.get(url);
        const { res } = await client.get(url, { headers: { range: 'bytes=0-1' } });
        expect(res.headers['cache-status']).toBe('tracewire; fwd=bypass; fwd-status=200');
        expect(hits(url)).toHaveLength(2);
    });

    it('methods other than those cached go to the origin with fwd=bypass', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }));
        const { res } = await client
            .request('OPTIONS', url)
            .then(async (r) => ({ res: r, body: await client.read(r) }));
        expect(res.headers['cache-status']).toBe('tracewire; fwd=bypass; fwd-status=200');
        const optionsClient = new Client().defaults({ mock, cache: { methods: ['GET', 'options'] } });
        await optionsClient.request('OPTIONS', url).then((r) => client.read(r));
        const second = await optionsClient.request('OPTIONS', url);
        expect(second.headers['cache-status']).toMatch(/hit/);
    });
});

describe('Cache: validation', () => {
    it('revalidates a stale response with If-None-Match and answers a 304 with the stored body, headers updated', async () => {
        const { client } = cached();
        const url = serve((request, count) => {
            if (count === 1) {
                return {
                    status: 200,
                    headers: { 'cache-control': 'max-age=0', etag: '"v1"', 'x-version': '1' },
                    body: 'stored body'
                };
            }

            expect(request.headers['if-none-match']).toBe('"v1"');
            return { status: 304, headers: { 'cache-control': 'max-age=60', etag: '"v1"', 'x-version': '2' } };
        });
        await client.get(url);
        const { res, payload } = await client.get(url);
        expect(res.statusCode).toBe(200);
        expect(String(payload)).toBe('stored body');
        expect(res.headers['x-version']).toBe('2');
        expect(res.headers['cache-status']).toMatch(/^tracewire; fwd=stale; fwd-status=304; stored; ttl=(59|60)$/);
        // Now fresh for 60 s.
        const third = await client.get(url);
        expect(third.res.headers['cache-status']).toMatch(/hit/);
        expect(hits(url)).toHaveLength(2);
    });

    it('revalidates with If-Modified-Since, and stores the new response a 200 brings', async () => {
        const { client } = cached();
        const lastModified = new Date(Date.now() - 3600_000).toUTCString();
        const url = serve((request, count) => {
            if (count === 2) {
                expect(request.headers['if-modified-since']).toBe(lastModified);
            }

            return {
                status: 200,
                headers: { 'cache-control': count === 1 ? 'no-cache' : 'max-age=60', 'last-modified': lastModified },
                body: `v${count}`
            };
        });
        await client.get(url);
        expect(String((await client.get(url)).payload)).toBe('v2');
        expect(String((await client.get(url)).payload)).toBe('v2');
        expect(hits(url)).toHaveLength(2);
    });

    it('request directives: no-cache and max-age=0 revalidate (fwd=request), min-fresh too, max-stale accepts stale', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=10', etag: '"e"' }, 'b'));
        await client.get(url);
        const noCache = await client.get(url, { headers: { 'cache-control': 'no-cache' } });
        expect(noCache.res.headers['cache-status']).toMatch(/^tracewire; fwd=request; fwd-status=200/);
        await client.get(url, { headers: { pragma: 'no-cache' } });
        await client.get(url, { headers: { 'cache-control': 'max-age=0' } });
        await client.get(url, { headers: { 'cache-control': 'min-fresh=30' } });
        expect(hits(url)).toHaveLength(5);

        const stale = serve(reply(200, { 'cache-control': 'max-age=0' }, 'stale'));
        await client.get(stale);
        const accepted = await client.get(stale, { headers: { 'cache-control': 'max-stale=60' } });
        expect(accepted.res.headers['cache-status']).toMatch(/^tracewire; hit; ttl=-?[0-9]; detail=max-stale$/);
        expect(hits(stale)).toHaveLength(1);
    });

    it('only-if-cached: a 504 made by the cache when nothing usable is stored, the stored response when there is', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'b'));
        const onlyIfCached = { headers: { 'cache-control': 'only-if-cached' } };
        const miss = await client.request('GET', url, onlyIfCached);
        expect(miss.statusCode).toBe(504);
        expect(miss.headers['cache-status']).toBe('tracewire; fwd=miss; detail=only-if-cached');
        await client.read(miss);
        const err = await client.get(url, onlyIfCached).catch((e) => e);
        expect(err.output.statusCode).toBe(504);
        await client.get(url);
        expect(String((await client.get(url, onlyIfCached)).payload)).toBe('b');

        const stale = serve(reply(200, { 'cache-control': 'max-age=0' }, 'b'));
        await client.get(stale);
        expect((await client.request('GET', stale, onlyIfCached)).statusCode).toBe(504);
        expect(hits(url)).toHaveLength(1);
    });

    it('stale-while-revalidate answers at once from the cache and revalidates in the background', async () => {
        const { client } = cached();
        let release: () => void = () => {};
        const released = new Promise<void>((resolve) => {
            release = resolve;
        });
        const url = serve(async (_request, count) => {
            if (count === 2) {
                // The background revalidation: held until the caller has its answer.
                await released;
            }

            return {
                status: 200,
                headers: { 'cache-control': 'max-age=0, stale-while-revalidate=60', etag: `"${count}"` },
                body: `v${count}`
            };
        });
        await client.get(url);
        const started = Date.now();
        const served = await client.get(url);
        expect(String(served.payload)).toBe('v1');
        expect(served.res.headers['cache-status']).toMatch(
            /^tracewire; hit; ttl=-?\d+; detail=stale-while-revalidate$/
        );
        expect(Date.now() - started).toBeLessThan(1000);
        await expect.poll(() => hits(url).length).toBe(2);
        expect(hits(url)[1]!.headers['if-none-match']).toBe('"1"');
        // A second stale hit while one revalidation is under way starts no other.
        await client.get(url);
        release();
        await expect
            .poll(async () => String((await client.get(url, { headers: { 'cache-control': 'max-stale' } })).payload))
            .toBe('v2');
        expect(hits(url).length).toBeGreaterThanOrEqual(2);
    });

    it('a background revalidation is sent with the method of the stored response (OPTIONS, not GET)', async () => {
        const optionsClient = new Client().defaults({ mock, cache: { methods: ['GET', 'OPTIONS'] } });
        const url = serve(changingWhileRevalidated);
        await optionsClient.request('OPTIONS', url).then((r) => optionsClient.read(r));
        const stale = await optionsClient.request('OPTIONS', url);
        expect(stale.headers['cache-status']).toMatch(/detail=stale-while-revalidate$/);
        await optionsClient.read(stale);
        await expect.poll(() => hits(url).length).toBe(2);
        expect(hits(url).map((hit) => hit.method)).toEqual(['OPTIONS', 'OPTIONS']);
        expect(hits(url)[1]!.headers['if-none-match']).toBe('"1"');
    });

    it('a background revalidation answered 304 refreshes the stored response; one that fails leaves it stale', async () => {
        const { client } = cached();
        const url = serve((_request, count) =>
            count === 1
                ? {
                      status: 200,
                      headers: { 'cache-control': 'max-age=0, stale-while-revalidate=60', etag: '"a"' },
                      body: 'body'
                  }
                : { status: 304, headers: { 'cache-control': 'max-age=60', etag: '"a"' } }
        );
        await client.get(url);
        await client.get(url);
        await expect
            .poll(async () => (await client.get(url)).res.headers['cache-status'])
            .toMatch(/^tracewire; hit; ttl=(59|60)$/);
        expect(String((await client.get(url)).payload)).toBe('body');

        // Its revalidation's connection is reset.
        const failing = freshUrl();
        on(failing).reply(200, 'kept', { 'cache-control': 'max-age=0, stale-while-revalidate=60' });
        on(failing).fault('connection-reset').persist();
        await client.get(failing);
        await client.get(failing);
        await expect.poll(() => hits(failing).length).toBe(2);
        const again = await client.get(failing);
        expect(String(again.payload)).toBe('kept');
        expect(again.res.headers['cache-status']).toMatch(/detail=stale-while-revalidate/);
    });

    it("a background revalidation's response tells its listeners what the cache made of it: `fwd=stale`, the origin's status, `stored` once written", async () => {
        const store = new MemoryCacheStore();
        const client = new Client().defaults({ mock, events: true, cache: { store } });
        const seenAtResponse: (string | undefined)[] = [];
        const seenAtEnd: (string | undefined)[] = [];
        client.events.on('response', (_err, { res }) => {
            if (res !== undefined) {
                seenAtResponse.push(res.headers['cache-status'] as string | undefined);
                res.on('end', () => seenAtEnd.push(res.headers['cache-status'] as string | undefined));
            }
        });
        const url = serve(staleWhileRevalidating('"a"'));
        await client.get(url);
        await client.get(url);
        await expect.poll(() => seenAtEnd.length).toBe(3);
        // The miss, the stale hit served at once, then the revalidation: its 304 forwarded because the
        // stored response was stale, completed with `stored` once the update had landed, before its end.
        expect(seenAtResponse[2]).toMatch(/^tracewire; fwd=stale; fwd-status=304; ttl=(59|60)$/);
        expect(seenAtEnd[2]).toMatch(/^tracewire; fwd=stale; fwd-status=304; stored; ttl=(59|60)$/);
        expect((await client.get(url)).res.headers['cache-status']).toMatch(/^tracewire; hit; ttl=(59|60)$/);

        // A revalidation answered with a new response: stored once its body has come, as a call's is.
        const changed = serve(changingWhileRevalidated);
        seenAtEnd.length = 0;
        await client.get(changed);
        await client.get(changed);
        await expect.poll(() => seenAtEnd.length).toBe(3);
        expect(seenAtEnd[2]).toMatch(/^tracewire; fwd=stale; fwd-status=200; stored; ttl=-?\d+$/);
        expect(String((await store.get(changed))[0]!.body)).toBe('v2');
    });

    it('a background revalidation whose write fails says so: no `stored`, `detail=store-error`, the stale entry kept', async () => {
        const inner = new MemoryCacheStore();
        let down = false;
        const store: CacheStore = {
            get: (key) => inner.get(key),
            delete: (key) => inner.delete(key),
            set: (key, entry) => (down ? Promise.reject(new Error('the store is down')) : inner.set(key, entry))
        };
        const client = new Client().defaults({ mock, events: true, cache: { store } });
        const seenAtEnd: (string | undefined)[] = [];
        client.events.on('response', (_err, { res }) => {
            res?.on('end', () => seenAtEnd.push(res.headers['cache-status'] as string | undefined));
        });
        const url = serve(staleWhileRevalidating('"d"'));
        await client.get(url);
        down = true;
        await client.get(url);
        await expect.poll(() => seenAtEnd.length).toBe(3);
        expect(seenAtEnd[2]).toMatch(/^tracewire; fwd=stale; fwd-status=304; ttl=(59|60); detail=store-error$/);
        // The update did not land: the entry is still the stale one, served stale again.
        expect((await client.get(url)).res.headers['cache-status']).toMatch(/detail=stale-while-revalidate/);
    });

    it('stale-if-error: a stale response answers a 5xx or a network failure', async () => {
        const { client } = cached();
        // A stored response, then a 500, then connections reset.
        const url = freshUrl();
        on(url).reply(200, 'good', { 'cache-control': 'max-age=0, stale-if-error=60' });
        on(url).reply(500, 'bad');
        on(url).fault('connection-reset').persist();
        await client.get(url);
        const on500 = await client.get(url);
        expect(String(on500.payload)).toBe('good');
        expect(on500.res.headers['cache-status']).toMatch(/detail=stale-if-error$/);
        const onReset = await client.get(url);
        expect(String(onReset.payload)).toBe('good');

        const mustRevalidate = serve((_request, count) => ({
            status: count === 1 ? 200 : 500,
            headers: { 'cache-control': 'max-age=0, must-revalidate, stale-if-error=60' }
        }));
        await client.get(mustRevalidate);
        await expect(client.get(mustRevalidate)).rejects.toMatchObject({ output: { statusCode: 500 } });
    });

    it('stale-if-error is the last resort: a stale connection is re-sent first', async () => {
        const client = cachedOnNetwork();
        const url = serveOnServer((req, res, count) => {
            if (count === 1) {
                res.writeHead(200, { 'cache-control': 'max-age=0, stale-if-error=60' });
                res.end('old');
            } else if (count === 2) {
                // The kept-alive connection the client reuses dies before any response byte.
                req.socket.destroy();
            } else {
                res.writeHead(200, { 'cache-control': 'max-age=0' });
                res.end('new');
            }
        });
        await client.get(url);
        const { payload, res } = await client.get(url);
        expect(String(payload)).toBe('new');
        expect(res.headers['cache-status']).not.toMatch(/stale-if-error/);
        expect(serverHits(url)).toHaveLength(3);
        expect(serverHits(url)[1]!.socket).not.toBe(serverHits(url)[2]!.socket);

        // The re-send fails as well: then the stale response answers.
        const dead = serveOnServer((req, res, count) => {
            if (count === 1) {
                res.writeHead(200, { 'cache-control': 'max-age=0, stale-if-error=60' });
                res.end('old');
            } else {
                req.socket.destroy();
            }
        });
        await client.get(dead);
        const stale = await client.get(dead);
        expect(String(stale.payload)).toBe('old');
        expect(stale.res.headers['cache-status']).toMatch(/detail=stale-if-error$/);
        expect(serverHits(dead)).toHaveLength(3);
    });

    it('stale-if-error is the last resort: a 5xx or a network failure the retry policy retries is retried first', async () => {
        const client = cached().client.defaults({ events: true });
        const reported: string[] = [];
        client.events!.on('response', (err, details) => {
            reported.push(
                err === undefined ? `${details.res!.statusCode} ${details.res!.headers['cache-status']}` : 'error'
            );
        });
        const retry = { retry: { limit: 1, backoff: () => 1 } };
        const url = serve((_request, count) => ({
            status: count === 2 ? 503 : 200,
            headers: { 'cache-control': 'max-age=0, stale-if-error=60' },
            body: count === 1 ? 'old' : count === 2 ? 'unavailable' : 'new'
        }));
        await client.get(url, retry);
        reported.length = 0;
        expect(String((await client.get(url, retry)).payload)).toBe('new');
        expect(hits(url)).toHaveLength(3);
        // The retried 503 was reported as what it was, forwarded, not as a stale hit.
        expect(reported).toHaveLength(2);
        expect(reported[0]).toMatch(/^503 .*fwd-status=503/);
        expect(reported[0]).not.toMatch(/stale-if-error/);

        // The retries spent: the stale response answers the last 503, and the last network failure.
        // A stored response, two 503s that close their connections, then connections reset.
        const failing = freshUrl();
        on(failing).reply(200, 'old', { 'cache-control': 'max-age=0, stale-if-error=60' });
        on(failing).reply(503, '', { connection: 'close' }).times(2);
        on(failing).fault('connection-reset').persist();
        await client.get(failing, retry);
        const on503 = await client.get(failing, retry);
        expect(String(on503.payload)).toBe('old');
        expect(on503.res.headers['cache-status']).toMatch(/detail=stale-if-error$/);
        expect(hits(failing)).toHaveLength(3);
        const onReset = await client.get(failing, {
            retry: { limit: 1, backoff: () => 1, errorCodes: ['ECONNRESET'] }
        });
        expect(String(onReset.payload)).toBe('old');
        expect(hits(failing).length).toBeGreaterThanOrEqual(5);
    });

    it('an unsafe method invalidates the URL, and the same-origin Location and Content-Location', async () => {
        const { client } = cached();
        const target = serve(reply(200, { 'cache-control': 'max-age=60' }));
        const related = serve(reply(200, { 'cache-control': 'max-age=60' }));
        const url = serve((request) =>
            request.method === 'POST'
                ? { status: 201, headers: { location: target, 'content-location': new URL(related).pathname } }
                : { status: 200, headers: { 'cache-control': 'max-age=60' } }
        );
        for (const u of [url, target, related]) {
            await client.get(u);
        }

        await client.post(url, { payload: 'x' });
        for (const u of [url, target, related]) {
            await client.get(u);
            expect(hits(u).filter((request) => request.method === 'GET')).toHaveLength(2);
        }
    });
});

describe('Cache: shared', () => {
    it('does not store private or an authorized response unless told it may; uses s-maxage', async () => {
        const { client, store } = cached({}, true);
        const priv = serve(reply(200, { 'cache-control': 'private, max-age=60' }));
        const auth = serve(reply(200, { 'cache-control': 'max-age=60' }));
        const authPublic = serve(reply(200, { 'cache-control': 'public, max-age=60' }));
        const sMaxage = serve(reply(200, { 'cache-control': 'max-age=60, s-maxage=0' }));
        const authorized = { headers: { authorization: 'Bearer x' } };
        for (let i = 0; i < 2; i++) {
            await client.get(priv);
            await client.get(auth, authorized);
            await client.get(authPublic, authorized);
            await client.get(sMaxage);
        }

        expect(hits(priv)).toHaveLength(2);
        expect(hits(auth)).toHaveLength(2);
        expect(hits(authPublic)).toHaveLength(1);
        expect(hits(sMaxage)).toHaveLength(2);
        expect(store.count).toBe(2);
    });
});

describe('Cache: everything else through the cache', () => {
    it('follows a cached 301 from the cache', async () => {
        const { client } = cached();
        const target = serve(reply(200, { 'cache-control': 'max-age=60' }, 'target'));
        const moved = serve(reply(301, { location: target, 'cache-control': 'max-age=60' }));
        const redirected: string[] = [];
        const options = { redirects: 3, redirected: (_s: number, location: string) => redirected.push(location) };
        expect(String((await client.get(moved, options)).payload)).toBe('target');
        expect(String((await client.get(moved, options)).payload)).toBe('target');
        expect(hits(moved)).toHaveLength(1);
        expect(hits(target)).toHaveLength(1);
        // `redirected` is told of the redirect that made a request, not of the one answered from the cache.
        expect(redirected).toEqual([target]);
    });

    it('a revalidation that meets a stale connection is re-sent, and its 304 still answers from the cache', async () => {
        const client = new Client().defaults({ events: true, cache: true });
        const reasons: (string | undefined)[] = [];
        client.events!.on('response', (_err, { uri }) => reasons.push(uri.resendReason));
        const served = new WeakSet<object>();
        const url = serveOnServer((req, res, count) => {
            if (served.has(req.socket)) {
                // The server closed the kept-alive connection as the next request arrived on it.
                req.socket.destroy();
                return;
            }

            served.add(req.socket);
            res.writeHead(count === 1 ? 200 : 304, { 'cache-control': 'max-age=0', etag: '"s"' });
            res.end(count === 1 ? 'stored' : undefined);
        });
        await client.get(url);
        const { res, payload } = await client.get(url);
        expect(String(payload)).toBe('stored');
        expect(res.headers['cache-status']).toMatch(/^tracewire; fwd=stale; fwd-status=304/);
        expect(reasons).toEqual([undefined, undefined, 'stale-connection']);
        expect(serverHits(url).at(-1)!.headers['if-none-match']).toBe('"s"');
    });

    it('caches over a UNIX socket, keyed apart from the same URL elsewhere', async () => {
        let count = 0;
        const unix = await startUnix((_req, res) => {
            count++;
            res.writeHead(200, { 'cache-control': 'max-age=60' });
            res.end('over the socket');
        });
        try {
            const client = cachedOnNetwork();
            const options = { socketPath: unix.socketPath };
            await client.get('/containers/json', options);
            const { payload, res } = await client.get('/containers/json', options);
            expect(String(payload)).toBe('over the socket');
            expect(res.headers['cache-status']).toMatch(/hit/);
            expect(count).toBe(1);
        } finally {
            await unix.close();
        }
    });

    it("the validators of a revalidation that is redirected stay with their URL: the redirect's request has none", async () => {
        const { client } = cached();
        const target = serve((request) => ({
            status: 200,
            headers: { 'x-conditional': String(request.headers['if-none-match'] ?? 'none') },
            body: 'target'
        }));
        const moved = serve((_request, count) => ({
            status: count === 1 ? 200 : 301,
            headers: { 'cache-control': 'max-age=0', etag: '"m"', ...(count === 1 ? {} : { location: target }) }
        }));
        await client.get(moved);
        const { res } = await client.get(moved, { redirects: 1 });
        expect(hits(moved).at(-1)!.headers['if-none-match']).toBe('"m"');
        expect(res.headers['x-conditional']).toBe('none');
    });

    it("a listener's change to a revalidation's fields stays with its redirect, the validators do not", async () => {
        const { client } = cached();
        const events = new Client().defaults({ mock, events: true, cache: { store: new MemoryCacheStore() } });
        const target = serve((request) => ({
            status: 200,
            headers: {
                'x-conditional': String(request.headers['if-none-match'] ?? 'none'),
                'x-added': String(request.headers['x-added'] ?? 'none')
            },
            body: 'target'
        }));
        const moved = serve((_request, count) => ({
            status: count <= 2 ? 200 : 301,
            headers: { 'cache-control': 'max-age=0', etag: '"m"', ...(count <= 2 ? {} : { location: target }) }
        }));
        await client.get(moved);
        await events.get(moved);
        events.events!.on('preRequest', (uri, options) => {
            // On the revalidation only: the redirect has it from the revalidation's fields.
            if (uri.pathname === new URL(moved).pathname) {
                options.headers['x-added'] = 'yes';
            }
        });
        const { res } = await events.get(moved, { redirects: 1 });
        expect(hits(moved).at(-1)!.headers['if-none-match']).toBe('"m"');
        expect(res.headers['x-conditional']).toBe('none');
        expect(res.headers['x-added']).toBe('yes');
    });

    it('retries through the cache, and stores what the retry got', async () => {
        const { client } = cached();
        const url = serve((_request, count) => ({
            status: count === 1 ? 503 : 200,
            headers: { 'cache-control': count === 1 ? 'no-store' : 'max-age=60' },
            body: `attempt ${count}`
        }));
        const retry = { retry: { backoff: () => 1 } };
        expect(String((await client.get(url, retry)).payload)).toBe('attempt 2');
        expect(String((await client.get(url, retry)).payload)).toBe('attempt 2');
        expect(hits(url)).toHaveLength(2);
    });

    it('a retry goes to the origin, not to the stored response it retries', async () => {
        const { client } = cached();
        const url = serve((_request, count) => ({
            status: count === 1 ? 503 : 200,
            headers: { 'cache-control': 'max-age=60' },
            body: `attempt ${count}`
        }));
        // The 503 is stored (it has explicit freshness); the retry must not be answered with it.
        const { payload, res } = await client.get(url, { retry: { backoff: () => 1 } });
        expect(String(payload)).toBe('attempt 2');
        expect(res.headers['cache-status']).toMatch(/^tracewire; fwd=request; fwd-status=200; stored/);
        expect(String((await client.get(url)).payload)).toBe('attempt 2');
    });

    it('keeps a gzip body as it came and decodes it when read, with maxBytes counted after decoding', async () => {
        const { client, store } = cached();
        const text = 'a'.repeat(10_000);
        const url = serve(reply(200, { 'cache-control': 'max-age=60', 'content-encoding': 'gzip' }, gzipSync(text)));
        expect(String((await client.get(url, { gunzip: true })).payload)).toBe(text);
        const [stored] = (await store.get(url)) as CachedResponse[];
        expect(stored!.body.length).toBeLessThan(text.length);
        expect(String((await client.get(url, { gunzip: true })).payload)).toBe(text);
        await expect(client.get(url, { gunzip: true, maxBytes: 100 })).rejects.toMatchObject({
            output: { statusCode: 413 }
        });
        expect(hits(url)).toHaveLength(1);
    });

    it('json, progress and the read of a hit', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60', 'content-type': 'application/json' }, '{"a":1}'));
        await client.get(url);
        const progress: number[] = [];
        const { payload } = await client.get(url, {
            json: true,
            onDownloadProgress: (p) => progress.push(p.transferred)
        });
        expect(payload).toEqual({ a: 1 });
        expect(progress.at(-1)).toBe(7);
    });

    it("the helpers' 4xx error carries a cached response", async () => {
        const { client } = cached();
        const url = serve(reply(404, { 'cache-control': 'max-age=60' }, 'gone'));
        await expect(client.get(url)).rejects.toMatchObject({ output: { statusCode: 404 } });
        const err = await client.get(url).catch((e) => e);
        expect(err.output.statusCode).toBe(404);
        expect(String(err.data.payload)).toBe('gone');
        expect(err.data.res.headers['cache-status']).toMatch(/hit/);
        expect(hits(url)).toHaveLength(1);
    });

    it('a signal aborted while the store is looked up rejects at once', async () => {
        const slow: CacheStore = { get: () => new Promise(() => {}), set: async () => {}, delete: async () => {} };
        const client = new Client().defaults({ mock, cache: { store: slow } });
        const url = serve(reply(200, {}));
        const controller = new AbortController();
        const pending = client.get(url, { signal: controller.signal });
        controller.abort();
        await expect(pending).rejects.toMatchObject({ output: { statusCode: 500 } });
    });
});

describe('Cache: bounded under load', () => {
    it('many distinct URLs with large bodies, ten at a time: the store never holds more than its bound', async () => {
        const maxSize = 2 * 1024 * 1024;
        const { client, store } = cached({ maxSize, maxEntrySize: 512 * 1024 });
        // The store drops the least recently used key first, and a key is used when written or found
        // (a miss does not touch the order). Under load each URL is a miss, then written once when its
        // body ends, so what is kept is decided by the order of the writes, not by the order of the URLs:
        // with ten in flight the last URL can end before seven others and be gone. Record that order.
        const written: string[] = [];
        const set = store.set.bind(store);
        store.set = (key, entry) => {
            written.push(key);
            return set(key, entry);
        };
        const body = Buffer.alloc(256 * 1024, 7);
        const urls = Array.from({ length: 60 }, () => serve(reply(200, { 'cache-control': 'max-age=60' }, body)));
        let largest = 0;
        let next = 0;
        const worker = async () => {
            while (next < urls.length) {
                const url = urls[next++]!;
                const { payload } = await client.get(url);
                expect((payload as Buffer).length).toBe(body.length);
                largest = Math.max(largest, store.size);
            }
        };
        await Promise.all(Array.from({ length: 10 }, worker));
        expect(largest).toBeLessThanOrEqual(maxSize);
        expect(store.count).toBeGreaterThan(0);
        // Each URL was written once (a GET's key is its URL), so the store saw 60 writes for ~7 places.
        expect([...written].sort()).toEqual([...urls].sort());
        // The most recently written is kept and answers from the cache; the first written was evicted.
        expect((await client.get(written.at(-1)!)).res.headers['cache-status']).toMatch(/hit/);
        expect((await client.get(written[0]!)).res.headers['cache-status']).toMatch(/fwd=miss/);
    });
});

describe('Cache: a failing store', () => {
    it('a store that throws, rejects or never answers costs at most a short wait, never the request', async () => {
        const stores: CacheStore[] = [
            {
                get: () => {
                    throw new Error('sync');
                },
                set: () => {
                    throw new Error('sync');
                },
                delete: () => {
                    throw new Error('sync');
                }
            },
            {
                get: () => Promise.reject(new Error('async')),
                set: () => Promise.reject(new Error('async')),
                delete: () => Promise.reject(new Error('async'))
            },
            { get: () => new Promise(() => {}), set: () => new Promise(() => {}), delete: () => new Promise(() => {}) },
            { get: async () => 'not a list' as never, set: async () => {}, delete: async () => {} }
        ];
        for (const store of stores) {
            const client = new Client().defaults({ mock, cache: { store } });
            const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'network'));
            const started = Date.now();
            expect(String((await client.get(url)).payload)).toBe('network');
            expect(String((await client.get(url)).payload)).toBe('network');
            expect(String((await client.post(url)).payload)).toBe('network');
            expect(Date.now() - started).toBeLessThan(5000);
        }
    });

    it('a MemoryCacheStore goes unbounded (it answers at once) only while its lookup and write are its own', async () => {
        // A method replaced on the instance is the store's no longer: it gets the bound of any other store.
        const store = new MemoryCacheStore();
        store.get = () => new Promise(() => {});
        store.set = () => new Promise(() => {});
        const client = new Client().defaults({ mock, cache: { store, storeTimeout: 50 } });
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'network'));
        const started = Date.now();
        const { res, payload } = await client.get(url);
        expect(String(payload)).toBe('network');
        expect(res.headers['cache-status']).toMatch(/detail=store-timeout/);
        expect(Date.now() - started).toBeLessThan(5000);
    });

    it("a MemoryCacheStore's write of a 304's update is done at once only while its `set` is its own", async () => {
        const store = new MemoryCacheStore();
        const client = new Client().defaults({ mock, cache: { store, storeTimeout: 50 } });
        const url = serve((request) =>
            request.headers['if-none-match'] === '"a"'
                ? { status: 304, headers: { etag: '"a"', 'cache-control': 'max-age=0' } }
                : { status: 200, headers: { etag: '"a"', 'cache-control': 'max-age=0' }, body: 'body' }
        );
        await client.get(url);
        const own = await client.get(url);
        expect(String(own.payload)).toBe('body');
        expect(own.res.headers['cache-status']).toMatch(/^tracewire; fwd=stale; fwd-status=304; stored; ttl=-?[01]$/);
        // Replaced on the instance, its `set` is bounded as any store's: a write that never lands is a timeout.
        store.set = () => new Promise(() => {});
        const replaced = await client.get(url);
        expect(String(replaced.payload)).toBe('body');
        expect(replaced.res.headers['cache-status']).toMatch(
            /^tracewire; fwd=stale; fwd-status=304; ttl=-?[01]; detail=store-timeout$/
        );
    });

    it("a 304 updates the stored response only when its ETag is the stored one's, or it carries none", async () => {
        const store = new MemoryCacheStore();
        const client = new Client().defaults({ mock, cache: { store } });
        const etags = ['', '', '"b"', '', '"a"'];
        const url = serve((request, count) =>
            request.headers['if-none-match'] === '"a"'
                ? {
                      status: 304,
                      headers: {
                          ...(etags[count] === '' ? {} : { etag: etags[count]! }),
                          'cache-control': 'max-age=0',
                          'x-seen': String(count)
                      }
                  }
                : { status: 200, headers: { etag: '"a"', 'cache-control': 'max-age=0' }, body: 'body' }
        );
        await client.get(url);
        // Another ETag: not the stored response's 304; it is the caller's, and the store keeps what it had.
        const other = await client.request('GET', url);
        expect(other.statusCode).toBe(304);
        await client.read(other);
        expect((await store.get(url))[0]!.rawHeaders).not.toContain('x-seen');
        // None, then the stored one: each updates it.
        for (const count of [3, 4]) {
            const { res, payload } = await client.get(url);
            expect(res.statusCode).toBe(200);
            expect(String(payload)).toBe('body');
            expect(res.headers['x-seen']).toBe(String(count));
            expect((await store.get(url))[0]!.rawHeaders).toContain(String(count));
        }
    });

    it("a 304's update in a MemoryCacheStore is kept frozen, whether it repeats the stored fields or changes them", async () => {
        const store = new MemoryCacheStore();
        const client = new Client().defaults({ mock, cache: { store } });
        const url = serve((request, count) =>
            request.headers['if-none-match'] === '"a"'
                ? { status: 304, headers: { etag: '"a"', 'cache-control': 'max-age=0', 'x-version': versions[count]! } }
                : { status: 200, headers: { etag: '"a"', 'cache-control': 'max-age=0' }, body: 'body' }
        );
        await client.get(url);
        // By request count: a field added, repeated (the stored list kept), changed.
        const versions = ['', '', 'a', 'a', 'b'];
        for (const version of versions.slice(2)) {
            const { res, payload } = await client.get(url);
            expect(String(payload)).toBe('body');
            expect(res.headers['x-version']).toBe(version);
            const found = await store.get(url);
            const [entry] = found;
            expect(Object.isFrozen(found)).toBe(true);
            expect(Object.isFrozen(entry)).toBe(true);
            expect(Object.isFrozen(entry!.rawHeaders)).toBe(true);
            expect(entry!.rawHeaders).toContain(version);
            expect(() => {
                (entry as { statusCode: number }).statusCode = 500;
            }).toThrow(TypeError);
        }
    });

    it('a Proxy of a MemoryCacheStore is a store like any other: its failing calls are caught, never left to reject', async () => {
        // The methods read through the Proxy run on it, not on the store, and throw: a store error, not a stalled call.
        const store = new Proxy(new MemoryCacheStore(), {});
        const client = new Client().defaults({ mock, cache: { store } });
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'network'));
        const { res, payload } = await client.get(url);
        expect(String(payload)).toBe('network');
        expect(res.headers['cache-status']).toMatch(
            /^tracewire; fwd=miss; fwd-status=200; ttl=(59|60); detail=store-error$/
        );
    });
});

describe('Cache: what each observer is told of a revalidation', () => {
    // The caller gets the stored response the 304 updated; whoever sees the 304 itself (listeners,
    // channel subscribers, tracers) is told the same outcome on it, whichever of them there are.
    const told = /^tracewire; fwd=stale; fwd-status=304; stored; ttl=(59|60)$/;
    const revalidating = () =>
        serve((request) =>
            request.headers['if-none-match'] === '"r"'
                ? { status: 304, headers: { etag: '"r"', 'cache-control': 'max-age=60' } }
                : { status: 200, headers: { etag: '"r"', 'cache-control': 'max-age=0' }, body: 'stored' }
        );
    // The 304's Cache-Status, in its fields and in its raw lines alike.
    const statusOf = (res: IncomingMessage | undefined) => {
        const lines = res?.rawHeaders.filter(
            (_, i, raw) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === 'cache-status'
        );
        expect(lines).toStrictEqual([res?.headers['cache-status']]);
        return res?.headers['cache-status'];
    };

    it('with no one observing: the caller', async () => {
        const client = new Client().defaults({ mock, events: true, cache: true });
        const url = revalidating();
        await client.get(url);
        const { res, payload } = await client.get(url);
        expect(String(payload)).toBe('stored');
        expect(res.headers['cache-status']).toMatch(told);
    });

    it('with event listeners: the caller, and the 304 of the response event', async () => {
        const client = new Client().defaults({ mock, events: true, cache: true });
        const seen: IncomingMessage[] = [];
        client.events!.on('response', (_err, details) => seen.push(details.res!));
        const url = revalidating();
        await client.get(url);
        const { res } = await client.get(url);
        expect(res.headers['cache-status']).toMatch(told);
        expect(seen.map((hop) => hop.statusCode)).toStrictEqual([200, 304]);
        expect(statusOf(seen[1])).toMatch(told);
    });

    it('with a subscriber of tracewire:client:response alone: the caller, and the 304 of its message', async () => {
        const client = new Client().defaults({ mock, cache: true });
        const seen: IncomingMessage[] = [];
        const listener = (message: unknown) => seen.push((message as ResponseMessage).details.res!);
        const url = revalidating();
        subscribe(CLIENT_CHANNELS.response, listener);
        try {
            await client.get(url);
            const { res } = await client.get(url);
            expect(res.headers['cache-status']).toMatch(told);
        } finally {
            unsubscribe(CLIENT_CHANNELS.response, listener);
        }

        expect(seen.map((hop) => hop.statusCode)).toStrictEqual([200, 304]);
        expect(statusOf(seen[1])).toMatch(told);
    });

    it("with a tracer on the tracing channels alone: the caller, the call's response and the hop's 304", async () => {
        const client = new Client().defaults({ mock, cache: true });
        const calls: CallMessage[] = [];
        const hops: HopMessage[] = [];
        const handlers = <T>(into: T[]) => ({
            start() {},
            end() {},
            asyncStart() {},
            asyncEnd: (message: T) => into.push(message),
            error() {}
        });
        const callHandlers = handlers(calls);
        const hopHandlers = handlers(hops);
        const callChannel = tracingChannel<unknown, CallMessage>(CLIENT_TRACING_CHANNELS.call);
        const hopChannel = tracingChannel<unknown, HopMessage>(CLIENT_TRACING_CHANNELS.hop);
        callChannel.subscribe(callHandlers);
        hopChannel.subscribe(hopHandlers);
        const url = revalidating();
        try {
            await client.get(url);
            const { res } = await client.get(url);
            expect(res.headers['cache-status']).toMatch(told);
            expect(calls.at(-1)!.response).toBe(res);
        } finally {
            callChannel.unsubscribe(callHandlers);
            hopChannel.unsubscribe(hopHandlers);
        }

        const revalidation = hops.at(-1)!;
        expect(revalidation.fromCache).toBe(false);
        expect(revalidation.response?.statusCode).toBe(304);
        expect(statusOf(revalidation.response)).toMatch(told);
    });
});

describe('Cache: the event pipeline', () => {
    it('a hit emits preRequest and response (req undefined, the cached res), no request; a miss all three', async () => {
        const store = new MemoryCacheStore();
        const client = new Client().defaults({ mock, events: true, cache: { store } });
        const events: string[] = [];
        let hitDetails: ResponseDetails | undefined;
        client.events!.on('preRequest', (uri) => events.push(`preRequest ${uri.pathname}`));
        client.events!.on('request', () => events.push('request'));
        client.events!.on('response', (err, details) => {
            events.push(`response ${err ? err.message : details.res?.headers['cache-status']}`);
            hitDetails = details;
        });
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }));
        const path = new URL(url).pathname;
        await client.get(url);
        await client.get(url);
        expect(events[0]).toBe(`preRequest ${path}`);
        expect(events[1]).toBe('request');
        expect(events[2]).toMatch(/^response tracewire; fwd=miss/);
        expect(events[3]).toBe(`preRequest ${path}`);
        expect(events[4]).toMatch(/^response tracewire; hit/);
        expect(events).toHaveLength(5);
        expect(hitDetails!.req).toBeUndefined();
        expect(hitDetails!.uri.pathname).toBe(path);
    });

    it('timings: a hit has no connection and no wire phases, a revalidation the phases of its hop on the wire', async () => {
        const client = new Client().defaults({ mock, events: true, cache: true });
        const timings: Timings[] = [];
        client.events!.on('response', (_err, details) => timings.push(details.timings));
        const url = serve((_request, count) => ({
            status: count === 1 ? 200 : 304,
            headers: { 'cache-control': 'max-age=0', etag: '"t"' },
            body: count === 1 ? 'body' : undefined
        }));
        const fresh = serve(reply(200, { 'cache-control': 'max-age=60' }, 'fresh body'));
        await client.get(fresh);
        const before = Date.now();
        const hit = await client.get(fresh);
        expect(hit.res.headers['cache-status']).toMatch(/hit/);
        const hitTimings = hit.res.timings;
        // The same record on the response and on the event.
        expect(timings.at(-1)).toBe(hitTimings);
        expect(hitTimings.start).toBeGreaterThanOrEqual(before - 1);
        expect(hitTimings.response).toBeGreaterThanOrEqual(hitTimings.start);
        expect(hitTimings.end).toBeGreaterThanOrEqual(hitTimings.response!);
        for (const moment of ['socket', 'lookup', 'connect', 'secureConnect', 'upload', 'error', 'abort'] as const) {
            expect(hitTimings[moment]).toBeUndefined();
        }

        for (const phase of ['wait', 'dns', 'tcp', 'tls', 'request', 'firstByte'] as const) {
            expect(hitTimings.phases[phase]).toBeUndefined();
        }

        expect(hitTimings.phases.download).toBeGreaterThanOrEqual(0);
        expect(hitTimings.phases.total).toBeGreaterThanOrEqual(0);

        await client.get(url);
        const revalidated = await client.get(url);
        expect(revalidated.res.headers['cache-status']).toMatch(/fwd-status=304/);
        // The stored body answers, with the record of the hop that revalidated it.
        const wire = revalidated.res.timings;
        expect(wire.socket).toBeDefined();
        expect(wire.upload).toBeDefined();
        expect(wire.phases.firstByte).toBeGreaterThanOrEqual(0);
        expect(wire.end).toBeGreaterThanOrEqual(wire.response!);
        expect(timings.at(-1)).toBe(wire);
    });

    it("timings without listeners: a hit's and a revalidation's end is noted whoever reads the answer, a helper or the caller", async () => {
        const client = new Client().defaults({ mock, cache: true });
        const fresh = serve(reply(200, { 'cache-control': 'max-age=60' }, 'fresh body'));
        const revalidated = serve((_request, count) => ({
            status: count === 1 ? 200 : 304,
            headers: { 'cache-control': 'max-age=0', etag: '"n"' },
            body: count === 1 ? 'body' : undefined
        }));
        await client.get(fresh);
        await client.get(revalidated);
        const ended = (timings: Timings) => {
            expect(timings.end).toBeGreaterThanOrEqual(timings.response!);
            expect(timings.phases.download).toBeGreaterThanOrEqual(0);
            expect(timings.phases.total).toBeGreaterThanOrEqual(0);
        };

        // Read by a helper, which notes the end itself.
        const hit = await client.get(fresh);
        expect(hit.res.headers['cache-status']).toMatch(/hit/);
        ended(hit.res.timings);
        const viaHelper = await client.get(revalidated);
        expect(viaHelper.res.headers['cache-status']).toMatch(/fwd-status=304/);
        ended(viaHelper.res.timings);

        // Handed to the caller, who reads it: the response itself tells the end.
        for (const url of [fresh, revalidated]) {
            const res = await client.request('GET', url);
            expect(res.timings.end).toBeUndefined();
            expect(String(await client.read(res))).toMatch(/body/);
            ended(res.timings);
        }
    });

    it('a throwing listener fails a hit as it fails a request', async () => {
        const client = new Client().defaults({ mock, events: true, cache: true });
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }));
        await client.get(url);
        const throwing = () => {
            throw new Error('listener');
        };
        client.events!.on('preRequest', throwing);
        await expect(client.get(url)).rejects.toThrow('A preRequest event listener threw: listener');
        client.events!.off('preRequest', throwing);
        client.events!.on('response', throwing);
        await expect(client.get(url)).rejects.toThrow('A response event listener threw: listener');
        client.events!.off('response', throwing);
        const controller = new AbortController();
        client.events!.on('preRequest', () => controller.abort());
        await expect(client.get(url, { signal: controller.signal })).rejects.toMatchObject({
            output: { statusCode: 500 }
        });
    });
});

describe('Cache: the body of an answer from the store', () => {
    /** A path stored at its first call, stale at once, validated with a 304 from then on. */
    function revalidatedEachTime(): string {
        return serve((request) =>
            request.headers['if-none-match'] === '"b"'
                ? { status: 304, headers: { 'cache-control': 'max-age=0', etag: '"b"' } }
                : { status: 200, headers: { 'cache-control': 'max-age=0', etag: '"b"' }, body: 'held body' }
        );
    }

    it('a helper takes the body of a hit or a 304 whole, not streamed, and the response reads as read to its end, as one from the network', async () => {
        const { client } = cached();
        const fresh = serve(reply(200, { 'cache-control': 'max-age=60' }, 'held body'));
        const fromNetwork = await client.get(fresh);
        const hit = await client.get(fresh);
        await client.get(revalidatedEachTime());
        const url = revalidatedEachTime();
        await client.get(url);
        const validated = await client.get(url);
        expect(hit.res.headers['cache-status']).toMatch(/^tracewire; hit/);
        expect(validated.res.headers['cache-status']).toMatch(/^tracewire; fwd=stale; fwd-status=304; stored/);
        for (const { res, payload } of [hit, validated]) {
            expect(String(payload)).toBe('held body');
            // Never flowed: the body was not pushed through the stream to be read back from it.
            expect(res.readableFlowing).toBeNull();
            expect(res.timings?.end).toBeTypeOf('number');
        }

        // Read again, each says what a response from the network read by a helper says.
        const again = /Payload stream already read to its end/;
        await expect(client.read(fromNetwork.res)).rejects.toMatchObject({ message: expect.stringMatching(again) });
        await expect(client.read(hit.res)).rejects.toMatchObject({ message: expect.stringMatching(again) });
        await expect(client.read(validated.res)).rejects.toMatchObject({ message: expect.stringMatching(again) });
    });

    it('is streamed when someone else follows the stream: a `response` listener hears its `data` and `end`', async () => {
        const store = new MemoryCacheStore();
        const client = new Client().defaults({ mock, events: true, cache: { store } });
        const heard: string[] = [];
        client.events.on('response', (_err, { res }) => {
            if (res !== undefined) {
                const chunks: Buffer[] = [];
                res.on('data', (chunk: Buffer) => chunks.push(chunk));
                res.on('end', () => heard.push(`${res.headers['cache-status']}: ${Buffer.concat(chunks)}`));
            }
        });
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'held body'));
        await client.get(url);
        const { payload } = await client.get(url);
        expect(String(payload)).toBe('held body');
        expect(heard).toHaveLength(2);
        expect(heard[1]).toMatch(/^tracewire; hit; ttl=\d+: held body$/);
    });

    it('request(): the answer is a stream that gives its body once, then ends', async () => {
        const { client } = cached();
        const url = serve(reply(200, { 'cache-control': 'max-age=60' }, 'held body'));
        await client.get(url);
        const res = await client.request('GET', url);
        const chunks: Buffer[] = [];
        for await (const chunk of res) {
            chunks.push(chunk as Buffer);
        }

        expect(String(Buffer.concat(chunks))).toBe('held body');
        expect(res.readableEnded).toBe(true);
        await expect(client.read(res)).rejects.toMatchObject({ message: 'Payload stream already read to its end' });
    });

    it('a body taken whole is bounded by maxBytes as a streamed one is', async () => {
        const { client } = cached();
        const url = revalidatedEachTime();
        await client.get(url);
        await expect(client.get(url, { maxBytes: 4 })).rejects.toMatchObject({
            output: { statusCode: 413 }
        });
        const { payload } = await client.get(url, { maxBytes: 9 });
        expect(String(payload)).toBe('held body');
    });
});
