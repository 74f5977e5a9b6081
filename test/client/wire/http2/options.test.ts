import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, type Timings } from '../../../../src/client/index.js';
import { isHttpError } from '../../../../src/errors/index.js';
import { selfSignedCertificate } from '../../helpers.js';
import { immediateLookup } from '../../timing-fixtures.js';
import { startRawHttp2 } from './raw-server.js';
import { clientSessions, expectReleased, timersBefore } from './released.js';
import { type Http2TestServer, startHttp2 } from './servers.js';
import { rejection } from './settling.js';

/**
 * The `http2` option (README "HTTP/2"): checked like every option, with an error naming what is
 * wrong, `null` and `undefined` meaning "not set"; and what each setting does on the wire.
 */

let timers = 0;
beforeEach(() => {
    timers = timersBefore();
});

describe('HTTP/2 options: checked like every option', () => {
    const invalid: [unknown, RegExp][] = [
        ['yes', /^Option http2 must be true, false or an object of HTTP\/2 settings/],
        [[true], /^Option http2 must be true, false or an object/],
        [{ h2c: 'true' }, /^Option http2\.h2c must be a boolean, got string$/],
        [{ maxConcurrentStreams: 0 }, /^Option http2\.maxConcurrentStreams must be a positive integer$/],
        [{ maxConcurrentStreams: 1.5 }, /^Option http2\.maxConcurrentStreams must be a positive integer$/],
        [{ pingInterval: -1 }, /^Option http2\.pingInterval must be a non-negative integer of milliseconds$/],
        [{ idleTimeout: '100' }, /^Option http2\.idleTimeout must be a non-negative integer of milliseconds$/],
        [
            { initialWindowSize: 100 },
            /^Option http2\.initialWindowSize must be an integer of bytes from 65535 to 2147483647$/
        ],
        [{ connectionWindowSize: 2 ** 31 }, /^Option http2\.connectionWindowSize must be an integer of bytes/],
        [{ window: 1 }, /^Option http2 has an unknown field "window" \(known: h2c, maxConcurrentStreams/]
    ];
    for (const [value, message] of invalid) {
        it(`refuses ${JSON.stringify(value)}: a 500 naming it, per request, and thrown by defaults()`, async () => {
            const err = await rejection(new Client().get('https://127.0.0.1:1/', { http2: value as never }));
            expect(isHttpError(err, 500)).toBe(true);
            expect(err.message).toMatch(message);
            expect(() => new Client().defaults({ http2: value as never })).toThrow(message);
        });
    }

    it('takes null and undefined as not set: HTTP/1.1, or a field at its default', async () => {
        const server = await startHttp2((_req, res) => res.end('ok'), { allowHTTP1: true });
        try {
            const api = new Client().defaults({ rejectUnauthorized: false });
            expect((await api.get(`${server.url}/`, { http2: null })).res.httpVersion).toBe('1.1');
            const settings = { h2c: null, maxConcurrentStreams: undefined, pingInterval: null, idleTimeout: 100 };
            expect((await api.get(`${server.url}/`, { http2: settings })).res.httpVersion).toBe('2.0');
            await expectReleased(api, [server], timers);
        } finally {
            await server.close();
        }
    });
});

describe('HTTP/2 options: what the settings do', () => {
    let server: Http2TestServer;
    afterEach(() => server.close());

    it('initialWindowSize and connectionWindowSize are the windows the server sees (here their least, 65535)', async () => {
        const body = Buffer.alloc(1024 * 1024, 'w');
        server = await startHttp2((_req, res) => res.end(body));
        const api = new Client().defaults({
            http2: { idleTimeout: 100, initialWindowSize: 65_535, connectionWindowSize: 65_535 },
            rejectUnauthorized: false
        });
        const { payload } = await api.get(`${server.url}/`);
        expect((payload as Buffer).length).toBe(body.length);
        expect(server.sessions[0]?.remoteSettings.initialWindowSize).toBe(65_535);
        await expectReleased(api, [server], timers);
    });

    it('pingInterval 0 sends no PING on a long stream', async () => {
        server = await startHttp2((_req, res) => {
            setTimeout(() => res.end('late'), 200);
        });
        let pings = 0;
        server.server.on('session', (session) => session.on('ping', () => pings++));
        const api = new Client().defaults({ http2: { idleTimeout: 100, pingInterval: 0 }, rejectUnauthorized: false });
        await api.get(`${server.url}/`);
        const pinged = new Client().defaults({
            http2: { idleTimeout: 100, pingInterval: 20 },
            rejectUnauthorized: false
        });
        expect(pings).toBe(0);
        await pinged.get(`${server.url}/`);
        expect(pings).toBeGreaterThan(2);
        await expectReleased(api, [], timers);
        await expectReleased(pinged, [server], timers);
    });

    it('pingTimeout 0 gives a server that never sends its SETTINGS no bound: the request timeout is one', async () => {
        const raw = await startRawHttp2(() => {}, { ackSettings: false });
        server = await startHttp2(undefined);
        const api = new Client().defaults({ http2: { pingTimeout: 0 }, rejectUnauthorized: false });
        const err = await rejection(api.get(`${raw.url}/`, { timeout: 300 }));
        expect(err.output.statusCode).toBe(504);
        await expectReleased(api, [raw], timers);
        await raw.close();
    });

    it("idleTimeout 0 keeps an idle session open (unref'd) until the server closes it", async () => {
        server = await startHttp2((_req, res) => res.end('ok'));
        const api = new Client().defaults({ http2: { idleTimeout: 0 }, rejectUnauthorized: false });
        await api.get(`${server.url}/`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(clientSessions(api.agents)).toBe(1);
        server.sessions[0]?.close();
        await expectReleased(api, [server], timers);
    });

    it('resolves a host name with the lookup and family options, timing its lookup', async () => {
        server = await startHttp2((_req, res) => res.end('ok'));
        const names: string[] = [];
        const lookup = ((hostname: string, options: object, callback: never) => {
            names.push(hostname);
            dnsLookup('127.0.0.1', options, callback);
        }) as unknown as LookupFunction;
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const { res } = await api.get(`https://tracewire.test:${server.port}/`, { lookup, family: 4, hints: 0 });
        expect(res.httpVersion).toBe('2.0');
        expect(names).toEqual(['tracewire.test']);
        const timings = (res as typeof res & { timings: Timings }).timings;
        expect(timings.lookup).toBeDefined();
        expect(timings.phases.dns).toBeGreaterThanOrEqual(0);
        await expectReleased(api, [server], timers);
    });

    it('times a lookup that answers before it returns (a resolver answering from its cache)', async () => {
        server = await startHttp2((_req, res) => res.end('ok'));
        const lookup = immediateLookup();
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        const { res } = await api.get(`https://tracewire.test:${server.port}/`, { lookup });
        expect(res.httpVersion).toBe('2.0');
        expect(lookup.calls).toBe(1);
        const timings = (res as typeof res & { timings: Timings }).timings;
        expect(timings.lookup).toBeGreaterThanOrEqual(timings.socket!);
        expect(timings.phases.dns).toBeGreaterThanOrEqual(0);
        await expectReleased(api, [server], timers);
    });

    it("takes the TLS settings of the caller's agent: its CA makes the test certificate trusted", async () => {
        server = await startHttp2((_req, res) => res.end('trusted'));
        const api = new Client().defaults({ http2: { idleTimeout: 100 } });
        const agent = new HttpsAgent({ ca: selfSignedCertificate().cert });
        const { res, payload } = await api.get(`${server.url}/`, { agent });
        expect(res.httpVersion).toBe('2.0');
        expect(String(payload)).toBe('trusted');
        const err = await rejection(api.get(`${server.url}/`));
        expect(err.output.statusCode).toBe(502);
        agent.destroy();
        await expectReleased(api, [server], timers);
    });
});
