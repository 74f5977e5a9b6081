import { Agent, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '../../../../src/client/index.js';
import { isHttpError } from '../../../../src/errors/index.js';
import { settle, socketCount, startHttp, type TestServer } from '../../helpers.js';

// While other requests await their responses, a request is written with the others of its turn of the
// event loop, at the turn's end; alone, at once (src/client/wire/http1/turn-writes.ts). What a caller can
// tell of it: when a request's bytes leave, that a request dropped before they did never reaches the
// server, that a test's fake timers do not hold the writes back, and that one request that cannot be
// written fails alone.

let server: TestServer;
let received: string[] = [];
// The responses to /hold, answered when a test lets them go.
let held: ServerResponse[] = [];
let agent: Agent;

beforeAll(async () => {
    server = await startHttp((req, res) => {
        received.push(req.url ?? '');
        if (req.url === '/hold') {
            held.push(res);
        } else {
            res.end('done');
        }
    });
});

afterEach(() => {
    vi.useRealTimers();
    for (const res of held) {
        res.end('released');
    }

    held = [];
    received = [];
    agent.destroy();
});

afterAll(async () => {
    await server.close();
});

/** A client on a keep-alive agent of its own with `connections` open and idle, the server's log emptied. */
async function warmClient(connections: number, events = false): Promise<Client> {
    agent = new Agent({ keepAlive: true });
    const api = new Client().defaults({ agent, events });
    await Promise.all(Array.from({ length: connections }, () => api.get(`${server.url}/warm`)));
    expect(socketCount(agent)).toBe(connections);
    received = [];
    return api;
}

/** Lets the queued nextTicks and then the promise jobs run: what a caller's own code may do before the turn ends. */
async function ticksAndJobs(): Promise<void> {
    await new Promise((resolve) => process.nextTick(resolve));
    await Promise.resolve();
}

describe('requests are written at the end of their turn while others await responses', () => {
    it('a request alone on the client is written at once', async () => {
        const api = await warmClient(1);
        const promise = api.request('GET', `${server.url}/alone`);
        expect(promise.req?.writableEnded).toBe(true);
        await promise;
    });

    it('beside one awaiting its response, it is written once the turn’s I/O callbacks have run', async () => {
        const api = await warmClient(2);
        const holding = api.request('GET', `${server.url}/hold`);
        const promise = api.request('GET', `${server.url}/later`);
        expect(holding.req?.writableEnded).toBe(true);
        expect(promise.req?.writableEnded).toBe(false);
        await ticksAndJobs();
        expect(promise.req?.writableEnded).toBe(false);
        await new Promise((resolve) => setImmediate(resolve));
        expect(promise.req?.writableEnded).toBe(true);
        await promise;
        held[0]?.end('released');
        await holding;
    });

    it('a request dropped before the end of its turn, on a pooled connection, never reaches the server', async () => {
        const api = await warmClient(2);
        const holding = api.get(`${server.url}/hold`);
        const controller = new AbortController();
        const promise = api.get(`${server.url}/dropped`, { signal: controller.signal });
        // Written as it was ended, the request would be on its pooled socket by now (the agent hands the socket
        // over in a nextTick, which flushes what the request had).
        await ticksAndJobs();
        controller.abort();
        const err = await promise.catch((error: unknown) => error);
        expect(isHttpError(err) && err.message).toMatch(/abort/i);
        await settle();
        expect(received).toEqual(['/hold']);
        held[0]?.end('released');
        await holding;
    });

    it("a test's fake timers, setImmediate's included, do not hold the writes back", async () => {
        const api = await warmClient(2);
        vi.useFakeTimers();
        const holding = api.get(`${server.url}/hold`);
        const { payload } = await api.get(`${server.url}/faked`);
        expect(String(payload)).toBe('done');
        expect(received).toEqual(['/hold', '/faked']);
        held[0]?.end('released');
        await holding;
    });

    it('a request that cannot be written fails alone, with what went wrong; the others of its turn are sent', async () => {
        const api = await warmClient(2, true);
        const events = api.events;
        if (events === undefined) {
            throw new Error('a client made with events: true has an emitter');
        }

        events.on('request', (req) => {
            if (req.getHeader('x-refuse') !== undefined) {
                // What a listener replacing the request's end with its own could do.
                req.end = () => {
                    throw new Error('refused by the listener');
                };
            }
        });
        const holding = api.get(`${server.url}/hold`);
        const [refused, sent] = await Promise.allSettled([
            api.get(`${server.url}/refused`, { headers: { 'x-refuse': '1' } }),
            api.get(`${server.url}/sent`)
        ]);
        const err = refused.status === 'rejected' ? refused.reason : undefined;
        expect(isHttpError(err) && err.message).toBe('Request could not be sent: refused by the listener');
        expect(sent.status).toBe('fulfilled');
        held[0]?.end('released');
        await holding;
        await settle();
        expect(received.sort()).toEqual(['/hold', '/sent']);
        // The refused request's connection was let go, not put back in the pool.
        expect(socketCount(agent)).toBe(2);
    });
});
