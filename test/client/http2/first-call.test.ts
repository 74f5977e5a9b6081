import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Http2TestServer, startHttp2 } from './servers.js';

/**
 * A process's first call over HTTP/2 (README "HTTP/2", docs/client.md "Loaded on first use"): the
 * transport loads with it (src/client/wire/load-http2.ts), Node's `node:http2` among it. Each test
 * takes the client's modules afresh (`vi.resetModules()`), so that its call is the first of a
 * process that never loaded the transport.
 */

let server: Http2TestServer;

beforeAll(async () => {
    server = await startHttp2((req, res) => res.end(req.url), { h2c: true });
});

afterAll(() => server.close());

/** The client's modules as a process that never spoke HTTP/2 has them, and its clock. */
async function freshClient() {
    vi.resetModules();
    const client = await import('../../../src/client/index.js');
    const { timestamp } = await import('../../../src/client/wire/hop-timings.js');
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
    it("counts the load of Node's http2 in no phase of its timings", async () => {
        const { Client, timestamp } = await freshClient();
        const asked = noteHttp2Loads(timestamp);
        const api = new Client().defaults({ http2: { h2c: true, idleTimeout: 100 } });
        const { res, payload } = await api.get(`${server.url}/first`);
        expect(String(payload)).toBe('/first');
        expect(res.httpVersion).toBe('2.0');
        const { socket, connect, phases } = res.timings;
        // Loaded once, before the hop's connection was even asked for: not in `tcp` or `request`...
        expect(asked).toHaveLength(1);
        expect(asked[0]).toBeLessThan(socket!);
        expect(connect).toBeGreaterThan(socket!);
        // ...and not in `wait`, the pool's queue.
        expect(phases.wait).toBeLessThanOrEqual(socket! - asked[0]!);
    });
});
