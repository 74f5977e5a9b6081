import * as http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
    Client,
    client,
    isProxyRefusal,
    isReadFailure,
    isRedirectFailure,
    isRequestFailure,
    isResponseError
} from '../../../src/client/index.js';
import { errors } from '../../../src/index.js';
import { refusedUrl, startHttp, startHttps, type TestServer } from '../helpers.js';
import { startProxy, type TestProxy } from '../test-proxy.js';
import { startHttp2 } from '../wire/http2/servers.js';

/*
 * The guards of the failures' data (docs/client.md "Failures"), on failures the client really makes
 * against servers on loopback: each failure is narrowed by the guard of its shape and by no other,
 * and the fields the types name hold what the docs say. A value whose fields say something else is
 * not narrowed. The types themselves: test/client/contract/types.test.ts.
 */

let server: TestServer;
let secure: TestServer;
let proxy: TestProxy;

beforeAll(async () => {
    server = await startHttp((req, res) => {
        const path = req.url ?? '/';
        if (path === '/slow') {
            setTimeout(() => res.end('late'), 500).unref();
        } else if (path === '/stall') {
            res.writeHead(200).write('part');
        } else if (path === '/missing') {
            res.writeHead(404, { 'content-type': 'application/json' }).end('{"reason":"gone"}');
        } else if (path === '/not-json') {
            res.writeHead(200, { 'content-type': 'application/json' }).end('<html>proxy error</html>');
        } else if (path === '/loop') {
            res.writeHead(302, { location: '/loop' }).end();
        } else {
            res.end('0123456789');
        }
    });
    secure = await startHttps((_req, res) => res.end('secure'));
    proxy = await startProxy('user:pass');
});

afterAll(async () => {
    await Promise.all([server.close(), secure.close(), proxy.close()]);
});

/** What a `catch` gets from the call: unknown. */
async function failureOf(call: Promise<unknown>): Promise<unknown> {
    try {
        await call;
    } catch (err) {
        return err;
    }

    throw new Error('The call succeeded');
}

/** The guards that narrow `err`, by name. */
function shapesOf(err: unknown): string[] {
    const guards = { isRequestFailure, isResponseError, isReadFailure, isProxyRefusal, isRedirectFailure };
    return Object.entries(guards)
        .filter(([, guard]) => guard(err))
        .map(([name]) => name);
}

