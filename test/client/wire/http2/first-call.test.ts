import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HopRequest } from '../../../../src/client/index.js';
import type { Http2Request } from '../../../../src/client/wire/http2/request.js';
import { type Http2TestServer, startHttp2 } from './servers.js';

/**
 * A process's first call over HTTP/2 (README "HTTP/2", docs/client.md "Loaded on first use"): the
 * transport loads with it (src/client/wire/load-http2.ts), Node's `node:http2` among it. Each test
 * takes the client's modules afresh (`vi.resetModules()`), so that its call is the first of a
 * process that never loaded the transport.
 */

let server: Http2TestServer;
// The paths the server was asked for.
const served: string[] = [];

beforeAll(async () => {
    server = await startHttp2(
        (req, res) => {
            served.push(req.url);
            const answer = () =>
                res.end([req.url, req.headers['x-late'], req.headers['x-later']].filter(Boolean).join(' '));
            // '/slow' answers late, if its stream is still there.
            if (req.url === '/slow') {
                setTimeout(() => res.stream.destroyed || answer(), 2000).unref();
            } else {
                answer();
            }
        },
        { h2c: true }
    );
});

afterAll(() => server.close());

/** The client's modules as a process that never spoke HTTP/2 has them, and its clock. */
async function freshClient() {
    vi.resetModules();
    const client = await import('../../../../src/client/index.js');
    const { timestamp } = await import('../../../../src/client/wire/timings-clock.js');
    return { ...client, timestamp };
}

// When the client's code asked Node for `node:http2` (on the clock of its timings), as an APM agent
// would see it: the function is wrapped, and still does what it did.
const getBuiltinModule = process.getBuiltinModule;
function noteHttp2Loads(now: () => number): number[] {
    const asked: number[] = [];
    process.getBuiltinModule = ((id: string) => {
        if (id === 'node:http2') {
            asked.push(now());
        }

        return getBuiltinModule.call(process, id);
    }) as typeof process.getBuiltinModule;
    return asked;
}

afterEach(async () => {
    process.getBuiltinModule = getBuiltinModule;
    // Each test's sessions close after their idleTimeout.
    await expect.poll(() => server.openSessions()).toBe(0);
});

describe('HTTP/2: the first call of a process', () => {
    it('has its promise.req at once, as over HTTP/1.1: the Http2Request its request event gives and its stream carries', async () => {
        const { Client, isHttp2Request } = await freshClient();
        const traced = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 }, events: true });
        const seen: HopRequest[] = [];
        traced.events?.on('request', (req) => {
            seen.push(req);
            req.setHeader('x-late', 'set in the request event');
        });
        const promise = traced.request('GET', `${server.url}/first?q=1`);
        const req = promise.req as unknown as Http2Request;
        expect(isHttp2Request(req)).toBe(true);
        expect(seen).toEqual([req]);
        expect(req).toMatchObject({ method: 'GET', path: '/first?q=1', protocol: 'http:', aborted: false });
        // The transport is still loading: the stream is not out, so the fields may still change.
        expect(req.headersSent).toBe(false);
        req.setHeader('x-later', 'set on promise.req');
        const events: string[] = [];
        for (const name of ['response', 'finish', 'close']) {
            req.on(name, () => events.push(name));
        }

        const res = await promise;
        expect(res.httpVersion).toBe('2.0');
        expect(String(await traced.read(res))).toBe('/first?q=1 set in the request event set on promise.req');
        expect(req.stream?.id).toBe(1);
        expect(req.socket?.remotePort).toBe(server.port);
        expect(req.headersSent).toBe(true);
        await expect.poll(() => events).toEqual(['finish', 'response', 'close']);
    });

    it("counts the load of Node's http2 in no phase of its timings", async () => {
        const { Client, timestamp } = await freshClient();
        const asked = noteHttp2Loads(timestamp);
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const { res, payload } = await api.get(`${server.url}/first`);
        expect(String(payload)).toBe('/first');
        expect(res.httpVersion).toBe('2.0');
        const { socket, connect, phases } = res.timings;
        // Loaded once, after the hop began (the load is in its total, as in its span) and before its
        // connection was even asked for: not in `tcp` or `request`...
        expect(asked).toHaveLength(1);
        expect(asked[0]).toBeGreaterThan(res.timings.start);
        expect(asked[0]).toBeLessThan(socket!);
        expect(connect).toBeGreaterThan(socket!);
        // ...and not in `wait`, the pool's queue.
        expect(phases.wait).toBeLessThanOrEqual(socket! - asked[0]!);
    });

    it('sends nothing for a call stopped while the transport loads, through promise.req or its signal', async () => {
        const { Client } = await freshClient();
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const connections = server.connections.length;
        served.length = 0;
        const aborted = api.request('GET', `${server.url}/aborted`);
        const req = aborted.req as unknown as Http2Request;
        req.abort();
        expect(req.aborted).toBe(true);
        const controller = new AbortController();
        const signalled = api.get(`${server.url}/signalled`, { signal: controller.signal });
        controller.abort();
        await expect(aborted).rejects.toThrow('Client request aborted');
        await expect(signalled).rejects.toThrow('Client request aborted');

        // The next call comes after them: it finds no connection of theirs, and the server saw only it.
        const { res } = await api.get(`${server.url}/next`);
        expect(res.timings.phases.tcp).toBeDefined();
        expect(server.connections.length).toBe(connections + 1);
        expect(served).toEqual(['/next']);
    });

    it('stops its stream through promise.req once the transport has loaded, as any stream', async () => {
        const { Client } = await freshClient();
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const promise = api.request('GET', `${server.url}/slow`);
        const req = promise.req as unknown as Http2Request;
        await expect.poll(() => req.headersSent).toBe(true);
        const stream = req.stream;
        req.abort();
        await expect(promise).rejects.toThrow('Client request aborted');
        // Reset with CANCEL, the session kept for the others.
        expect(stream?.rstCode).toBe(8);
        const after = api.request('GET', `${server.url}/after`);
        expect(String(await api.read(await after))).toBe('/after');
        expect((after.req as unknown as Http2Request).socket).toBe(req.socket);
    });

    it('waits for the transport also when a preRequest listener turns http2 on', async () => {
        const { Client } = await freshClient();
        const traced = new Client().defaults({ events: true });
        traced.events?.on('preRequest', (_uri, options) => {
            options.http2 = { h2c: true, idleTimeout: 100 };
        });
        const { res, payload } = await traced.get(`${server.url}/turned-on`);
        expect(res.httpVersion).toBe('2.0');
        expect(String(payload)).toBe('/turned-on');
    });
});
