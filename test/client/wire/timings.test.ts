import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { getEventListeners } from 'node:events';
import { Agent as HttpAgent, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { createSecureContext } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
    CLIENT_CHANNELS,
    client,
    type ResponseMessage,
    type TimedResponse,
    type Timings
} from '../../../src/client/index.js';
import { monotonicAt, timestamp } from '../../../src/client/wire/timings-clock.js';
import type { HttpError } from '../../../src/errors/index.js';
import { refusedUrl, selfSignedCertificate, startHttp, startUnix, type TestServer } from '../helpers.js';
import { startProxy, type TestProxy } from '../test-proxy.js';
import { immediateLookup, slowLookup, wait } from '../timing-fixtures.js';

// The delays injected, and how far a measure may be from them on a loaded 2-core machine: shorter
// only by the lag of an event that marks the phase's start (Node announces a socket or the end of an
// upload on a later tick than it happened), at most a generous second and a half longer.
const delay = 250;
const early = 60;
const late = 1500;

// The phases measured against the delays injected (the first describe) are measured one test at a time:
// a test running beside one would hold back the event that starts a phase and shorten the measure.
// The other describes run their tests at once (describe.concurrent): each has its own agents, and the
// server's delays are most of their time. The 48 MiB upload among them runs alone (it.sequential).
function expectAbout(measured: number | undefined, injected: number): void {
    expect(measured).toBeDefined();
    expect(measured!).toBeGreaterThanOrEqual(injected - early);
    expect(measured!).toBeLessThan(injected + late);
}

/** The names of the phases that happened (defined), in order. */
function phasesOf(timings: Timings): string[] {
    return Object.entries(timings.phases)
        .filter(([, value]) => value !== undefined)
        .map(([name]) => name);
}

let flakyCalls = 0;
function handler(req: IncomingMessage, res: ServerResponse): void {
    req.on('error', () => {});
    const url = req.url ?? '/';
    if (url === '/slow') {
        // Think time before the headers, then a pause between two body chunks.
        setTimeout(() => {
            res.writeHead(200, { 'content-type': 'text/plain' });
            res.write('first ');
            setTimeout(() => res.end('second'), delay);
        }, delay);
        return;
    }

    if (url === '/slow-reader') {
        // Reads nothing for a while: a large body waits in the socket buffers, then behind them.
        req.pause();
        setTimeout(() => {
            req.resume();
            req.on('end', () => res.end('read'));
        }, delay);
        return;
    }

    if (url.startsWith('/redirect/')) {
        const left = Number(url.slice('/redirect/'.length));
        res.writeHead(302, { location: left > 1 ? `/redirect/${left - 1}` : '/' }).end('moved');
        return;
    }

    if (url === '/early') {
        // Answers before reading the request's body (Node's server then reads it away).
        res.end('early');
        return;
    }

    if (url === '/gzip') {
        // A compressed body in two parts, the second after a pause.
        const body = gzipSync('compressed '.repeat(1000));
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
        res.write(body.subarray(0, 100));
        setTimeout(() => res.end(body.subarray(100)), delay);
        return;
    }

    if (url === '/cut') {
        // Promises more than it sends, then drops the connection.
        res.writeHead(200, { 'content-length': '1000' });
        res.write('part');
        setTimeout(() => res.socket?.destroy(), delay / 5);
        return;
    }

    if (url === '/flaky') {
        flakyCalls++;
        res.writeHead(flakyCalls % 2 === 1 ? 503 : 200).end('flaky');
        return;
    }

    req.resume();
    req.on('end', () => res.end('ok'));
}

let server: TestServer;
let slowTls: { url: string; close(): Promise<void> };
let proxy: TestProxy;
const certificate = selfSignedCertificate();

