import { getEventListeners } from 'node:events';
import { Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamReplayLimit } from '../../../src/client/bodies/payload-replay.js';
import { client } from '../../../src/client/index.js';
import { type Echo, echo, settle, socketCount, startHttp, type TestServer, timerCount } from '../helpers.js';

let server: TestServer;
let other: TestServer;

beforeAll(async () => {
    const handler = (req: IncomingMessage, res: import('node:http').ServerResponse) => {
        const url = new URL(req.url ?? '/', 'http://x');
        const to = url.searchParams.get('to');
        if (url.pathname === '/redirect' && to !== null) {
            res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: to }).end();
        } else if (url.pathname === '/slow') {
            setTimeout(() => res.end('late'), 1000).unref();
        } else if (url.pathname === '/stall-body') {
            res.writeHead(200);
            res.write('some');
        } else if (url.pathname === '/bomb') {
            res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(20 * 1024 * 1024)));
        } else if (url.pathname === '/loop') {
            res.writeHead(302, { location: '/loop' }).end();
        } else {
            echo(req, res);
        }
    };
    server = await startHttp(handler);
    other = await startHttp(echo);
});

afterAll(async () => {
    await server.close();
    await other.close();
});

const credentials = { authorization: 'Bearer secret', cookie: 'sid=1', 'proxy-authorization': 'Basic x' };

describe('Safety: redirects', () => {
    it('drops authorization, cookie and proxy-authorization on a redirect to another origin', async () => {
        const to = encodeURIComponent(`${other.url}/landing`);
        const { payload } = await client.get<Echo>(`${server.url}/redirect?to=${to}`, {
            redirects: 1,
            json: true,
            headers: { ...credentials, 'x-other': 'kept' }
        });
        expect(payload.url).toBe('/landing');
        expect(payload.headers.authorization).toBeUndefined();
        expect(payload.headers.cookie).toBeUndefined();
        expect(payload.headers['proxy-authorization']).toBeUndefined();
        expect(payload.headers['x-other']).toBe('kept');
    });

    it('treats a different port or scheme as another origin', async () => {
        const sameHostOtherPort = `http://127.0.0.1:${other.port}/x`;
        const { payload } = await client.get<Echo>(
            `${server.url}/redirect?to=${encodeURIComponent(sameHostOtherPort)}`,
            {
                redirects: 1,
                json: true,
                headers: credentials
            }
        );
        expect(payload.headers.authorization).toBeUndefined();
    });

    it('keeps the credentials on a same-origin redirect', async () => {
        const { payload } = await client.get<Echo>(`${server.url}/redirect?to=/landing`, {
            redirects: 1,
            json: true,
            headers: credentials
        });
        expect(payload.headers).toMatchObject(credentials);
    });

    it('beforeRedirect can put the credentials back', async () => {
        const to = encodeURIComponent(`${other.url}/trusted`);
        const { payload } = await client.get<Echo>(`${server.url}/redirect?to=${to}`, {
            redirects: 1,
            json: true,
            headers: credentials,
            beforeRedirect: (_m, _s, _l, _h, options, next) => {
                options.headers.authorization = 'Bearer for-trusted';
                next();
            }
        });
        expect(payload.headers.authorization).toBe('Bearer for-trusted');
    });

    it('a stream payload over the replay limit on a 307 rejects clearly instead of hanging', async () => {
        const to = encodeURIComponent('/again');
        await expect(
            client.post(`${server.url}/redirect?status=307&to=${to}`, {
                redirects: 1,
                payload: Readable.from([Buffer.alloc(streamReplayLimit + 1)])
            })
        ).rejects.toThrow(/Cannot send a stream payload again/);
    });

    it('a redirect loop ends at the limit', async () => {
        await expect(client.get(`${server.url}/loop`, { redirects: 5 })).rejects.toThrow(
            'Maximum redirections reached'
        );
    });
});

describe('Safety: limits and headers', () => {
    it('maxBytes stops a gzip bomb at the limit and frees the socket', async () => {
        const agent = new HttpAgent({ keepAlive: false });
        await expect(
            client.get(`${server.url}/bomb`, { agent, gunzip: true, maxBytes: 1024 * 1024 })
        ).rejects.toMatchObject({ output: { statusCode: 413 } });
        // A socket leaves its agent on its close, an I/O callback that a loaded machine can delay.
        await expect.poll(() => socketCount(agent)).toBe(0);
        agent.destroy();
    });

    it('a header value with CR or LF is rejected before anything is sent', async () => {
        const agent = new HttpAgent();
        for (const value of ['a\r\nInjected: 1', 'a\nb', 'a\rb']) {
            const promise = client.get(server.url, { agent, headers: { 'x-value': value } });
            await expect(promise).rejects.toThrow(/headers\.x-value must/);
        }

        expect(socketCount(agent)).toBe(0);
        agent.destroy();
    });
});

