import { getEventListeners } from 'node:events';
import { Agent as HttpAgent, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Server } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../../../src/client/index.js';
import type { HttpError } from '../../../../src/errors/index.js';
import { refusedUrl, socketCount, startHttp, startHttps, type TestServer, timerCount } from '../../helpers.js';
import { startProxy, type TestProxy } from '../../test-proxy.js';

let server: TestServer;
let tlsServer: TestServer;
let proxy: TestProxy;
// The connections each server holds open: a request that ended must leave none, at either end.
const open = new Map<Server, number>();

function countConnections(target: TestServer): void {
    const listener = target.server as Server;
    open.set(listener, 0);
    listener.on('connection', (socket) => {
        open.set(listener, open.get(listener)! + 1);
        socket.on('close', () => open.set(listener, open.get(listener)! - 1));
    });
}

function openConnections(): number {
    let total = proxy.open.size;
    for (const count of open.values()) {
        total += count;
    }

    return total;
}

// /hang never answers; /cut closes the connection without answering; /partial sends half a body and
// stalls; /partial-cut sends half a body and closes; /redirect answers 302 to /hang; anything else
// answers 'done' after reading the request body.
function handler(req: IncomingMessage, res: ServerResponse): void {
    req.on('error', () => {});
    switch (req.url) {
        case '/hang':
            return;
        case '/cut':
            req.socket.destroy();
            return;
        case '/partial':
            res.writeHead(200, { 'content-length': 100 }).write('half');
            return;
        case '/partial-cut':
            res.writeHead(200, { 'content-length': 100 }).write('half', () => req.socket.destroy());
            return;
        case '/redirect':
            res.writeHead(302, { location: '/hang' }).end();
            return;
        default:
            req.resume();
            req.on('end', () => res.end('done'));
    }
}

beforeAll(async () => {
    server = await startHttp(handler);
    tlsServer = await startHttps(handler);
    countConnections(server);
    countConnections(tlsServer);
    proxy = await startProxy();
});

// A connection one test left open must not fail the tests after it.
afterEach(async () => {
    server.server.closeAllConnections();
    tlsServer.server.closeAllConnections();
    for (const socket of proxy.open) {
        socket.destroy();
    }
    await until(() => openConnections() === 0, 'the connections left by the test to close');
});

afterAll(async () => {
    await server.close();
    await tlsServer.close();
    await proxy.close();
});

/** A client with pools of its own, through the test proxy, trusting the test certificate. */
function proxiedClient() {
    const agents = {
        http: new HttpAgent({ keepAlive: true }),
        https: new HttpsAgent({ keepAlive: true }),
        httpsAllowUnauthorized: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
    };
    return client.defaults({ agents, proxy: proxy.url, rejectUnauthorized: false });
}

/** Resolves once `condition` holds (checked on each turn of the event loop), or fails after a generous wait. */
async function until(condition: () => boolean, what: string): Promise<void> {
    const giveUp = Date.now() + 5000;
    while (!condition()) {
        if (Date.now() > giveUp) {
            throw new Error(`Still waiting for ${what}`);
        }

        await new Promise((resolve) => setTimeout(resolve, 5));
    }
}

/** The rejection of `promise`, or a test failure naming the promise as pending after a generous wait. */
async function rejection(promise: Promise<unknown>): Promise<HttpError> {
    let guard: NodeJS.Timeout | undefined;
    const pending = new Promise<never>((_, reject) => {
        guard = setTimeout(() => reject(new Error('The promise is still pending')), 5000);
    });
    try {
        await Promise.race([promise, pending]);
    } catch (err) {
        return err as HttpError;
    } finally {
        clearTimeout(guard);
    }

    throw new Error('The promise resolved');
}

interface Ending {
    title: string;
    status: number;
    message: RegExp;
    // Over TLS: `agent` is then a keep-alive https.Agent that trusts the test certificate.
    tls?: true;
    run(agent: HttpAgent, owned: { signal?: AbortSignal; payload?: Readable }): Promise<unknown>;
}