/** An https server whose handshake waits `delay` ms (its SNI callback takes that long to answer). */
async function startSlowHandshakeServer(): Promise<{ url: string; close(): Promise<void> }> {
    const context = createSecureContext(certificate);
    const tlsServer = createHttpsServer(
        {
            ...certificate,
            SNICallback: (_name, callback) => {
                setTimeout(() => callback(null, context), delay);
            }
        },
        handler
    );
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    const { port } = tlsServer.address() as AddressInfo;
    return {
        // A host name, so that TLS sends the server name the callback waits on.
        url: `https://localhost:${port}`,
        close: () => {
            tlsServer.closeAllConnections();
            return new Promise((resolve) => tlsServer.close(() => resolve()));
        }
    };
}

function ownAgents() {
    return {
        http: new HttpAgent({ keepAlive: true }),
        https: new HttpsAgent({ keepAlive: true, ca: certificate.cert }),
        httpsAllowUnauthorized: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
    };
}

function destroyAgents(agents: ReturnType<typeof ownAgents>): void {
    agents.http.destroy();
    agents.https.destroy();
    agents.httpsAllowUnauthorized.destroy();
}

beforeAll(async () => {
    server = await startHttp(handler);
    slowTls = await startSlowHandshakeServer();
    proxy = await startProxy();
});

afterAll(async () => {
    await server.close();
    await slowTls.close();
    await proxy.close();
});

describe('Timings: each phase measures the delay injected into it', () => {
    it('dns: a lookup that waits; tcp follows it; plain http has no tls', async () => {
        const agents = ownAgents();
        const lookup = slowLookup(delay);
        const local = `http://localhost:${server.port}/`;
        const { res } = await client.defaults({ agents }).get(local, { lookup });
        const timings = res.timings;
        expect(lookup.calls).toBe(1);
        expectAbout(timings.phases.dns, delay);
        // The lookup began after the hop did: whatever the 'socket' event's lag, no time is lost.
        expect(timings.phases.wait! + timings.phases.dns!).toBeGreaterThanOrEqual(delay - 1);
        expect(timings.lookup! - timings.socket!).toBe(timings.phases.dns);
        expect(timings.phases.tcp).toBeGreaterThanOrEqual(0);
        expect(timings.secureConnect).toBeUndefined();
        expect(phasesOf(timings)).toEqual(['wait', 'dns', 'tcp', 'request', 'firstByte', 'download', 'total']);
        destroyAgents(agents);
    });

    // Such an answer comes inside net.connect(), before the request hears of its socket: it is handed on at
    // the next turn, so the hop sees it (without that, no lookup moment, no dns phase, and the lookup bound
    // left running through the connect).
    it('dns: a lookup that answers before it returns (a resolver answering from its cache) is timed too', async () => {
        const agents = ownAgents();
        const lookup = immediateLookup();
        const { res } = await client.defaults({ agents }).get(`http://localhost:${server.port}/`, { lookup });
        const timings = res.timings;
        expect(lookup.calls).toBe(1);
        expect(timings.lookup).toBeGreaterThanOrEqual(timings.socket!);
        expect(timings.connect).toBeGreaterThanOrEqual(timings.lookup!);
        expect(phasesOf(timings)).toEqual(['wait', 'dns', 'tcp', 'request', 'firstByte', 'download', 'total']);
        destroyAgents(agents);
    });

    it('tls: a handshake that waits', async () => {
        const agents = ownAgents();
        const { res } = await client.defaults({ agents }).get(slowTls.url, { lookup: slowLookup(0) });
        const timings = res.timings;
        expectAbout(timings.phases.tls, delay);
        expect(timings.secureConnect! - timings.connect!).toBe(timings.phases.tls);
        expect(phasesOf(timings)).toEqual(['wait', 'dns', 'tcp', 'tls', 'request', 'firstByte', 'download', 'total']);
        destroyAgents(agents);
    });

    it('firstByte and download: a server that waits before its headers and between two chunks', async () => {
        const agents = ownAgents();
        const { res, payload } = await client.defaults({ agents }).get(`${server.url}/slow`);
        expect(String(payload)).toBe('first second');
        const { phases } = res.timings;
        expectAbout(phases.firstByte, delay);
        expectAbout(phases.download, delay);
        expect(phases.total).toBeGreaterThanOrEqual(2 * delay - early);
        destroyAgents(agents);
    });

    it('request: a large body to a server that reads nothing for a while', async () => {
        const agents = ownAgents();
        // More than the loopback socket buffers hold, so the last bytes wait for the reader.
        const payload = Buffer.alloc(48 * 1024 * 1024, 1);
        const { res } = await client.defaults({ agents }).post(`${server.url}/slow-reader`, { payload });
        const { phases } = res.timings;
        expectAbout(phases.request, delay);
        // The server answers at once when it has read the body.
        expect(phases.firstByte!).toBeLessThan(phases.request!);
        destroyAgents(agents);
    });

    it("wait: a request queued for the pool's only socket, busy with a slow response", async () => {
        const agents = ownAgents();
        agents.http.maxSockets = 1;
        const own = client.defaults({ agents });
        const slowOne = own.get(`${server.url}/slow`);
        const queued = own.get(server.url);
        const [, { res }] = await Promise.all([slowOne, queued]);
        // The slow response holds the socket for its think time and its pause between chunks.
        expectAbout(res.timings.phases.wait, 2 * delay);
        expect(phasesOf(res.timings)).toEqual(['wait', 'request', 'firstByte', 'download', 'total']);
        destroyAgents(agents);
    });

    it('total: from the start of the hop to the end of its body', async () => {
        const before = Date.now();
        const agents = ownAgents();
        const { res } = await client.defaults({ agents }).get(`${server.url}/slow`);
        const after = Date.now();
        const timings = res.timings;
        // Epoch milliseconds, comparable with Date.now() (a millisecond's rounding either side).
        expect(timings.start).toBeGreaterThanOrEqual(before - 1);
        expect(timings.end!).toBeLessThanOrEqual(after + 1);
        expect(timings.phases.total).toBe(timings.end! - timings.start);
        const moments = [
            timings.start,
            timings.socket,
            timings.connect,
            timings.upload,
            timings.response,
            timings.end
        ] as number[];
        expect([...moments].sort((a, b) => a - b)).toEqual(moments);
        expect(moments.some((moment) => !Number.isInteger(moment))).toBe(true);
        destroyAgents(agents);
    });
});

