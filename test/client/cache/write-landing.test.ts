import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { copyBody } from '../../../src/client/cache/response.js';
import { MemoryCacheStore } from '../../../src/client/cache/stores/memory-store.js';
import type { CachedResponse, CacheStore } from '../../../src/client/contract/cache-store.js';
import { Client } from '../../../src/client/surface/client.js';
import { MockNetwork, type MockReplyFunction } from '../../../src/testing/index.js';
import { startHttp } from '../helpers.js';

/**
 * README "Cache", docs/cache.md "The `cache` option": what a call stores has landed in the store before
 * the call settles — a helper's call once its body is read and stored, `read()` of a `request()`'s
 * response likewise, a 304's update before the response it made is handed over — within the cache's
 * bound on a store call, whatever the store does.
 */

// The origin is a MockNetwork (docs/testing.md): the cache works above the transport seam, on a mocked
// exchange as on one over the network. A real server stays for a reset right after a response's headers.
const origin = 'http://landing.test';
const mock = new MockNetwork();
afterAll(() => {
    mock.close();
});

let paths = 0;
/** A fresh path answered by `route` for every request; returns its URL. */
function serve(route: MockReplyFunction): string {
    const path = `/w${++paths}`;
    mock.intercept({ origin, method: () => true, path })
        .reply(route)
        .persist();
    return origin + path;
}

function hits(url: string): number {
    return mock.requests.filter((request) => request.url === url).length;
}

/** A MemoryCacheStore whose writes take `delay` ms (or never land, for `Infinity`); `landed` lists the keys written. */
function slowStore(delay: number): CacheStore & { landed: string[] } {
    const inner = new MemoryCacheStore();
    const landed: string[] = [];
    return {
        landed,
        get: (key) => inner.get(key),
        delete: (key) => inner.delete(key),
        async set(key: string, entry: CachedResponse) {
            if (delay === Number.POSITIVE_INFINITY) {
                return new Promise<void>(() => {});
            }

            await sleep(delay);
            await inner.set(key, entry);
            landed.push(key);
        }
    };
}

const fresh: MockReplyFunction = () => ({ status: 200, headers: { 'cache-control': 'max-age=60' }, body: 'body' });

describe('Cache: a write lands before the call settles', () => {
    it("a helper's call settles once its response is stored", async () => {
        const store = slowStore(80);
        const client = new Client().defaults({ mock, cache: { store } });
        const url = serve(fresh);
        const { payload } = await client.get(url);
        expect(String(payload)).toBe('body');
        expect(store.landed).toStrictEqual([url]);
    });

    it('request() hands the response over at its headers; read() of it settles once it is stored', async () => {
        const store = slowStore(80);
        const client = new Client().defaults({ mock, cache: { store } });
        const url = serve(fresh);
        const res = await client.request('GET', url);
        expect(store.landed).toStrictEqual([]);
        expect(String(await client.read(res))).toBe('body');
        expect(store.landed).toStrictEqual([url]);
    });

    it("a 304's update has landed when the response it made is handed over", async () => {
        const store = slowStore(60);
        const client = new Client().defaults({ mock, cache: { store } });
        const url = serve((request) =>
            request.headers['if-none-match'] === '"a"'
                ? { status: 304, headers: { etag: '"a"', 'cache-control': 'max-age=60', 'x-updated': 'yes' } }
                : { status: 200, headers: { etag: '"a"', 'cache-control': 'max-age=0' }, body: 'body' }
        );
        await client.get(url);
        const res = await client.request('GET', url);
        expect(res.headers['cache-status']).toMatch(/fwd=stale; fwd-status=304; stored/);
        expect(store.landed).toStrictEqual([url, url]);
        const [updated] = await store.get(url);
        expect(updated!.rawHeaders).toContain('x-updated');
        await client.read(res);
    });

    it('a store whose writes never land holds a call at most for the bound on a store call', async () => {
        const store = slowStore(Number.POSITIVE_INFINITY);
        const client = new Client().defaults({ mock, cache: { store } });
        const url = serve(fresh);
        const started = Date.now();
        expect(String((await client.get(url)).payload)).toBe('body');
        // The bound is 250 ms (README "Cache"); the margin is for a loaded machine.
        expect(Date.now() - started).toBeLessThan(2_000);
        const res = await client.request('GET', url);
        expect(String(await client.read(res))).toBe('body');
        expect(hits(url)).toBe(2);
    });

    it('a stale-while-revalidate revalidation counts as under way until its write landed: no second one meanwhile', async () => {
        const inner = new MemoryCacheStore();
        // Writes wait at the gate once it is closed, until it opens.
        let gate: Promise<void> | undefined;
        let open = () => {};
        let writes = 0;
        const store: CacheStore = {
            get: (key) => inner.get(key),
            delete: (key) => inner.delete(key),
            set: async (key, entry) => {
                writes++;
                await gate;
                await inner.set(key, entry);
            }
        };
        const client = new Client().defaults({ mock, cache: { store } });
        let revalidations = 0;
        const url = serve((request) => {
            if (request.headers['if-none-match'] === '"a"') {
                revalidations++;
            }

            return {
                status: 200,
                headers: { etag: '"a"', 'cache-control': 'max-age=0, stale-while-revalidate=60' },
                body: `body ${revalidations}`
            };
        });
        await client.get(url);
        gate = new Promise((resolve) => {
            open = resolve;
        });
        // Stale: answered at once, revalidated in the background; its write waits at the gate.
        expect((await client.get(url)).res.headers['cache-status']).toMatch(/detail=stale-while-revalidate/);
        while (writes < 2) {
            await sleep(5);
        }

        // The revalidation's response has come whole; its write has not landed: a stale hit starts no other.
        const meanwhile = await client.get(url);
        expect(meanwhile.res.headers['cache-status']).toMatch(/detail=stale-while-revalidate/);
        expect(String(meanwhile.payload)).toBe('body 0');
        open();
        await sleep(20);
        expect(revalidations).toBe(1);
        expect(String((await inner.get(url))[0]!.body)).toBe('body 1');
    });
});