const requestEndings: Ending[] = [
    {
        title: 'req.abort() before the response',
        status: 500,
        message: /^Client request aborted$/,
        run: (agent) => {
            const promise = client.request('GET', `${server.url}/hang`, { agent });
            promise.req!.abort();
            return promise;
        }
    },
    {
        title: 'req.abort() once the request is on the wire',
        status: 500,
        message: /^Client request aborted$/,
        run: (agent) => {
            const promise = client.request('GET', `${server.url}/hang`, { agent });
            promise.req!.once('finish', () => promise.req!.abort());
            return promise;
        }
    },
    {
        title: 'req.destroy() without an error',
        status: 502,
        message: /^Client request error/,
        run: (agent) => {
            const promise = client.request('GET', `${server.url}/hang`, { agent });
            promise.req!.destroy();
            return promise;
        }
    },
    {
        title: 'req.destroy(err)',
        status: 502,
        message: /^Client request error: gone$/,
        run: (agent) => {
            const promise = client.request('GET', `${server.url}/hang`, { agent });
            promise.req!.destroy(new Error('gone'));
            return promise;
        }
    },
    {
        title: 'req.abort() before the response, over TLS',
        status: 500,
        message: /^Client request aborted$/,
        tls: true,
        run: (agent) => {
            const promise = client.request('GET', `${tlsServer.url}/hang`, { agent });
            promise.req!.abort();
            return promise;
        }
    },
    {
        title: 'req.destroy(err), over TLS',
        status: 502,
        message: /^Client request error: gone$/,
        tls: true,
        run: (agent) => {
            const promise = client.request('GET', `${tlsServer.url}/hang`, { agent });
            promise.req!.destroy(new Error('gone'));
            return promise;
        }
    },
    {
        title: 'req.abort() before the response, through a proxy (absolute form)',
        status: 500,
        message: /^Client request aborted$/,
        run: () => {
            const promise = proxiedClient().request('GET', `${server.url}/hang`);
            promise.req!.abort();
            return promise;
        }
    },
    {
        title: 'req.destroy(err), through a proxy tunnel (CONNECT, then TLS)',
        status: 502,
        message: /^Client request error: proxy http:\/\/127\.0\.0\.1:\d+ could not be reached: gone$/,
        run: () => {
            const promise = proxiedClient().request('GET', `${tlsServer.url}/hang`);
            promise.req!.destroy(new Error('gone'));
            return promise;
        }
    },
    {
        title: 'the signal, as the request is made',
        status: 500,
        message: /^Client request aborted$/,
        run: (agent, owned) => {
            const controller = new AbortController();
            owned.signal = controller.signal;
            const promise = client.request('GET', `${server.url}/hang`, { agent, signal: controller.signal });
            controller.abort();
            return promise;
        }
    },
    {
        title: 'a request event listener throwing',
        status: 500,
        message: /^A request event listener threw: listener bug$/,
        run: (agent) => {
            const observed = client.defaults({ events: true, agent });
            observed.events!.on('request', () => {
                throw new Error('listener bug');
            });
            return observed.request('GET', `${server.url}/hang`);
        }
    },
    {
        title: 'the redirected callback throwing',
        status: 500,
        message: /^The redirected callback threw$/,
        run: (agent) =>
            client.request('GET', `${server.url}/redirect`, {
                agent,
                redirects: 1,
                redirected: () => {
                    throw new Error('callback bug');
                }
            })
    },
    {
        title: 'the stream payload failing before the connection',
        status: 502,
        message: /^Client request error: disk gone$/,
        run: (agent, owned) => {
            owned.payload = new Readable({ read() {} });
            const promise = client.request('POST', `${server.url}/hang`, { agent, payload: owned.payload });
            owned.payload.destroy(new Error('disk gone'));
            return promise;
        }
    },
    {
        title: 'the server closing the socket before a response',
        status: 502,
        message: /^Client request error/,
        run: (agent) => client.request('GET', `${server.url}/cut`, { agent })
    },
    {
        title: 'a refused connection',
        status: 502,
        message: /ECONNREFUSED/,
        // Nothing listens on port 1; a port freed by a closed server could be taken again by another test.
        run: (agent) => client.request('GET', refusedUrl, { agent })
    },
    {
        title: 'the payload stream failing half way',
        status: 502,
        message: /^Client request error: disk gone$/,
        run: (agent, owned) => {
            let reads = 0;
            owned.payload = new Readable({
                read() {
                    reads++;
                    if (reads === 2) {
                        this.destroy(new Error('disk gone'));
                    } else {
                        this.push('chunk');
                    }
                }
            });
            return client.request('POST', `${server.url}/hang`, { agent, payload: owned.payload, redirects: 1 });
        }
    },
    {
        title: 'the request timeout',
        status: 504,
        message: /^Client request timeout$/,
        run: (agent) => client.request('GET', `${server.url}/hang`, { agent, timeout: 30 })
    },
    {
        title: 'the request timeout while beforeRedirect never decides',
        status: 504,
        message: /^Client request timeout$/,
        run: (agent) =>
            client.request('GET', `${server.url}/redirect`, {
                agent,
                timeout: 50,
                redirects: 1,
                beforeRedirect: () => {}
            })
    },
    {
        title: 'the signal, while waiting for the response',
        status: 500,
        message: /^Client request aborted$/,
        run: (agent, owned) => {
            const controller = new AbortController();
            owned.signal = controller.signal;
            const promise = client.request('GET', `${server.url}/hang`, { agent, signal: controller.signal });
            setImmediate(() => controller.abort());
            return promise;
        }
    },
    {
        title: 'the signal, while beforeRedirect never decides',
        status: 500,
        message: /^Client request aborted$/,
        run: (agent, owned) => {
            const controller = new AbortController();
            owned.signal = controller.signal;
            return client.request('GET', `${server.url}/redirect`, {
                agent,
                redirects: 1,
                signal: controller.signal,
                beforeRedirect: () => controller.abort()
            });
        }
    }
];