describe.concurrent('Timings: a hop has the phases it had, and only those', () => {
    it('a reused connection has no dns, tcp or tls', async () => {
        const agents = ownAgents();
        const own = client.defaults({ agents });
        const first = await own.get(slowTls.url, { lookup: slowLookup(0) });
        const second = await own.get(slowTls.url, { lookup: slowLookup(0) });
        expect((second.res as unknown as { req: { reusedSocket: boolean } }).req.reusedSocket).toBe(true);
        expect(first.res.timings.phases.tls).toBeDefined();
        const timings = second.res.timings;
        expect(timings.lookup).toBeUndefined();
        expect(timings.connect).toBeUndefined();
        expect(timings.secureConnect).toBeUndefined();
        expect(phasesOf(timings)).toEqual(['wait', 'request', 'firstByte', 'download', 'total']);
        expect(timings.phases.request).toBe(timings.upload! - timings.socket!);
        destroyAgents(agents);
    });

    it('an IP literal has no dns', async () => {
        const agents = ownAgents();
        const { res } = await client.defaults({ agents }).get(server.url);
        expect(res.timings.lookup).toBeUndefined();
        expect(phasesOf(res.timings)).toEqual(['wait', 'tcp', 'request', 'firstByte', 'download', 'total']);
        expect(res.timings.phases.tcp).toBe(res.timings.connect! - res.timings.socket!);
        destroyAgents(agents);
    });

    it('a UNIX socket has no dns and no tls', async () => {
        const unix = await startUnix(handler);
        try {
            const { res } = await client.get('/', { socketPath: unix.socketPath, agent: false });
            expect(phasesOf(res.timings)).toEqual(['wait', 'tcp', 'request', 'firstByte', 'download', 'total']);
        } finally {
            await unix.close();
        }
    });

    it('a proxy tunnel is the connect phase, then TLS through it; the reused tunnel has neither', async () => {
        const agents = ownAgents();
        const own = client.defaults({ agents, proxy: proxy.url, rejectUnauthorized: false });
        const first = await own.get(slowTls.url);
        const timings = first.res.timings;
        expect(timings.lookup).toBeUndefined();
        expect(timings.connect).toBeGreaterThan(timings.socket!);
        // The proxy's tunnel is up before the origin's handshake, which waits.
        expectAbout(timings.phases.tls, delay);
        expect(phasesOf(timings)).toEqual(['wait', 'tcp', 'tls', 'request', 'firstByte', 'download', 'total']);
        const second = await own.get(slowTls.url);
        expect((second.res as unknown as { req: { reusedSocket: boolean } }).req.reusedSocket).toBe(true);
        expect(phasesOf(second.res.timings)).toEqual(['wait', 'request', 'firstByte', 'download', 'total']);
        destroyAgents(agents);
    });

    it('a redirect chain: each hop its own timings; the 3xx bodies left unread end as aborted', async () => {
        const agents = ownAgents();
        const own = client.defaults({ agents, events: true });
        const seen: Timings[] = [];
        own.events!.on('response', (_err, details) => {
            seen.push(details.timings);
            expect(details.res!.timings).toBe(details.timings);
        });
        const { res } = await own.get(`${server.url}/redirect/2`, { redirects: 3 });
        expect(seen).toHaveLength(3);
        expect(new Set(seen).size).toBe(3);
        expect(seen[2]).toBe(res.timings);
        for (const hop of seen.slice(0, 2)) {
            expect(hop.response).toBeDefined();
            expect(hop.end).toBeUndefined();
            expect(hop.abort).toBeDefined();
            expect(hop.phases.total).toBe(hop.abort! - hop.start);
        }

        // Each hop starts after the one before it responded.
        expect(seen[1]!.start).toBeGreaterThanOrEqual(seen[0]!.response!);
        expect(seen[2]!.start).toBeGreaterThanOrEqual(seen[1]!.response!);
        expect(res.timings.end).toBeDefined();
        destroyAgents(agents);
    });

    it('a retried hop has its own timings', async () => {
        const agents = ownAgents();
        const own = client.defaults({ agents, events: true });
        const seen: Timings[] = [];
        own.events!.on('response', (_err, details) => seen.push(details.timings));
        flakyCalls = 0;
        const { res } = await own.get(`${server.url}/flaky`, { retry: { backoff: () => 0 } });
        expect(res.statusCode).toBe(200);
        expect(seen).toHaveLength(2);
        expect(seen[0]).not.toBe(seen[1]);
        expect(seen[1]).toBe(res.timings);
        destroyAgents(agents);
    });
});