/** A MemoryCacheStore whose writes fail as `how` says: reject, never answer, or decline the entry. */
function failingStore(how: 'reject' | 'hang' | 'decline'): CacheStore & { writes: number } {
    const inner = new MemoryCacheStore();
    const store = {
        writes: 0,
        get: (key: string) => inner.get(key),
        delete: (key: string) => inner.delete(key),
        set(): Promise<boolean> {
            store.writes++;
            if (how === 'reject') {
                return Promise.reject(new Error('the store is down'));
            }

            return how === 'hang' ? new Promise<boolean>(() => {}) : Promise.resolve(false);
        }
    };
    return store;
}

describe('Cache-Status says `stored` only once the write has landed (docs/cache.md "Cache-Status")', () => {
    for (const [how, detail] of [
        ['reject', 'store-error'],
        ['hang', 'store-timeout'],
        ['decline', 'store-declined']
    ] as const) {
        it(`a write that ${how === 'reject' ? 'fails' : how === 'hang' ? 'never lands' : 'the store declines'}: no \`stored\`, \`detail=${detail}\`, and the next call misses as the header said`, async () => {
            const store = failingStore(how);
            const client = new Client().defaults({ mock, cache: { store } });
            const url = serve(fresh);
            for (const call of [1, 2]) {
                const { res, payload } = await client.get(url);
                expect(String(payload)).toBe('body');
                expect(res.headers['cache-status']).toMatch(
                    new RegExp(`^tracewire; fwd=miss; fwd-status=200; ttl=(59|60); detail=${detail}$`)
                );
                expect(store.writes).toBe(call);
            }

            expect(hits(url)).toBe(2);
        });
    }

    it('a caller reading the stream itself sees its end once the write landed, and `stored` with it', async () => {
        const store = slowStore(60);
        const client = new Client().defaults({ mock, cache: { store } });
        const url = serve(fresh);
        const res = await client.request('GET', url);
        expect(res.headers['cache-status']).not.toMatch(/stored/);
        const atEnd = await new Promise<{ landed: string[]; status: unknown }>((resolve) => {
            res.on('end', () => resolve({ landed: [...store.landed], status: res.headers['cache-status'] }));
            res.resume();
        });
        expect(atEnd.landed).toStrictEqual([url]);
        expect(atEnd.status).toMatch(/^tracewire; fwd=miss; fwd-status=200; stored; ttl=(59|60)$/);
    });

    it("a 304's update that fails: neither the response made nor the 304 the `response` event had says `stored`", async () => {
        const inner = new MemoryCacheStore();
        let failing = false;
        const store: CacheStore = {
            get: (key) => inner.get(key),
            delete: (key) => inner.delete(key),
            set: (key, entry) => (failing ? Promise.reject(new Error('the store is down')) : inner.set(key, entry))
        };
        const client = new Client().defaults({ mock, events: true, cache: { store } });
        const url = serve((request) => {
            const validated = request.headers['if-none-match'] === '"a"';
            return {
                status: validated ? 304 : 200,
                headers: { etag: '"a"', 'cache-control': 'max-age=0' },
                body: validated ? undefined : 'body'
            };
        });
        await client.get(url);
        failing = true;
        const seen: IncomingMessage[] = [];
        client.events!.on('response', (_err, details) => {
            if (details.res !== undefined) {
                seen.push(details.res as IncomingMessage);
            }
        });
        const { res, payload } = await client.get(url);
        expect(String(payload)).toBe('body');
        expect(res.headers['cache-status']).toMatch(
            /^tracewire; fwd=stale; fwd-status=304; ttl=-?[01]; detail=store-error$/
        );
        expect(seen).toHaveLength(1);
        expect(seen[0]!.statusCode).toBe(304);
        expect(seen[0]!.headers['cache-status']).toBe(res.headers['cache-status']);
    });
});

describe('Cache: the copy of a body always ends', () => {
    it('a response destroyed before its copy began (a reset right after its headers) is told as cut, never left waiting', async () => {
        // A connection's reset, on a real server.
        const server = await startHttp((_req, res) => {
            res.writeHead(200, { 'content-length': '100', 'cache-control': 'max-age=60' });
            res.write('some', () => setTimeout(() => res.socket?.destroy(), 10));
        });
        try {
            const res = await new Client().request('GET', server.url, { agent: false });
            res.on('error', () => {});
            await new Promise((resolve) => res.once('close', resolve));
            const told = await new Promise<string>((resolve) => {
                copyBody(
                    res,
                    1024,
                    () => {
                        resolve('ended');
                        return Promise.resolve();
                    },
                    () => resolve('cut')
                );
                setTimeout(() => resolve('nothing'), 500);
            });
            expect(told).toBe('cut');
        } finally {
            await server.close();
        }
    });
});