describe('isRequestFailure: the failures made around an error', () => {
    it('a refused connection: data.code, and with retry data.attempts', async () => {
        const err = await failureOf(client.get(refusedUrl));
        expect(shapesOf(err)).toEqual(['isRequestFailure']);
        if (!isRequestFailure(err)) {
            throw err;
        }

        expect(err.output.statusCode).toBe(502);
        expect(err.data.code).toBe('ECONNREFUSED');
        expect(err.data.phase).toBeUndefined();
        expect(err.data.attempts).toBeUndefined();
        expect(err.cause).toBe(err.data);

        const retried = await failureOf(client.get(refusedUrl, { retry: { limit: 2, backoff: () => 0 } }));
        expect(isRequestFailure(retried) && retried.data.attempts).toBe(3);
    });

    it('a phase timeout and the deadline: data.code ETIMEDOUT and data.phase', async () => {
        const phase = await failureOf(client.get(`${server.url}/slow`, { timeouts: { response: 20 } }));
        expect(shapesOf(phase)).toEqual(['isRequestFailure']);
        expect(isRequestFailure(phase) && [phase.output.statusCode, phase.data.code, phase.data.phase]).toEqual([
            504,
            'ETIMEDOUT',
            'response'
        ]);

        const deadline = await failureOf(client.get(`${server.url}/slow`, { deadline: 20 }));
        expect(isRequestFailure(deadline) && deadline.data.phase).toBe('deadline');
    });

    it('an abort: data.code ABORT_ERR, data.name AbortError', async () => {
        const err = await failureOf(client.get(`${server.url}/slow`, { signal: AbortSignal.abort('stop') }));
        expect(shapesOf(err)).toEqual(['isRequestFailure']);
        expect(isRequestFailure(err) && [err.data.code, err.data.name, err.data.cause]).toEqual([
            'ABORT_ERR',
            'AbortError',
            'stop'
        ]);
    });

    it("a helper's read timeout: data.code ETIMEDOUT and the response it was reading as data.res", async () => {
        const err = await failureOf(client.get(`${server.url}/stall`, { timeout: 50 }));
        expect(shapesOf(err)).toEqual(['isRequestFailure', 'isReadFailure']);
        expect(isRequestFailure(err) && [err.output.statusCode, err.data.code, err.data.res?.statusCode]).toEqual([
            408,
            'ETIMEDOUT',
            200
        ]);
    });

    it('an HTTP/2 stream refused twice: data.code and data.http2, its stream and RST_STREAM code', async () => {
        const h2 = await startHttp2(undefined, { h2c: true });
        h2.server.on('stream', (stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
        try {
            const err = await failureOf(new Client().get(`${h2.url}/refused`, { http2: { h2c: true } }));
            expect(shapesOf(err)).toEqual(['isRequestFailure']);
            if (!isRequestFailure(err)) {
                throw err;
            }

            expect(err.data.code).toBe('ERR_HTTP2_REFUSED_STREAM');
            expect(err.data.http2).toEqual({
                streamId: expect.any(Number),
                rstCode: http2.constants.NGHTTP2_REFUSED_STREAM,
                session: undefined
            });
        } finally {
            await h2.close();
        }
    });

    it('an Error thrown by a listener is the data of its 500; a thrown non-Error is no request failure', async () => {
        const traced = client.defaults({ events: true });
        traced.events.once('request', () => {
            throw Object.assign(new Error('listener failed'), { code: 'E_LISTENER' });
        });
        const err = await failureOf(traced.get(server.url));
        expect(isRequestFailure(err) && [err.output.statusCode, err.data.code]).toEqual([500, 'E_LISTENER']);

        traced.events.once('request', () => {
            throw 'a string';
        });
        expect(shapesOf(await failureOf(traced.get(server.url)))).toEqual([]);
    });
});

describe('isResponseError: the 4xx/5xx of a helper', () => {
    it('data.isResponseError, headers, payload and res; no other shape', async () => {
        const err = await failureOf(client.get(`${server.url}/missing`, { json: true }));
        expect(shapesOf(err)).toEqual(['isResponseError']);
        if (!isResponseError<{ reason: string }>(err)) {
            throw err;
        }

        expect(err.output.statusCode).toBe(404);
        expect(err.data.payload.reason).toBe('gone');
        expect(err.data.headers['content-type']).toBe('application/json');
        expect(err.data.res.statusCode).toBe(404);
    });
});

describe('isReadFailure, isProxyRefusal, isRedirectFailure: the other shapes', () => {
    it('a body over maxBytes (413) carries data.res with a helper, and nothing with read()', async () => {
        const err = await failureOf(client.get(server.url, { maxBytes: 4 }));
        expect(shapesOf(err)).toEqual(['isReadFailure']);
        expect(isReadFailure(err) && [err.output.statusCode, err.data.res?.statusCode, err.data.payload]).toEqual([
            413,
            200,
            undefined
        ]);

        const read = await failureOf(client.read(await client.request('GET', server.url), { maxBytes: 4 }));
        expect(errors.isHttpError(read, 413)).toBe(true);
        expect(shapesOf(read)).toEqual([]);
    });

    it('a body that is not the JSON it claims (502): data.payload, the raw bytes, and data.res', async () => {
        const err = await failureOf(client.get(`${server.url}/not-json`, { json: true }));
        expect(shapesOf(err)).toEqual(['isReadFailure']);
        expect(isReadFailure(err) && [String(err.data.payload), err.data.res?.statusCode]).toEqual([
            '<html>proxy error</html>',
            200
        ]);
    });

    it("a proxy's refusal (407 to CONNECT): data.proxy, statusCode, statusText, headers", async () => {
        const err = await failureOf(
            client.get(secure.url, { proxy: `http://127.0.0.1:${proxy.port}`, rejectUnauthorized: false })
        );
        expect(shapesOf(err)).toEqual(['isProxyRefusal']);
        if (!isProxyRefusal(err)) {
            throw err;
        }

        expect(err.data).toMatchObject({
            proxy: `http://127.0.0.1:${proxy.port}`,
            statusCode: 407,
            statusText: 'Proxy Authentication Required'
        });
        expect(err.data.headers['proxy-authenticate']).toBe('Basic realm="test"');
    });

    it('too many redirects (502): the trace of the redirects followed', async () => {
        const err = await failureOf(client.get(`${server.url}/loop`, { redirects: 2 }));
        expect(shapesOf(err)).toEqual(['isRedirectFailure']);
        expect(isRedirectFailure(err) && [...err.data]).toEqual([
            { method: 'GET', url: `${server.url}/loop` },
            { method: 'GET', url: `${server.url}/loop` },
            { method: 'GET', url: `${server.url}/loop` }
        ]);
    });
});

describe('the guards check what their types say', () => {
    it('a value whose fields have other types is not narrowed, whoever made it', () => {
        const numericCode = errors.badGateway('x', Object.assign(new Error('e'), { code: 42 }));
        const unknownPhase = errors.gatewayTimeout('x', Object.assign(new Error('e'), { phase: 'dns' }));
        const fakeResponse = errors.notFound('x', { isResponseError: true, headers: {}, res: 'no' });
        const fakeProblem = errors.notFound('x', { isResponseError: true, headers: {}, res: {}, problem: 'gone' });
        const fakeRead = errors.badGateway('x', { res: 'no', payload: Buffer.from('{') });
        const fakePayload = errors.badGateway('x', { res: {}, payload: '{' });
        const fakeRefusal = errors.badGateway('x', { proxy: 'p', statusCode: '407', statusText: '', headers: {} });
        const fakeTrace = errors.badGateway('x', [{ method: 'GET' }]);
        const notHttpError = Object.assign(new Error('e'), { data: new Error('cause') });
        const fakes = [
            numericCode,
            unknownPhase,
            fakeResponse,
            fakeProblem,
            fakeRead,
            fakePayload,
            fakeRefusal,
            fakeTrace
        ];
        for (const err of [...fakes, notHttpError, null]) {
            expect(shapesOf(err)).toEqual([]);
        }

        // errors.isHttpError is boom's contract, unchanged: any HttpError, its data whatever it is.
        expect(errors.isHttpError(numericCode, 502)).toBe(true);
    });
});
