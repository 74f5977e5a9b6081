import { ClientRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { EventEmitter } from 'eventemitter3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
    type Client,
    client,
    clientRequestMarker,
    type EffectiveOptions,
    type RequestUri,
    type ResponseDetails
} from '../../../src/client/index.js';
import type { HttpError } from '../../../src/errors/index.js';
import { MockNetwork } from '../../../src/testing/index.js';
import { type Echo, echo, echoReply, refusedUrl, startHttp, type TestServer } from '../helpers.js';

// The origin is a MockNetwork (docs/testing.md): the events are emitted above the transport seam, for a
// mocked exchange as for one on the network. The network stays for what only Node.js's own request shows:
// the options it gives an agent (a real server), the ClientRequest of a refused connection. /missing answers
// 404, /hop/<n> redirects n times to /done, /slow answers after 500 ms; anything else is echoed.
const origin = 'http://events.test';
const mock = new MockNetwork();
const api = client.defaults({ mock });
mock.intercept({ origin, path: '/missing' }).reply(404, 'nope').persist();
mock.intercept({ origin, path: /^\/hop\// })
    .reply((request) => {
        const left = Number(request.path.slice(5));
        return { status: 302, headers: { location: left > 1 ? `/hop/${left - 1}` : '/done' } };
    })
    .persist();
mock.intercept({ origin, path: '/slow' }).reply(200, 'late').delay(500).persist();
mock.intercept({ origin, method: () => true })
    .reply(echoReply)
    .persist();

let server: TestServer;

beforeAll(async () => {
    server = await startHttp(echo);
});

afterAll(async () => {
    mock.close();
    await server.close();
});

type Recorded =
    | ['preRequest', RequestUri, EffectiveOptions, { method: string; headers: object; redirectCount: number }]
    | ['request', ClientRequest, { ended: boolean }]
    | ['response', HttpError | undefined, ResponseDetails]
    | ['beforeRedirect', number]
    | ['redirected', number];

/** A client with events (of `base`: the mocked origin's, or the network's) and a log of every event in order. */
function recording(base: Client = api): { traced: Client; log: Recorded[] } {
    const traced = base.defaults({ events: true });
    const log: Recorded[] = [];
    traced.events!.on('preRequest', (uri, options) =>
        log.push([
            'preRequest',
            uri,
            options,
            { method: uri.method, headers: { ...uri.headers }, redirectCount: uri.redirectCount }
        ])
    );
    traced.events!.on('request', (req) => log.push(['request', req, { ended: req.writableEnded }]));
    traced.events!.on('response', (err, details) => log.push(['response', err, details]));
    return { traced, log };
}

describe('6. Events', () => {
    it('exist only on a client made with events: true', () => {
        expect('events' in client).toBe(false);
        expect('events' in client.defaults({ headers: { a: 'b' } })).toBe(false);
        const traced = client.defaults({ events: true });
        expect(traced.events).toBeInstanceOf(EventEmitter);
        expect('events' in traced.defaults({ events: false })).toBe(false);
    });

    it('a client derived from an events-enabled client shares its emitter', async () => {
        const { traced, log } = recording();
        const derived = traced.defaults({ headers: { 'x-derived': '1' } }).defaults({ events: true });
        expect(derived.events).toBe(traced.events);
        await derived.get(origin);
        expect(log.map(([name]) => name)).toEqual(['preRequest', 'request', 'response']);
    });

    it('emits preRequest, request and response in order with their payloads', async () => {
        const { traced, log } = recording();
        const before = Date.now();
        const promise = traced.request('POST', `${origin}/users/7?x=1`, {
            payload: { name: 'a' },
            headers: { 'X-Trace': 'on' },
            route: '/users/{id}'
        });
        const res = await promise;
        res.resume();
        expect(log.map(([name]) => name)).toEqual(['preRequest', 'request', 'response']);
        const [, uri, options, seen] = log[0] as Extract<Recorded, ['preRequest', ...unknown[]]>;
        expect(uri).toBeInstanceOf(URL);
        expect(uri.href).toBe(`${origin}/users/7?x=1`);
        expect(seen).toEqual({
            method: 'POST',
            headers: { 'x-trace': 'on', 'content-type': 'application/json', 'content-length': 12 },
            redirectCount: 0
        });
        expect(options).toMatchObject({ payload: { name: 'a' }, route: '/users/{id}' });
        const [, req, state] = log[1] as Extract<Recorded, ['request', ...unknown[]]>;
        expect(req).toBe(promise.req);
        expect(state.ended).toBe(false);
        const [, err, details] = log[2] as Extract<Recorded, ['response', ...unknown[]]>;
        expect(err).toBeUndefined();
        expect(details.req).toBe(promise.req);
        expect(details.res).toBe(res);
        expect(details.uri).toBe(uri);
        expect(details.start).toBeGreaterThanOrEqual(before);
        expect(details.start).toBeLessThanOrEqual(Date.now());
    });

    it('applies the changes a preRequest listener makes to uri, headers and options', async () => {
        const traced = api.defaults({ events: true });
        traced.events!.on('preRequest', (uri, options) => {
            uri.headers.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
            uri.pathname = '/rewritten';
            uri.method = 'PUT';
            options.payload = 'replaced';
        });
        const { payload } = await traced.post<Echo>(`${origin}/original`, { payload: 'given', json: true });
        expect(payload).toMatchObject({ method: 'PUT', url: '/rewritten', payload: 'replaced' });
        expect(payload.headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
        expect(payload.headers['content-length']).toBe('8');
    });

    it('response reports an error status with the response and no error', async () => {
        const { traced, log } = recording();
        await expect(traced.get(`${origin}/missing`)).rejects.toMatchObject({ output: { statusCode: 404 } });
        const responses = log.filter(([name]) => name === 'response') as Array<
            Extract<Recorded, ['response', ...unknown[]]>
        >;
        expect(responses).toHaveLength(1);
        expect(responses[0]![1]).toBeUndefined();
        expect(responses[0]![2].res?.statusCode).toBe(404);
    });

    it('each redirect hop gets its own preRequest, request and response; callbacks run between hops', async () => {
        const { traced, log } = recording();
        const { res } = await traced.get(`${origin}/hop/2`, {
            redirects: 2,
            beforeRedirect: (_m, statusCode, _l, _h, _o, next) => {
                log.push(['beforeRedirect', statusCode]);
                next();
            },
            redirected: (statusCode) => log.push(['redirected', statusCode])
        });
        expect(res.statusCode).toBe(200);
        expect(log.map(([name]) => name)).toEqual([
            'preRequest',
            'request',
            'response',
            'beforeRedirect',
            'preRequest',
            'request',
            'redirected',
            'response',
            'beforeRedirect',
            'preRequest',
            'request',
            'redirected',
            'response'
        ]);
        const pre = log.filter(([name]) => name === 'preRequest') as Array<
            Extract<Recorded, ['preRequest', ...unknown[]]>
        >;
        const responses = log.filter(([name]) => name === 'response') as Array<
            Extract<Recorded, ['response', ...unknown[]]>
        >;
        expect(pre.map(([, uri]) => uri.redirectCount)).toEqual([0, 1, 2]);
        expect(pre.map(([, uri]) => new URL(uri.href).pathname)).toEqual(['/hop/2', '/hop/1', '/done']);
        expect(responses.map(([, , details]) => details.res?.statusCode)).toEqual([302, 302, 200]);
        for (const [index, [, , details]] of responses.entries()) {
            expect(details.uri).toBe(pre[index]![1]);
        }

        expect(new Set(pre.map(([, uri]) => uri)).size).toBe(3);
    });

    it('too many redirects: every 3xx hop gets its response event, then the request rejects with 502', async () => {
        const { traced, log } = recording();
        await expect(traced.get(`${origin}/hop/3`, { redirects: 1 })).rejects.toThrow('Maximum redirections reached');
        const responses = log.filter(([name]) => name === 'response') as Array<
            Extract<Recorded, ['response', ...unknown[]]>
        >;
        expect(responses.map(([, err, details]) => [err, details.res?.statusCode])).toEqual([
            [undefined, 302],
            [undefined, 302]
        ]);
    });

    it('a network error is reported once with the 502 and the system error code', async () => {
        // A connection refused by the network, where the request is Node's own ClientRequest.
        const { traced, log } = recording(client);
        const err = await traced.get(refusedUrl).catch((e: HttpError) => e);
        const responses = log.filter(([name]) => name === 'response') as Array<
            Extract<Recorded, ['response', ...unknown[]]>
        >;
        expect(responses).toHaveLength(1);
        const [, reported, details] = responses[0]!;
        expect(reported).toBe(err);
        expect(details.res).toBeUndefined();
        expect(details.req).toBeInstanceOf(ClientRequest);
        expect(reported?.output.statusCode).toBe(502);
        expect((reported!.data as { code: string }).code).toBe('ECONNREFUSED');
    });

    it('a timeout is reported once with the 504 and code ETIMEDOUT', async () => {
        const { traced, log } = recording();
        const err = await traced.get(`${origin}/slow`, { timeout: 30 }).catch((e: HttpError) => e);
        const responses = log.filter(([name]) => name === 'response');
        expect(responses).toHaveLength(1);
        expect(responses[0]![1]).toBe(err);
        expect(err).toMatchObject({ output: { statusCode: 504 }, data: { code: 'ETIMEDOUT' } });
    });

    it('an abort is reported once with an AbortError carrying ABORT_ERR and the reason', async () => {
        const { traced, log } = recording();
        const controller = new AbortController();
        const reason = new Error('user navigated away');
        setTimeout(() => controller.abort(reason), 20);
        const err = (await traced
            .get(`${origin}/slow`, { signal: controller.signal })
            .catch((e: unknown) => e)) as HttpError;
        const responses = log.filter(([name]) => name === 'response');
        expect(responses).toHaveLength(1);
        expect(responses[0]![1]).toBe(err);
        const data = err.data as Error & { code: string };
        expect(data.name).toBe('AbortError');
        expect(data.code).toBe('ABORT_ERR');
        expect(data.cause).toBe(reason);
    });

    it('fires for every request of every module sharing the client', async () => {
        const { traced, log } = recording();
        const a = traced.defaults({ headers: { 'x-module': 'a' } });
        const b = traced.defaults({ headers: { 'x-module': 'b' } });
        await Promise.all([a.get(origin), b.get(origin), traced.get(origin)]);
        expect(log.filter(([name]) => name === 'response')).toHaveLength(3);
    });

    it('a request that starts with no listener is not observed, not even by a listener added meanwhile', async () => {
        const traced = api.defaults({ events: true });
        const seen: string[] = [];
        const promise = traced.get(`${origin}/first`);
        traced.events!.on('response', (_err, details) => seen.push(details.uri.pathname));
        await promise;
        expect(seen).toEqual([]);

        // The listener is there when the next request begins: that one is observed whole.
        await traced.get(`${origin}/second`);
        expect(seen).toEqual(['/second']);
    });

    it('marks the headers of the options given to http.request with an enumerable Symbol.for("tracewire.client")', async () => {
        const seen: Array<Record<symbol, unknown>> = [];
        class SpyAgent extends HttpAgent {
            addRequest(req: ClientRequest, options: Record<symbol, unknown>): void {
                seen.push(options);
                // addRequest is public in Node but missing from its typings.
                (HttpAgent.prototype as unknown as { addRequest: Function }).addRequest.call(this, req, options);
            }
        }
        const agent = new SpyAgent();
        await client.get(server.url, { agent });
        expect(clientRequestMarker).toBe(Symbol.for('tracewire.client'));
        const headers = (seen[0] as { headers: Record<symbol, unknown> }).headers;
        expect(headers[Symbol.for('tracewire.client')]).toBe(true);
        expect(Object.getOwnPropertyDescriptor(headers, Symbol.for('tracewire.client'))?.enumerable).toBe(true);
        // Not on the options themselves, which Node copies key by key, and no method for a GET.
        expect(Object.getOwnPropertySymbols(seen[0])).not.toContain(Symbol.for('tracewire.client'));
        expect(seen[0]).not.toHaveProperty('method');
        // An agent of another make than Node's own is told the scheme (agent-base's agents read it).
        expect((seen[0] as { protocol?: string }).protocol).toBe('http:');
        agent.destroy();
    });

    describe('a throwing listener fails its request without crashing the process', () => {
        it('preRequest: rejects before any request is made, and the hop still gets its response event', async () => {
            const { traced, log } = recording();
            traced.events!.on('preRequest', () => {
                throw new Error('listener bug');
            });
            const err = await traced.get(origin).catch((failure: HttpError) => failure);
            expect(err).toMatchObject({
                message: 'Request could not be created: listener bug',
                output: { statusCode: 500 }
            });
            const responses = log.filter((entry) => entry[0] === 'response');
            expect(responses).toHaveLength(1);
            const [, reported, details] = responses[0] as ['response', HttpError, ResponseDetails];
            expect(reported).toBe(err);
            expect(details.req).toBeUndefined();
            expect(details.res).toBeUndefined();
            expect(details.uri).toBe(log[0]![1]);
        });

        it('preRequest: a header Node refuses fails the hop, reported once without a request', async () => {
            const { traced, log } = recording();
            traced.events!.on('preRequest', (uri) => {
                uri.headers['x-bad'] = 'a\r\nb';
            });
            await expect(traced.get(origin)).rejects.toThrow(/Request could not be created/);
            expect(log.map(([name]) => name)).toEqual(['preRequest', 'response']);
            expect((log[1] as ['response', HttpError, ResponseDetails])[2].req).toBeUndefined();
        });

        it('preRequest: aborting the signal cancels the hop, reported once with the abort', async () => {
            const { traced, log } = recording();
            const controller = new AbortController();
            traced.events!.on('preRequest', () => controller.abort());
            await expect(traced.get(origin, { signal: controller.signal })).rejects.toThrow('Client request aborted');
            expect(log.map(([name]) => name)).toEqual(['preRequest', 'response']);
            const [, reported, details] = log[1] as ['response', HttpError, ResponseDetails];
            expect((reported.data as Error).name).toBe('AbortError');
            expect(details.req).toBeUndefined();
        });

        it('request: the request is cancelled and still reported', async () => {
            const { traced, log } = recording();
            traced.events!.on('request', () => {
                throw new Error('listener bug');
            });
            await expect(traced.get(origin)).rejects.toThrow('A request event listener threw: listener bug');
            expect(log.filter(([name]) => name === 'response')).toHaveLength(1);
        });

        it('request: a listener that aborts the signal, then throws, still leaves one response event', async () => {
            const { traced, log } = recording();
            const controller = new AbortController();
            traced.events!.on('request', () => {
                controller.abort();
                throw new Error('listener bug');
            });
            await expect(traced.get(origin, { signal: controller.signal })).rejects.toThrow('Client request aborted');
            expect(log.filter(([name]) => name === 'response')).toHaveLength(1);
        });

        it('response: the request rejects with the listener error', async () => {
            const traced = api.defaults({ events: true });
            let res: IncomingMessage | undefined;
            traced.events!.on('response', (_err, details) => {
                res = details.res;
                throw new Error('listener bug');
            });
            await expect(traced.get(origin)).rejects.toThrow('A response event listener threw: listener bug');
            expect(res?.destroyed).toBe(true);
        });
    });
});
