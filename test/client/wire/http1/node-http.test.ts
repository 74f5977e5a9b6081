import type { ClientRequest, RequestOptions } from 'node:http';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../../../src/client/index.js';
import { startHttp, startHttps, type TestServer } from '../../helpers.js';

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