describe('Safety: AbortSignal', () => {
    it('a signal aborted before the call rejects without a request', async () => {
        const controller = new AbortController();
        controller.abort();
        const promise = client.request('GET', server.url, { signal: controller.signal });
        expect(promise.req).toBeUndefined();
        await expect(promise).rejects.toMatchObject({ message: 'Client request aborted', data: { code: 'ABORT_ERR' } });
    });

    it('aborting cancels a pending request and frees its socket', async () => {
        const agent = new HttpAgent({ keepAlive: true });
        const controller = new AbortController();
        const pending = client.get(`${server.url}/slow`, { agent, signal: controller.signal });
        setTimeout(() => controller.abort(), 10);
        await expect(pending).rejects.toThrow('Client request aborted');
        await expect.poll(() => socketCount(agent)).toBe(0);
        agent.destroy();
    });

    it('aborting cancels a read in progress', async () => {
        const controller = new AbortController();
        const res = await client.request('GET', `${server.url}/stall-body`, { agent: false });
        const reading = client.read(res, { signal: controller.signal });
        controller.abort();
        await expect(reading).rejects.toMatchObject({ message: 'Client read aborted', data: { name: 'AbortError' } });
        expect(res.destroyed).toBe(true);
    });

    it('a signal aborted before the read rejects it at once', async () => {
        const res = await client.request('GET', server.url);
        await expect(client.read(res, { signal: AbortSignal.abort() })).rejects.toThrow('Client read aborted');
    });

    it('aborting while beforeRedirect is deciding rejects the request', async () => {
        const controller = new AbortController();
        await expect(
            client.get(`${server.url}/redirect?to=/next`, {
                redirects: 1,
                signal: controller.signal,
                beforeRedirect: (_m, _s, _l, _h, _o, next) => {
                    controller.abort();
                    next();
                }
            })
        ).rejects.toThrow('Client request aborted');
    });

    it('aborting from a preRequest listener rejects without sending', async () => {
        const traced = client.defaults({ events: true });
        const controller = new AbortController();
        const created: unknown[] = [];
        traced.events!.on('preRequest', () => controller.abort());
        traced.events!.on('request', (req) => created.push(req));
        await expect(traced.get(server.url, { signal: controller.signal })).rejects.toThrow('Client request aborted');
        expect(created).toHaveLength(0);
    });

    it('the abort listener is removed once the request and the read settle', async () => {
        const controller = new AbortController();
        await client.get(server.url, { signal: controller.signal });
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
        await client.get(`${server.url}/slow`, { signal: controller.signal, timeout: 10 }).catch(() => undefined);
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });
});

describe('Safety: nothing outlives a settled request', () => {
    async function assertNoLeak(run: (agent: HttpAgent) => Promise<unknown>): Promise<void> {
        const agent = new HttpAgent({ keepAlive: false });
        const timers = timerCount();
        await run(agent).catch(() => undefined);
        await expect.poll(() => socketCount(agent)).toBe(0);
        expect(timerCount()).toBeLessThanOrEqual(timers);
        agent.destroy();
    }

    it('after a success read to the end', () =>
        assertNoLeak((agent) => client.get(server.url, { agent, timeout: 1000 })));

    it('after a request timeout', () =>
        assertNoLeak((agent) => client.get(`${server.url}/slow`, { agent, timeout: 20 })));

    it('after a read timeout', () =>
        assertNoLeak((agent) => client.get(`${server.url}/stall-body`, { agent, timeout: 20 })));

    it('after too many redirects', () =>
        assertNoLeak((agent) => client.get(`${server.url}/loop`, { agent, redirects: 2 })));

    it('after a read rejected for maxBytes', () =>
        assertNoLeak((agent) => client.get(`${server.url}/bomb`, { agent, gunzip: true, maxBytes: 10 })));

    it('with agent: false', async () => {
        const timers = timerCount();
        const { res } = await client.get(server.url, { agent: false, timeout: 500 });
        await settle(30);
        expect(res.socket === null || res.socket.destroyed).toBe(true);
        expect(timerCount()).toBeLessThanOrEqual(timers);
    });

    it('the keep-alive pool keeps one idle socket for reuse, not one per request', async () => {
        const agent = new HttpAgent({ keepAlive: true });
        for (let i = 0; i < 5; i++) {
            await client.get(server.url, { agent });
        }

        expect(socketCount(agent)).toBe(1);
        agent.destroy();
    });

    it('read removes its listeners from the response', async () => {
        const res = await client.request('GET', server.url);
        const events = ['data', 'end', 'close', 'error'] as const;
        const before = events.map((name) => res.listenerCount(name));
        await client.read(res, { timeout: 1000 });
        expect(events.map((name) => res.listenerCount(name))).toEqual(before);
    });

    it("a helper's response is over when the helper resolves: nothing it emits later changes a thing", async () => {
        const { res, payload } = await client.get(server.url);
        // The reader's listeners stay on it (read.ts, ownsSource), safe because it ended destroyed: a
        // caller's destroy(err) is then a no-op, and its close neither fails the read again nor notes
        // an abort in the timings.
        expect(res.destroyed).toBe(true);
        const timings = structuredClone(res.timings);
        res.destroy(new Error('the caller is done with it'));
        await settle(10);
        expect(res.timings).toEqual(timings);
        expect(res.timings.end).toBeDefined();
        expect(res.timings.abort).toBeUndefined();
        expect(JSON.parse(String(payload)).method).toBe('GET');
    });

    it('the payload stream error listener is removed when the request settles', async () => {
        const payload = Readable.from(['x']);
        await client.post(server.url, { payload });
        expect(payload.listenerCount('error')).toBe(0);
    });
});