describe.concurrent('Timings: where they are found', () => {
    it('a response listener sees no end or download yet; a listener of the body end sees them set', async () => {
        const agents = ownAgents();
        const own = client.defaults({ agents, events: true });
        let atResponse: { end: number | undefined; download: number | undefined } | undefined;
        let atBodyEnd: { end: number | undefined; download: number | undefined } | undefined;
        own.events!.on('response', (_err, { timings, res }) => {
            atResponse = { end: timings.end, download: timings.phases.download };
            res!.on('end', () => {
                atBodyEnd = { end: timings.end, download: timings.phases.download };
            });
        });
        await own.get(`${server.url}/slow`);
        expect(atResponse).toEqual({ end: undefined, download: undefined });
        expect(atBodyEnd!.end).toBeDefined();
        expectAbout(atBodyEnd!.download, delay);
        destroyAgents(agents);
    });

    it('request(): the body read by the caller sets end and download', async () => {
        const agents = ownAgents();
        const res = await client.defaults({ agents }).request('GET', `${server.url}/slow`);
        expect(res.timings.response).toBeDefined();
        expect(res.timings.end).toBeUndefined();
        expect(res.timings.phases.total).toBeUndefined();
        await client.read(res);
        expectAbout(res.timings.phases.download, delay);
        expect(res.timings.phases.total).toBe(res.timings.end! - res.timings.start);
        destroyAgents(agents);
    });

    // With no one listening, a helper's own read notes the end of the body instead of listeners on the
    // response; with a listener, the hop listens too: both ways give the same record.
    describe.each([
        { name: 'no events', events: false, listening: false },
        { name: 'events, no listener', events: true, listening: false },
        { name: 'a response listener', events: true, listening: true }
    ])("a helper's read ($name)", ({ events, listening }) => {
        const helperClient = (agents: ReturnType<typeof ownAgents>) => {
            const own = client.defaults({ agents, events });
            if (listening) {
                own.events!.on('response', () => {});
            }

            return own;
        };

        it('ends with the last byte of the body as it came, before any decoding', async () => {
            const agents = ownAgents();
            const { res, payload } = await helperClient(agents).get(`${server.url}/gzip`, {
                gunzip: true
            });
            expect(String(payload)).toBe('compressed '.repeat(1000));
            expectAbout(res.timings.phases.download, delay);
            expect(res.timings.phases.total).toBe(res.timings.end! - res.timings.start);
            expect(res.timings.error ?? res.timings.abort).toBeUndefined();
            destroyAgents(agents);
        });

        // The read fails as the helper rejects: its response's record already says how it stopped.
        it.each([
            { name: 'a body cut by the server', path: '/cut', options: {}, statusCode: 500, how: 'error' },
            {
                name: 'a read given up (maxBytes)',
                path: '/slow',
                options: { maxBytes: 3 },
                statusCode: 413,
                how: 'abort'
            }
        ] as const)('$name: $how, no end', async ({ path, options, statusCode, how }) => {
            const agents = ownAgents();
            const err = (await helperClient(agents)
                .get(`${server.url}${path}`, options)
                .catch((e: unknown) => e)) as HttpError<{ res: TimedResponse }>;
            expect(err.output.statusCode).toBe(statusCode);
            const { timings } = err.data!.res;
            expect(timings.end).toBeUndefined();
            expect(timings[how]).toBeGreaterThanOrEqual(timings.response!);
            expect(timings.phases.total).toBe(timings[how]! - timings.start);
            destroyAgents(agents);
        });
    });

    it('the tracewire:client:response channel message carries them', async () => {
        const agents = ownAgents();
        const messages: ResponseMessage[] = [];
        const listener = (message: unknown) => messages.push(message as ResponseMessage);
        subscribe(CLIENT_CHANNELS.response, listener);
        try {
            const { res } = await client.defaults({ agents }).get(server.url);
            const mine = messages.find((message) => message.details.res === res);
            expect(mine!.details.timings).toBe(res.timings);
        } finally {
            unsubscribe(CLIENT_CHANNELS.response, listener);
            destroyAgents(agents);
        }
    });

    it('a failed hop: error and total, no response', async () => {
        const own = client.defaults({ events: true });
        let seen: Timings | undefined;
        own.events!.on('response', (_err, details) => {
            seen = details.timings;
        });
        const err = (await own.get(refusedUrl, { agent: false }).catch((e: unknown) => e)) as HttpError;
        expect(err.data).toMatchObject({ code: 'ECONNREFUSED' });
        expect(seen!.error).toBeDefined();
        expect(seen!.abort).toBeUndefined();
        expect(seen!.response).toBeUndefined();
        expect(seen!.phases.total).toBe(seen!.error! - seen!.start);
        expect(seen!.phases.firstByte).toBeUndefined();
    });

    it('a failed lookup: no lookup moment, the error', async () => {
        const own = client.defaults({ events: true });
        let seen: Timings | undefined;
        own.events!.on('response', (_err, details) => {
            seen = details.timings;
        });
        const lookup = ((_host: string, _options: unknown, callback: (err: Error) => void) => {
            setTimeout(() => callback(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' })), 10);
        }) as unknown as LookupFunction;
        const err = (await own
            .get('http://nowhere.test/', { agent: false, lookup })
            .catch((e: unknown) => e)) as HttpError;
        expect(err.data).toMatchObject({ code: 'ENOTFOUND' });
        expect(seen!.lookup).toBeUndefined();
        expect(seen!.connect).toBeUndefined();
        expect(phasesOf(seen!)).toEqual(['wait', 'total']);
    });

    it.sequential('a server that answers before the request is sent: upload after response, no firstByte', async () => {
        const agents = ownAgents();
        const own = client.defaults({ agents });
        const promise = own.request('POST', `${server.url}/early`, { payload: Buffer.alloc(48 * 1024 * 1024, 1) });
        const req = promise.req!;
        const res = await promise;
        await own.read(res);
        if (!req.writableFinished) {
            await new Promise((resolve) => req.once('finish', resolve));
        }

        const { timings } = res;
        expect(timings.upload).toBeGreaterThan(timings.response!);
        expect(timings.phases.firstByte).toBeUndefined();
        expect(timings.phases.request).toBe(timings.upload! - timings.connect!);
        destroyAgents(agents);
    });

    it('an aborted hop: abort and total', async () => {
        const agents = ownAgents();
        const own = client.defaults({ agents, events: true });
        let seen: Timings | undefined;
        own.events!.on('response', (_err, details) => {
            seen = details.timings;
        });
        const controller = new AbortController();
        const promise = own.get(`${server.url}/slow`, { signal: controller.signal });
        await wait(delay / 4);
        controller.abort();
        await expect(promise).rejects.toMatchObject({ output: { statusCode: 500 } });
        expect(seen!.abort).toBeDefined();
        expect(seen!.error).toBeUndefined();
        expect(seen!.phases.total).toBe(seen!.abort! - seen!.start);
        destroyAgents(agents);
    });
});

describe.concurrent('Timings: nothing left behind', () => {
    it('a pooled connection keeps no listener of the hop that made it', async () => {
        const agents = ownAgents();
        const own = client.defaults({ agents });
        await own.get(slowTls.url, { lookup: slowLookup(0) });
        await own.get(server.url);
        const pooled = [
            ...Object.values(agents.https.freeSockets).flat(),
            ...Object.values(agents.http.freeSockets).flat()
        ];
        expect(pooled).toHaveLength(2);
        for (const socket of pooled) {
            for (const event of ['lookup', 'connect', 'secureConnect']) {
                expect(getEventListeners(socket!, event).filter((listener) => listener.name.startsWith('on'))).toEqual(
                    []
                );
            }

            // The slot that found the hop while it connected is emptied (not deleted: that would slow the socket;
            // wire/socket-moments.ts).
            const slot = Object.getOwnPropertySymbols(socket).find(
                (key) => key.description === 'tracewire.connectionMoments'
            );
            expect(slot).toBeDefined();
            expect((socket as unknown as Record<symbol, unknown>)[slot!]).toBeUndefined();
        }

        destroyAgents(agents);
    });
});

describe.concurrent('Timings: the clock', () => {
    it('reads as the wall clock (Date.now()) and maps back onto the monotonic clock OpenTelemetry places span events by', () => {
        for (let i = 0; i < 50; ++i) {
            const before = Date.now();
            const at = timestamp();
            const after = Date.now();
            // Date.now() counts whole milliseconds; the anchor may lag the wall clock by 2 ms before it moves.
            expect(at).toBeGreaterThanOrEqual(before - 3);
            expect(at).toBeLessThanOrEqual(after + 3);
            // Bracketed by two readings, not compared with one: a pause between them (a loaded CI machine
            // preempts for more than a millisecond) must not fail the test. The epoch's size leaves a
            // double about 0.25 µs of precision, hence the slack.
            const from = performance.now();
            const mapped = monotonicAt(timestamp());
            const to = performance.now();
            expect(mapped).toBeGreaterThanOrEqual(from - 0.001);
            expect(mapped).toBeLessThanOrEqual(to + 0.001);
        }
    });
});