const readEndings: Ending[] = [
    {
        title: 'res.destroy() during the read',
        status: 500,
        message: /^Payload stream closed prematurely$/,
        run: async (agent) => {
            const res = await client.request('GET', `${server.url}/partial`, { agent });
            const reading = client.read(res);
            res.destroy();
            return reading;
        }
    },
    {
        title: 'res.destroy(err) during the read',
        status: 500,
        message: /^Payload stream closed prematurely$/,
        run: async (agent) => {
            const res = await client.request('GET', `${server.url}/partial`, { agent });
            const reading = client.read(res);
            res.destroy(new Error('cut by the caller'));
            return reading;
        }
    },
    {
        title: 'the server closing the socket half way through the body',
        status: 500,
        message: /^Payload stream closed prematurely$/,
        run: (agent) => client.get(`${server.url}/partial-cut`, { agent })
    },
    {
        title: 'the read timeout',
        status: 408,
        message: /^Client read timeout$/,
        // The helper's timeout bounds the wait for the headers too: roomy, so that a loaded machine that
        // stalls its loop still gets them in time and the read is what runs out.
        run: (agent) => client.get(`${server.url}/partial`, { agent, timeout: 1000 })
    },
    {
        title: 'the signal, during the read',
        status: 500,
        message: /^Client read aborted$/,
        run: async (agent, owned) => {
            const controller = new AbortController();
            owned.signal = controller.signal;
            const res = await client.request('GET', `${server.url}/partial`, { agent });
            const reading = client.read(res, { signal: controller.signal });
            setImmediate(() => controller.abort());
            return reading;
        }
    },
    {
        title: 'maxBytes exceeded',
        status: 413,
        message: /^Maximum payload size reached/,
        run: (agent) => client.get(`${server.url}/partial`, { agent, maxBytes: 10 })
    }
];

describe('No promise can stay pending forever: every ending settles and leaves nothing behind', () => {
    for (const [area, endings] of [
        ['request', requestEndings],
        ['read', readEndings]
    ] as const) {
        for (const ending of endings) {
            it(`${area}: ${ending.title} rejects with ${ending.status}, no socket, timer or listener left`, async () => {
                const agent = ending.tls
                    ? new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
                    : new HttpAgent({ keepAlive: true });
                const timers = timerCount();
                const owned: { signal?: AbortSignal; payload?: Readable } = {};
                const err = await rejection(ending.run(agent, owned));
                expect(err.output.statusCode).toBe(ending.status);
                expect(err.message).toMatch(ending.message);
                await until(() => socketCount(agent) === 0, 'the sockets to close');
                await until(() => openConnections() === 0, 'the server to see the connections closed');
                await until(() => timerCount() <= timers, 'the timers to be cleared');
                if (owned.signal !== undefined) {
                    expect(getEventListeners(owned.signal, 'abort')).toHaveLength(0);
                }

                if (owned.payload !== undefined) {
                    for (const name of ['data', 'end', 'error', 'readable']) {
                        expect(owned.payload.listenerCount(name)).toBe(0);
                    }
                }

                agent.destroy();
            });
        }
    }
});

describe('Early endings close only the sockets their request never used', () => {
    it('a completed request leaves its connection pooled, and the next request reuses it', async () => {
        const agent = new HttpAgent({ keepAlive: true });
        let connections = 0;
        const count = () => connections++;
        server.server.on('connection', count);
        try {
            await client.get(`${server.url}/done`, { agent });
            await until(() => Object.values(agent.freeSockets).flat().length === 1, 'the socket to be pooled');
            await client.get(`${server.url}/done`, { agent });
            expect(connections).toBe(1);
        } finally {
            server.server.removeListener('connection', count);
            agent.destroy();
        }
    });
});
