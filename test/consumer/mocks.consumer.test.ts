import { describe, expect, it } from 'vitest';
import { runNode, scratchProject } from './scratch.js';

/*
 * msw and nock patch `http.request` when they start, after tracewire is loaded (it is imported
 * first, as an application's modules are): every kind of call must reach the mock, never the
 * network (msw with onUnhandledRequest: 'error', nock with disableNetConnect()).
 */

const expected = {
    results: {
        json: { ok: true },
        redirect: { ok: true },
        gzip: 'zipped body',
        post: { got: { name: 'tracewire' } },
        errorStatus: { isHttpError: true, status: 503, payload: { message: 'down' } }
    },
    // Six hops: four calls, a redirect's two hops; every event and every channel fires for each.
    fired: { preRequest: 6, request: 6, response: 6 },
    published: { preRequest: 6, request: 6, response: 6 },
    handled: 6
};

describe('test mocks see every tracewire call', () => {
    const dir = scratchProject('mocks', { apps: 'mocks' });

    it('msw 3 (setupServer().listen()): JSON, redirect, gzip, POST, error status; events and channels fire', () => {
        expect(runNode(dir, ['msw.mjs'])).toStrictEqual(expected);
    });

    it('nock 15: the same', () => {
        expect(runNode(dir, ['nock.mjs'])).toStrictEqual(expected);
    });

    it('msw and nock in a CommonJS app (tracewire through require(esm)): the same', () => {
        expect(runNode(dir, ['msw.cjs'])).toStrictEqual(expected);
        expect(runNode(dir, ['nock.cjs'])).toStrictEqual(expected);
    });
});
