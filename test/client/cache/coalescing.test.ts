import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep, setImmediate as turn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../../src/client/cache/stores/memory-store.js';
import type { CacheStore } from '../../../src/client/contract/cache-store.js';
import type { RequestUri, ResponseDetails } from '../../../src/client/contract/types.js';
import { client as plainClient } from '../../../src/client/index.js';
import { Client } from '../../../src/client/surface/client.js';
import { isHttpError } from '../../../src/errors/index.js';
import {
    type Answer,
    fresh,
    type GatedOrigin,
    type GatedPath,
    received,
    startGatedOrigin,
    uncacheable
} from './gated-origin.js';

/**
 * docs/cache.md "Request coalescing", in one process: concurrent calls for the same cacheable request
 * wait for one origin fetch and are answered from what it stored. Each path of the origin holds its
 * answers until the test opens its gate (gated-origin.ts), once every call has looked the store up (and
 * so joined the fill): what the origin sees is what coalescing let through.
 */

let origin: GatedOrigin;
beforeAll(async () => {
    origin = await startGatedOrigin();
});
afterAll(() => origin.close());

function serve(answer: Answer, open = false): GatedPath {
    return origin.serve(answer, open);
}

/** A MemoryCacheStore that counts its lookups. */
function countingStore(): CacheStore & { lookups: number } {
    const inner = new MemoryCacheStore();
    const store = {
        lookups: 0,
        get(key: string) {
            store.lookups++;
            return inner.get(key);
        },
        set: inner.set.bind(inner),
        delete: inner.delete.bind(inner)
    };
    return store;
}

/** Waits until `store` has been looked up `n` times, then for those calls to join their fill. */
async function lookedUp(store: { lookups: number }, n: number): Promise<void> {
    while (store.lookups < n) {
        await sleep(2);
    }

    await turn();
}

function cacheStatuses(answers: { res: IncomingMessage }[]): string[] {
    return answers.map(({ res }) => String(res.headers['cache-status']));
}

