import { getEventListeners } from 'node:events';
import { Agent as HttpAgent, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { Readable } from 'node:stream';
import { createSecureContext } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { client, type PhaseTimeouts, type Timings } from '../../../src/client/index.js';
import type { HttpError } from '../../../src/errors/index.js';
import { refusedUrl, selfSignedCertificate, socketCount, startHttp, type TestServer, timerCount } from '../helpers.js';
import { startProxy, type TestProxy } from '../test-proxy.js';
import { slowLookup, startBlackHole, wait } from '../timing-fixtures.js';

// The phase under test is bounded by `limit` and made `slow`, far longer, so that only its bound can
// fire, and long enough that a test ends well before the delay would have. A step expected to succeed
// gets no tight bound: a loaded machine can stall the loop past one, and then the wrong bound fires.
// The phases not under test are bounded by `generous`; a bound shared by steps that must succeed and
// one that must run out (a response bound over a redirect, a deadline) is `roomy`: long beside a
// stall, yet short of `slow`, and a timer due before the server's `slow` one always fires first.
const limit = 150;
const slow = 1500;
const roomy = 1000;
const generous = 5000;
const everyPhase = (bound: number): PhaseTimeouts => ({
    lookup: bound,
    connect: bound,
    secureConnect: bound,
    send: bound,
    response: bound
});
/** Every phase bounded: `phase`, the one under test, by `limit`; the others generously. */
const only = (phase: keyof PhaseTimeouts): PhaseTimeouts => ({ ...everyPhase(generous), [phase]: limit });
const certificate = selfSignedCertificate();

let hits = new Map<string, number>();
// The server's reads held back for `slow` (/slow-reader), each with the resumption that ends it early:
// a test lets the reads go on once its client has given up, so the server sees that connection close
// at once instead of `slow` later.
const heldReads = new Set<() => void>();
function resumeHeldReads(): void {
    for (const resume of heldReads) {
        resume();
    }
}

function handler(req: IncomingMessage, res: ServerResponse): void {
    req.on('error', () => {});
    const url = req.url ?? '/';
    hits.set(url, (hits.get(url) ?? 0) + 1);
    if (url === '/think') {
        const timer = setTimeout(() => res.end('late'), slow);
        res.on('close', () => clearTimeout(timer));
        return;
    }

    if (url === '/think-once') {
        // Slow the first time only: a retry gets its answer.
        if (hits.get(url) === 1) {
            const timer = setTimeout(() => res.end('late'), slow);
            res.on('close', () => clearTimeout(timer));
        } else {
            res.end('in time');
        }

        return;
    }

    if (url === '/slow-reader') {
        req.pause();
        const resume = () => {
            clearTimeout(timer);
            heldReads.delete(resume);
            req.resume();
        };
        const timer = setTimeout(resume, slow);
        heldReads.add(resume);
        req.on('close', resume);
        req.on('end', () => res.end('read'));
        return;
    }

    if (url === '/stall-body') {
        res.writeHead(200, { 'content-length': 100 }).write('some');
        return;
    }

    if (url === '/late-body') {
        // The headers at once, the end of the body only after a `roomy` deadline started before them.
        res.writeHead(200).write('on ');
        const timer = setTimeout(() => res.end('time'), roomy + 100);
        res.on('close', () => clearTimeout(timer));
        return;
    }

    if (url === '/to-think') {
        res.writeHead(302, { location: '/think' }).end();
        return;
    }

    if (url === '/unavailable') {
        res.writeHead(503).end('busy');
        return;
    }

    req.resume();
    req.on('end', () => res.end('ok'));
}

let server: TestServer;
// One for the file: filling its accept queue takes a second.
let blackHole: Awaited<ReturnType<typeof startBlackHole>>;
let slowTls: { url: string; server: Server; close(): Promise<void> };
let proxy: TestProxy;
const open = new Set<import('node:net').Socket>();

async function startSlowHandshakeServer() {
    const context = createSecureContext(certificate);
    const tlsServer = createHttpsServer(
        {
            ...certificate,
            SNICallback: (_name, callback) => {
                setTimeout(() => callback(null, context), slow);
            }
        },
        handler
    );
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    const { port } = tlsServer.address() as AddressInfo;
    return {
        url: `https://localhost:${port}`,
        server: tlsServer as Server,
        close: () => {
            tlsServer.closeAllConnections();
            return new Promise<void>((resolve) => tlsServer.close(() => resolve()));
        }
    };
}

function track(listener: Server): void {
    listener.on('connection', (socket) => {
        open.add(socket);
        socket.on('close', () => open.delete(socket));
    });
}

beforeAll(async () => {
    server = await startHttp(handler);
    slowTls = await startSlowHandshakeServer();
    proxy = await startProxy();
    blackHole = await startBlackHole();
    track(server.server as Server);
    track(slowTls.server);
});

afterAll(async () => {
    await server.close();
    await slowTls.close();
    await proxy.close();
    await blackHole.close();
});

function ownAgents() {
    return {
        http: new HttpAgent({ keepAlive: true }),
        https: new HttpsAgent({ keepAlive: true, ca: certificate.cert }),
        httpsAllowUnauthorized: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
    };
}

type Agents = ReturnType<typeof ownAgents>;
let agents: Agents;
let timersBefore: number;

beforeAllTimeouts();
function beforeAllTimeouts(): void {
    // Each test gets pools of its own, and must leave them, the servers and the timers as it found them.
    afterEach(async () => {
        const pools = [agents.http, agents.https, agents.httpsAllowUnauthorized];
        // No socket still in use: a timed out hop let go of its connection (idle ones may stay pooled).
        await until(() => pools.every((pool) => busySockets(pool) === 0), 'the client sockets in use to close');
        await until(() => timerCount() <= timersBefore, 'the timers to be cleared');
        for (const pool of pools) {
            pool.destroy();
        }

        await until(() => pools.every((pool) => socketCount(pool) === 0), 'the pooled sockets to close');
        await until(() => open.size === 0 && proxy.open.size === 0, 'the server connections to close');
    });
}

function prepare(): Agents {
    hits = new Map();
    agents = ownAgents();
    timersBefore = timerCount();
    return agents;
}

function busySockets(agent: HttpAgent): number {
    let count = 0;
    for (const list of Object.values(agent.sockets)) {
        count += list?.length ?? 0;
    }

    return count;
}

async function until(condition: () => boolean, what: string): Promise<void> {
    const giveUp = Date.now() + 5000;
    while (!condition()) {
        if (Date.now() > giveUp) {
            throw new Error(`Still waiting for ${what}`);
        }

        await wait(5);
    }
}

/** The rejection of the call `start` makes, with how long it took from the call. */
async function rejection(start: () => Promise<unknown>): Promise<{ err: HttpError; elapsed: number }> {
    const started = performance.now();
    try {
        await start();
    } catch (err) {
        return { err: err as HttpError, elapsed: performance.now() - started };
    }

    throw new Error('The promise resolved');
}

function expectPhaseTimeout(err: HttpError, phase: string, bound = limit): void {
    expect(err.output.statusCode).toBe(504);
    expect(err.message).toBe(`Client request timeout: ${phase} phase over ${bound} ms`);
    expect(err.data).toMatchObject({ code: 'ETIMEDOUT', phase });
}

describe('timeouts: each phase fires in its phase, with its named 504', () => {
    it('lookup: a resolver that does not answer in time', async () => {
        const own = client.defaults({ agents: prepare() });
        const lookup = slowLookup(slow);
        const { err, elapsed } = await rejection(() =>
            own.get(`http://localhost:${server.port}/`, { lookup, timeouts: only('lookup') })
        );
        expectPhaseTimeout(err, 'lookup');
        expect(elapsed).toBeLessThan(slow);
        lookup.answerNow(); // The lookup's own late answer finds nothing left to do.
    });

    it('connect: a host that does not answer its SYN fails fast', async () => {
        const own = client.defaults({ agents: prepare() });
        const { err, elapsed } = await rejection(() =>
            own.get(`http://127.0.0.1:${blackHole.port}/`, { timeouts: only('connect') })
        );
        expectPhaseTimeout(err, 'connect');
        expect(elapsed).toBeLessThan(slow);
    });

    it('connect: after a lookup, the connect bound starts anew', async () => {
        const own = client.defaults({ agents: prepare() });
        // The lookup takes most of the connect bound, which does not count it. Its own bound is
        // generous: a stall of the loaded machine must not make it run out instead.
        const { err, elapsed } = await rejection(() =>
            own.get(`http://localhost:${blackHole.port}/`, {
                lookup: slowLookup(limit - 30),
                timeouts: { lookup: generous, connect: limit }
            })
        );
        expectPhaseTimeout(err, 'connect');
        expect(elapsed).toBeGreaterThanOrEqual(2 * limit - 30 - 5);
    });

    it('connect: a proxy tunnel is the connect phase', async () => {
        const own = client.defaults({ agents: prepare(), proxy: `http://127.0.0.1:${blackHole.port}` });
        const { err } = await rejection(() => own.get('https://origin.test/', { timeouts: only('connect') }));
        expectPhaseTimeout(err, 'connect');
    });

    it('secureConnect: a TLS handshake that does not finish in time', async () => {
        const own = client.defaults({ agents: prepare() });
        const { err, elapsed } = await rejection(() =>
            own.get(slowTls.url, { lookup: slowLookup(0), timeouts: only('secureConnect') })
        );
        expectPhaseTimeout(err, 'secureConnect');
        expect(elapsed).toBeLessThan(slow);
    });

    it('secureConnect: through a proxy tunnel', async () => {
        const own = client.defaults({ agents: prepare(), proxy: proxy.url, rejectUnauthorized: false });
        const { err } = await rejection(() => own.get(slowTls.url, { timeouts: only('secureConnect') }));
        expectPhaseTimeout(err, 'secureConnect');
    });

    it('send: a large body the server does not read', async () => {
        const own = client.defaults({ agents: prepare() });
        const payload = Buffer.alloc(48 * 1024 * 1024, 1);
        const { err, elapsed } = await rejection(() =>
            own.post(`${server.url}/slow-reader`, { payload, timeouts: only('send') })
        );
        expectPhaseTimeout(err, 'send');
        expect(elapsed).toBeLessThan(slow);
        // Paused, the server would see the connection close only when it reads again.
        resumeHeldReads();
    });

    it('response: a server that thinks too long before its headers', async () => {
        const own = client.defaults({ agents: prepare() });
        const { err, elapsed } = await rejection(() => own.get(`${server.url}/think`, { timeouts: only('response') }));
        expectPhaseTimeout(err, 'response');
        expect(elapsed).toBeLessThan(slow);
    });

    it('response: on a reused connection too', async () => {
        const own = client.defaults({ agents: prepare() });
        await own.get(server.url);
        const { err } = await rejection(() => own.get(`${server.url}/think`, { timeouts: only('response') }));
        expectPhaseTimeout(err, 'response');
    });

    it('the timed out phase is on the failed hop: its response event and its timings', async () => {
        const own = client.defaults({ agents: prepare(), events: true });
        let seen: { err: HttpError | undefined; timings: Timings } | undefined;
        own.events!.on('response', (err, { timings }) => {
            seen = { err, timings };
        });
        const { err } = await rejection(() => own.get(`${server.url}/think`, { timeouts: { response: limit } }));
        expect(seen!.err).toBe(err);
        expect(seen!.timings.error! - seen!.timings.upload!).toBeGreaterThanOrEqual(limit - 5);
    });

    it('a bound that is not reached changes nothing', async () => {
        const own = client.defaults({ agents: prepare() });
        const { payload } = await own.get(server.url, { timeouts: everyPhase(generous) });
        expect(String(payload)).toBe('ok');
    });
});

describe('timeouts: through retries and redirects', () => {
    it('a phase timeout is retried like any ETIMEDOUT', async () => {
        const own = client.defaults({ agents: prepare(), events: true });
        const errors: (HttpError | undefined)[] = [];
        own.events!.on('response', (err) => errors.push(err));
        // The retry's answer must come within the same bound: roomy, or a stall would time it out too.
        const { payload } = await own.get(`${server.url}/think-once`, {
            timeouts: { response: roomy },
            retry: { backoff: () => 0 }
        });
        expect(String(payload)).toBe('in time');
        expect(errors).toHaveLength(2);
        expect(errors[0]!.data).toMatchObject({ code: 'ETIMEDOUT', phase: 'response' });
        expect(errors[1]).toBeUndefined();
    });

    it('each retry gets its phases bounded anew, and the last failure is the phase timeout', async () => {
        const own = client.defaults({ agents: prepare() });
        const { err } = await rejection(() =>
            own.get(`${server.url}/think`, { timeouts: { response: limit }, retry: { limit: 2, backoff: () => 0 } })
        );
        expectPhaseTimeout(err, 'response');
        expect(err.data).toMatchObject({ attempts: 3 });
        // The bound of the last attempt can fire before the server has read its request (a stalled
        // loop): wait for the server to see it, then make sure no fourth attempt follows.
        await expect.poll(() => hits.get('/think')).toBe(3);
        await wait(2 * limit);
        expect(hits.get('/think')).toBe(3);
    });

    it('a redirected hop is bounded too', async () => {
        const own = client.defaults({ agents: prepare() });
        // One response bound for both hops: roomy, so that the 302 always comes within it and only the
        // redirected hop, which thinks for `slow`, runs out.
        const { err } = await rejection(() =>
            own.get(`${server.url}/to-think`, { redirects: 2, timeouts: { ...everyPhase(generous), response: roomy } })
        );
        expectPhaseTimeout(err, 'response', roomy);
        await expect.poll(() => hits.get('/think')).toBe(1);
        await wait(2 * limit);
        expect(hits.get('/think')).toBe(1);
    });
});

describe('deadline: one bound on the whole call', () => {
    it('bounds the retries: the attempt under way when it passes fails, and none follows', async () => {
        const own = client.defaults({ agents: prepare(), events: true });
        let hops = 0;
        own.events!.on('preRequest', () => hops++);
        const deadline = 400;
        const { err, elapsed } = await rejection(() =>
            own.get(`${server.url}/think`, {
                deadline,
                timeouts: { response: limit },
                retry: { limit: 10, backoff: () => 0 }
            })
        );
        expect(err.output.statusCode).toBe(504);
        expect(err.message).toBe(`Client request deadline of ${deadline} ms exceeded`);
        expect(err.data).toMatchObject({ code: 'ETIMEDOUT', phase: 'deadline' });
        expect(elapsed).toBeGreaterThanOrEqual(deadline - 5);
        expect(elapsed).toBeLessThan(deadline + 1000);
        // Two attempts ran out of their response bound, the third was under way (two on a slow machine).
        expect(hops).toBeGreaterThanOrEqual(2);
        expect(hops).toBeLessThanOrEqual(3);
        const made = hops;
        await wait(2 * limit);
        expect(hops).toBe(made);
    });

    it('is never retried, even where ETIMEDOUT is', async () => {
        const own = client.defaults({ agents: prepare() });
        // Roomy: the deadline must cover a new connection and the request, and land while the server thinks.
        const { err } = await rejection(() =>
            own.get(`${server.url}/think`, { deadline: roomy, retry: { limit: 5, backoff: () => 0 } })
        );
        expect(err.data).toMatchObject({ phase: 'deadline' });
        await expect.poll(() => hits.get('/think')).toBe(1);
        await wait(2 * limit);
        expect(hits.get('/think')).toBe(1);
    });

    it('starts no retry whose wait would outlast it: the last answer stands', async () => {
        const own = client.defaults({ agents: prepare() });
        const { err, elapsed } = await rejection(() =>
            own.get(`${server.url}/unavailable`, { deadline: 1000, retry: { backoff: () => 2000 } })
        );
        expect(err.output.statusCode).toBe(503);
        expect(err.data).toMatchObject({ attempts: 1 });
        expect(elapsed).toBeLessThan(1000);
    });

    it('starts no retry whose wait would outlast it after a network error either', async () => {
        const own = client.defaults({ agents: prepare() });
        const { err, elapsed } = await rejection(() =>
            own.get(refusedUrl, { deadline: 1000, retry: { backoff: () => 2000 } })
        );
        expect(err.output.statusCode).toBe(502);
        expect(err.data).toMatchObject({ code: 'ECONNREFUSED', attempts: 1 });
        expect(elapsed).toBeLessThan(1000);
    });

    it('bounds a redirect waiting on beforeRedirect', async () => {
        const own = client.defaults({ agents: prepare() });
        const { err } = await rejection(() =>
            own.get(`${server.url}/to-think`, { redirects: 2, deadline: limit, beforeRedirect: () => {} })
        );
        expect(err.data).toMatchObject({ phase: 'deadline' });
    });

    it("bounds a helper's read of the body", async () => {
        const own = client.defaults({ agents: prepare() });
        // The headers come at once and the body never ends: a roomy deadline always lands in the read.
        const deadline = roomy;
        const { err, elapsed } = await rejection(() => own.get(`${server.url}/stall-body`, { deadline }));
        expect(err.output.statusCode).toBe(504);
        expect(err.data).toMatchObject({ phase: 'deadline', res: expect.anything() });
        expect(elapsed).toBeGreaterThanOrEqual(deadline - 5);
        expect(elapsed).toBeLessThan(deadline + 1000);
    });

    it('request() settles with the response: the deadline ends there', async () => {
        const own = client.defaults({ agents: prepare() });
        // The headers come at once, well within a roomy deadline; the body ends only after it has passed,
        // so the read is under way when the deadline would fire.
        const started = performance.now();
        const res = await own.request('GET', `${server.url}/late-body`, { deadline: roomy });
        expect(String(await own.read(res))).toBe('on time');
        expect(performance.now() - started).toBeGreaterThan(roomy);
    });
});

describe('timeouts and deadline: options', () => {
    it('are checked like every option, with errors naming them', async () => {
        const cases: [Record<string, unknown>, RegExp][] = [
            [{ timeouts: 5 }, /^Option timeouts must be an object of phase limits/],
            [{ timeouts: { connect: -1 } }, /^Option timeouts\.connect must be a non-negative integer/],
            [{ timeouts: { connect: 1.5 } }, /^Option timeouts\.connect must be a non-negative integer/],
            [{ timeouts: { dns: 100 } }, /^Option timeouts\.dns is not a phase: use lookup, connect/],
            [{ deadline: 'soon' }, /^Option deadline must be a non-negative integer/]
        ];
        for (const [options, message] of cases) {
            await expect(client.get(server.url, options)).rejects.toThrow(message);
            expect(() => client.defaults(options)).toThrow(message);
        }

        // null and undefined mean "not set", for the option and for a phase.
        const { payload } = await client.defaults({ agents: prepare() }).get(server.url, {
            timeouts: { connect: null, response: undefined },
            deadline: null
        } as Record<string, unknown>);
        expect(String(payload)).toBe('ok');
    });

    it("are merged phase by phase over the client's defaults", async () => {
        const own = client.defaults({ agents: prepare(), timeouts: { lookup: limit, response: 60000 } });
        const lookup = slowLookup(slow);
        const { err } = await rejection(() =>
            own.get(`http://localhost:${server.port}/`, { lookup, timeouts: { connect: 5000 } })
        );
        expectPhaseTimeout(err, 'lookup');
        const derived = own.defaults({ timeouts: { response: limit } });
        const { err: late } = await rejection(() => derived.get(`${server.url}/think`));
        expectPhaseTimeout(late, 'response');
        lookup.answerNow();
    });
});

describe('timeouts and deadline: nothing left behind', () => {
    for (const [title, bound] of [
        ['a phase timeout', { timeouts: { response: limit } }],
        ['the deadline', { deadline: limit }]
    ] as const) {
        it(`${title} leaves no listener on the caller's signal or stream payload`, async () => {
            const own = client.defaults({ agents: prepare() });
            const controller = new AbortController();
            const payload = Readable.from([Buffer.from('a stream payload')]);
            const { err } = await rejection(() =>
                own.post(`${server.url}/think`, { ...bound, signal: controller.signal, payload })
            );
            expect(err.output.statusCode).toBe(504);
            expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
            for (const name of ['data', 'end', 'error', 'close', 'readable']) {
                expect(payload.listenerCount(name)).toBe(0);
            }
        });
    }
});
