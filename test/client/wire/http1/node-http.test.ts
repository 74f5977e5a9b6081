import * as dns from 'node:dns';
import type { ClientRequest, RequestOptions } from 'node:http';
import { createRequire } from 'node:module';
import type { LookupFunction } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../../../src/client/index.js';
import { startHttp, startHttps, startUnix, type TestServer } from '../../helpers.js';

// What msw, nock and APM agents do: replace `request` on the CommonJS exports of `http`/`https`
// at run time, long after the client was loaded, and without syncing the ES module bindings.
const require = createRequire(import.meta.url);
const http = require('node:http') as typeof import('node:http');
const https = require('node:https') as typeof import('node:https');
const originals = { http: http.request, https: https.request };

let plain: TestServer;
let secure: TestServer;
beforeAll(async () => {
    plain = await startHttp((_req, res) => res.end('plain'));
    secure = await startHttps((_req, res) => res.end('secure'));
});

afterEach(() => {
    http.request = originals.http;
    https.request = originals.https;
});

afterAll(async () => {
    await plain.close();
    await secure.close();
});

/** Replaces `module.request` with a spy that still sends the request; returns the options it saw. */
function patch(module: { request: unknown }, original: (options: RequestOptions) => ClientRequest): RequestOptions[] {
    const seen: RequestOptions[] = [];
    module.request = (options: RequestOptions) => {
        seen.push(options);
        return original(options);
    };
    return seen;
}

describe('node:http and node:https are looked up at call time', () => {
    it('a patch of http.request made after the client loaded sees its requests', async () => {
        const seen = patch(http, originals.http);
        const { payload } = await client.get(`${plain.url}/path`);
        expect(String(payload)).toBe('plain');
        expect(seen.map((options) => options.path)).toEqual(['/path']);
    });

    it('a patch of https.request made after the client loaded sees its requests', async () => {
        const seen = patch(https, originals.https);
        const { payload } = await client.get(`${secure.url}/s`, { rejectUnauthorized: false });
        expect(String(payload)).toBe('secure');
        expect(seen.map((options) => options.path)).toEqual(['/s']);
    });

    it('a patch removed again is no longer called', async () => {
        const seen = patch(http, originals.http);
        http.request = originals.http;
        await client.get(`${plain.url}/`);
        expect(seen).toHaveLength(0);
    });
});

describe('the options handed to http(s).request()', () => {
    // Node copies them key by key on every request (wire/http1/node-options.ts): only the keys that
    // apply, always in the same order, so every request of a kind gives Node objects of one shape.
    it('a plain GET: where it goes, its headers and its agent, nothing else', async () => {
        const seen = patch(http, originals.http);
        await client.get(`${plain.url}/`);
        expect(Object.keys(seen[0] as object)).toEqual(['host', 'port', 'path', 'headers', 'agent']);
    });

    it("a PUT over https with the request's TLS and resolution options: each set one, in one order", async () => {
        const seen = patch(https, originals.https);
        const lookup = ((hostname: string, options: object, callback: never) =>
            dns.lookup(hostname, options, callback)) as unknown as LookupFunction;
        await client.put(`${secure.url}/`, {
            payload: 'x',
            rejectUnauthorized: false,
            ciphers: 'DEFAULT',
            secureProtocol: 'TLS_method',
            lookup,
            family: 4,
            hints: 0
        });
        expect(Object.keys(seen[0] as object)).toEqual([
            'host',
            'port',
            'path',
            'method',
            'headers',
            'agent',
            'rejectUnauthorized',
            'ciphers',
            'secureProtocol',
            'lookup',
            'family',
            'hints'
        ]);
    });

    it('over http the TLS options stay out; a socketPath goes in before the resolution options', async () => {
        const seen = patch(http, originals.http);
        const socket = await startUnix((_req, res) => res.end('unix'));
        try {
            await client.get('http://localhost/', {
                socketPath: socket.socketPath,
                rejectUnauthorized: true,
                ciphers: 'DEFAULT',
                family: 4
            });
        } finally {
            await socket.close();
        }

        expect(Object.keys(seen[0] as object)).toEqual([
            'host',
            'port',
            'path',
            'headers',
            'agent',
            'socketPath',
            'family'
        ]);
    });
});