describe('Request coalescing: one process', () => {
    it('100 concurrent identical GETs reach the origin once; the others are answered from what it stored, `collapsed`', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store } });
        const path = serve(fresh());
        const calls = Array.from({ length: 100 }, () => client.get(path.url));
        await lookedUp(store, 100);
        path.open();
        const answers = await Promise.all(calls);
        expect(path.requests).toHaveLength(1);
        for (const { res, payload } of answers) {
            expect(res.statusCode).toBe(200);
            expect(String(payload)).toBe('shared body');
        }

        // The waiters are answered with what the fetch stored, without looking the store up again.
        expect(store.lookups).toBe(100);
        const statuses = cacheStatuses(answers);
        expect(statuses[0]).toMatch(/^tracewire; fwd=miss; fwd-status=200; stored; ttl=(60|59)$/);
        for (const status of statuses.slice(1)) {
            expect(status).toMatch(/^tracewire; fwd=miss; collapsed; ttl=(60|59)$/);
        }
    });

    it('clients on one store coalesce with one another; request() callers too', async () => {
        const store = countingStore();
        const one = new Client().defaults({ cache: { store } });
        const other = new Client().defaults({ cache: { store, shared: true } });
        const path = serve(fresh());
        const calls = [
            one.get(path.url),
            other.get(path.url),
            one.request('GET', path.url).then(async (res) => ({ res, payload: await one.read(res) }))
        ];
        await lookedUp(store, 3);
        path.open();
        const answers = await Promise.all(calls);
        expect(path.requests).toHaveLength(1);
        expect(answers.map(({ payload }) => String(payload))).toStrictEqual(Array(3).fill('shared body'));
        expect(cacheStatuses(answers).filter((status) => status.includes('; collapsed;'))).toHaveLength(2);
    });

    it('a store that fails takes nothing from coalescing in the process: the waiters are answered from the fetch', async () => {
        const store: CacheStore = {
            get: () => Promise.reject(new Error('down')),
            set: () => Promise.reject(new Error('down')),
            delete: () => Promise.reject(new Error('down'))
        };
        const client = new Client().defaults({ cache: { store } });
        const path = serve(fresh());
        const calls = Array.from({ length: 10 }, () => client.get(path.url));
        await received(path, 1);
        await sleep(20);
        path.open();
        const answers = await Promise.all(calls);
        expect(path.requests).toHaveLength(1);
        expect(answers.map(({ payload }) => String(payload))).toStrictEqual(Array(10).fill('shared body'));
    });

    it('coalesce: false sends every call to the origin', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store, coalesce: false } });
        const path = serve(fresh());
        const calls = Array.from({ length: 20 }, () => client.get(path.url));
        await received(path, 20);
        expect(path.mostAtOnce).toBe(20);
        path.open();
        expect(cacheStatuses(await Promise.all(calls)).filter((status) => status.includes('collapsed'))).toStrictEqual(
            []
        );
    });

    it('an uncacheable answer is not shared: each waiter goes to the origin itself (`collapsed=?0`); the next calls skip waiting for passFor', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store, coalesce: { passFor: 300 } } });
        const path = serve(uncacheable);
        const first = Array.from({ length: 10 }, () => client.get(path.url));
        await lookedUp(store, 10);
        // Only the lead reaches the origin while the others wait for it.
        await sleep(20);
        expect(path.requests).toHaveLength(1);
        path.open();
        const answers = await Promise.all(first);
        expect(path.requests).toHaveLength(10);
        // Each has an answer of its own, not the lead's.
        expect(new Set(answers.map(({ payload }) => String(payload))).size).toBe(10);
        const statuses = cacheStatuses(answers);
        expect(statuses[0]).toBe('tracewire; fwd=miss; fwd-status=200');
        for (const status of statuses.slice(1)) {
            expect(status).toBe('tracewire; fwd=miss; collapsed=?0; fwd-status=200');
        }

        // Hit-for-pass: the next calls go at once, side by side, with no wait.
        path.close();
        path.mostAtOnce = 0;
        const wave = Array.from({ length: 10 }, () => client.get(path.url));
        await received(path, 20);
        expect(path.mostAtOnce).toBe(10);
        path.open();
        const passed = cacheStatuses(await Promise.all(wave));
        expect(passed).toStrictEqual(Array(10).fill('tracewire; fwd=miss; fwd-status=200'));

        // Once the pass is over, they wait for one another again.
        await sleep(350);
        path.close();
        const before = store.lookups;
        const third = Array.from({ length: 5 }, () => client.get(path.url));
        await lookedUp(store, before + 5);
        await sleep(20);
        expect(path.requests).toHaveLength(21);
        path.open();
        await Promise.all(third);
        expect(path.requests).toHaveLength(25);
    });

    it('calls with credentials, no-cache, no-store or a precondition of their own, and HEADs, neither wait nor lead', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store } });
        const path = serve(fresh());
        const lead = client.get(path.url);
        await received(path, 1);
        const alone: Record<string, string>[] = [
            { authorization: 'Bearer x' },
            { cookie: 'a=1' },
            { 'cache-control': 'no-cache' },
            { 'cache-control': 'no-store' },
            { pragma: 'no-cache' },
            { 'if-none-match': '"x"' },
            { 'if-modified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' }
        ];
        const calls = [...alone.map((headers) => client.get(path.url, { headers })), client.request('HEAD', path.url)];
        // Each reaches the origin while the lead's answer is still held.
        await received(path, 1 + calls.length);
        expect(path.mostAtOnce).toBe(1 + calls.length);
        path.open();
        await Promise.all([lead, ...calls]);
    });

    it('a lead slower than lockTimeout lets its waiters go to the origin themselves', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store, coalesce: { lockTimeout: 100 } } });
        const path = serve(fresh());
        const calls = Array.from({ length: 5 }, () => client.get(path.url));
        await lookedUp(store, 5);
        // The lead's answer is held; after lockTimeout the waiters look again, find nothing, and go.
        await received(path, 5);
        expect(path.mostAtOnce).toBe(5);
        path.open();
        const statuses = cacheStatuses(await Promise.all(calls));
        expect(statuses[0]).toMatch(/^tracewire; fwd=miss; fwd-status=200; stored/);
        for (const status of statuses.slice(1)) {
            expect(status).toMatch(/^tracewire; fwd=miss; collapsed=\?0; fwd-status=200; stored/);
        }
    });

    it('a waiter waits no longer than its own timeout', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store } });
        const path = serve(fresh());
        const lead = client.get(path.url);
        await received(path, 1);
        const waiter = client.get(path.url, { timeout: 100 });
        // The waiter gives up on the lead after 100 ms and sends its own request (its timeout runs from then).
        await received(path, 2);
        path.open();
        await Promise.all([lead, waiter]);
    });

    it('each call has its own events: a waiter is a hop answered by the cache, its uri.collapsedInto the uri of the hop that fetched', async () => {
        const store = countingStore();
        const client = new Client().defaults({ events: true, cache: { store } });
        const preRequests: RequestUri[] = [];
        const responses: ResponseDetails[] = [];
        let requests = 0;
        client.events!.on('preRequest', (uri) => preRequests.push(uri));
        client.events!.on('request', () => requests++);
        client.events!.on('response', (_err, details) => responses.push(details));
        const path = serve(fresh());
        const calls = Array.from({ length: 4 }, () => client.get(path.url));
        await lookedUp(store, 4);
        path.open();
        const answers = await Promise.all(calls);
        expect(requests).toBe(1);
        expect(preRequests).toHaveLength(4);
        expect(responses).toHaveLength(4);
        const fetched = responses.find((details) => details.req !== undefined)!;
        const waited = responses.filter((details) => details.req === undefined);
        expect(waited).toHaveLength(3);
        expect(fetched.uri.collapsedInto).toBeUndefined();
        for (const details of waited) {
            expect(details.uri.collapsedInto).toBe(fetched.uri);
            expect(details.res!.headers['cache-status']).toMatch(/; collapsed;/);
            expect(details.timings.socket).toBeUndefined();
        }

        // Each call's response is its own object, with its own record.
        expect(new Set(answers.map(({ res }) => res)).size).toBe(4);
        expect(new Set(answers.map(({ res }) => res.timings)).size).toBe(4);
    });

    it('Vary: calls coalesce per variant once one is stored; before, a waiter the answer varies for goes on its own', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store } });
        const path = serve((req, res) => {
            res.writeHead(200, { 'cache-control': 'max-age=60', vary: 'accept-language' });
            res.end(`in ${req.headers['accept-language']}`);
        });
        const en = { headers: { 'accept-language': 'en' } };
        const fr = { headers: { 'accept-language': 'fr' } };
        // Nothing stored: all wait for the first; the French one finds no variant for it, and goes.
        const first = [client.get(path.url, en), client.get(path.url, en), client.get(path.url, fr)];
        await lookedUp(store, 3);
        path.open();
        const answers = await Promise.all(first);
        expect(answers.map(({ payload }) => String(payload))).toStrictEqual(['in en', 'in en', 'in fr']);
        expect(path.requests).toHaveLength(2);
        expect(cacheStatuses(answers)[2]).toMatch(/collapsed=\?0/);

        // Stored variants name accept-language: a German call does not wait for a Spanish one.
        const other = serve((req, res) => {
            res.writeHead(200, { 'cache-control': 'max-age=60', vary: 'accept-language' });
            res.end(`in ${req.headers['accept-language']}`);
        }, true);
        await client.get(other.url, en);
        other.close();
        const before = store.lookups;
        const de = { headers: { 'accept-language': 'de' } };
        const es = { headers: { 'accept-language': 'es' } };
        const second = [client.get(other.url, de), client.get(other.url, es), client.get(other.url, de)];
        await lookedUp(store, before + 3);
        await received(other, 3);
        expect(other.mostAtOnce).toBe(2);
        other.open();
        const varied = await Promise.all(second);
        expect(varied.map(({ payload }) => String(payload))).toStrictEqual(['in de', 'in es', 'in de']);
        expect(other.requests).toHaveLength(3);
    });

    it('the revalidation of a stale response is coalesced too, once a call that passed stored what can be shared', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store } });
        const path = serve((req, res, index) => {
            if (index === 0) {
                res.writeHead(200, { 'cache-control': 'no-store' });
                res.end('not stored');
            } else if (req.headers['if-none-match'] === '"v"') {
                res.writeHead(304, { etag: '"v"', 'cache-control': 'max-age=60' });
                res.end();
            } else {
                res.writeHead(200, { etag: '"v"', 'cache-control': 'max-age=1' });
                res.end('versioned');
            }
        }, true);
        // The first answer is not storable: the request is marked pass; the next call, alone, stores a
        // response the next calls can share, which lifts the mark.
        expect(String((await client.get(path.url)).payload)).toBe('not stored');
        expect(String((await client.get(path.url)).payload)).toBe('versioned');
        await sleep(1_100);
        path.close();
        const before = store.lookups;
        const calls = Array.from({ length: 20 }, () => client.get(path.url));
        await lookedUp(store, before + 20);
        path.open();
        const answers = await Promise.all(calls);
        expect(path.requests).toHaveLength(3);
        expect(path.requests[2]!.headers['if-none-match']).toBe('"v"');
        expect(answers.map(({ payload }) => String(payload))).toStrictEqual(Array(20).fill('versioned'));
        const statuses = cacheStatuses(answers);
        expect(statuses[0]).toMatch(/^tracewire; fwd=stale; fwd-status=304; stored/);
        for (const status of statuses.slice(1)) {
            expect(status).toMatch(/^tracewire; fwd=stale; collapsed; ttl=/);
        }
    });

    it('a lead that is aborted, or whose origin fails or answers 5xx, releases its waiters at once, and marks nothing pass', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store } });
        const failures: Answer[] = [
            (_req, res) => res.destroy(),
            (_req, res) => {
                res.writeHead(503);
                res.end('down');
            }
        ];
        for (const failure of failures) {
            const path = serve(failure);
            const calls = Array.from({ length: 3 }, () => client.get(path.url).catch((err: unknown) => err));
            await lookedUp(store, store.lookups);
            await received(path, 1);
            path.open();
            await received(path, 3);
            for (const answer of await Promise.all(calls)) {
                expect(isHttpError(answer)).toBe(true);
            }

            // Not marked pass: the next calls wait for one another again.
            path.close();
            const before = store.lookups;
            const next = Array.from({ length: 3 }, () => client.get(path.url).catch((err: unknown) => err));
            await lookedUp(store, before + 3);
            await sleep(20);
            expect(path.requests).toHaveLength(4);
            path.open();
            await Promise.all(next);
        }

        const path = serve(fresh());
        const controller = new AbortController();
        const lead = client.get(path.url, { signal: controller.signal }).catch((err: unknown) => err);
        await received(path, 1);
        const waiters = [client.get(path.url), client.get(path.url)];
        await lookedUp(store, store.lookups);
        await sleep(10);
        controller.abort();
        expect(isHttpError(await lead)).toBe(true);
        // The waiters go at once, not after lockTimeout (5 s): one leads anew, the other waits for it.
        await received(path, 2);
        path.open();
        const answers = await Promise.all(waiters);
        expect(answers.map(({ payload }) => String(payload))).toStrictEqual(['shared body', 'shared body']);
    });

    it('a waiter aborted, or past its deadline, while it waits rejects at once; the fill goes on for the others', async () => {
        const store = countingStore();
        const client = new Client().defaults({ cache: { store } });
        const path = serve(fresh());
        const lead = client.get(path.url);
        await received(path, 1);
        const controller = new AbortController();
        const aborted = client.get(path.url, { signal: controller.signal }).catch((err: unknown) => err);
        const late = client.get(path.url, { deadline: 50 }).catch((err: unknown) => err);
        const patient = client.get(path.url);
        await lookedUp(store, 4);
        controller.abort();
        const abortError = await aborted;
        expect(isHttpError(abortError)).toBe(true);
        expect((abortError as Error).message).toMatch(/aborted/);
        const deadlineError = await late;
        expect(isHttpError(deadlineError)).toBe(true);
        expect((deadlineError as Error).message).toMatch(/deadline/i);
        path.open();
        expect(String((await patient).payload)).toBe('shared body');
        await lead;
        expect(path.requests).toHaveLength(1);
    });

    it('rejects a bad coalesce setting, naming it', async () => {
        const bad: unknown[] = [
            'yes',
            1,
            [],
            { lockTimeout: 0 },
            { lockTimeout: 1.5 },
            { lockTimeout: 600_001 },
            { passFor: -1 }
        ];
        for (const coalesce of bad) {
            const err = await plainClient
                .request('GET', 'http://127.0.0.1:1/', { cache: { coalesce: coalesce as never } })
                .catch((e: unknown) => e);
            expect(isHttpError(err)).toBe(true);
            expect((err as Error).message).toMatch(/^Option cache\.coalesce/);
        }

        // null and undefined mean "not set": on, with the defaults.
        expect(() => plainClient.defaults({ cache: { coalesce: null, store: new MemoryCacheStore() } })).not.toThrow();
        expect(() => plainClient.defaults({ cache: { coalesce: { lockTimeout: null, passFor: 0 } } })).not.toThrow();
    });
});
