import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../../src/client/index.js';
import { type HttpError, isHttpError } from '../../../src/errors/index.js';
import { refusedUrl, startHttp, type TestServer } from '../helpers.js';
import { startProxy, type TestProxy } from '../test-proxy.js';

/*
 * Wherever the client makes a new error around another, that one is its `cause` as ES2022 sets it:
 * own, writable, configurable and not enumerable, so it stays out of the error's keys and JSON
 * while loggers and `util.inspect` follow it (docs/problem-details.md, "`cause`"). `data` keeps what
 * it held (docs/migrating-from-wreck.md, "Failures carry their underlying error").
 */

let server: TestServer;
let proxy: TestProxy;

beforeAll(async () => {
    server = await startHttp((req, res) => {
        const path = req.url ?? '/';
        if (path === '/slow') {
            setTimeout(() => res.end('late'), 2_000).unref();
        } else if (path === '/stall') {
            res.writeHead(200).write('part');
        } else if (path === '/bad-gzip') {
            res.writeHead(200, { 'content-encoding': 'gzip' }).end('not gzip at all');
        } else if (path === '/bad-json') {
            res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":');
        } else if (path === '/missing') {
            res.writeHead(404).end('no such thing');
        } else if (path === '/loop') {
            res.writeHead(302, { location: '/loop' }).end();
        } else if (path === '/bad-location') {
            res.writeHead(302, { location: 'http://[::1' }).end();
        } else {
            res.end('ok');
        }
    });
    proxy = await startProxy('user:secret');
});

afterAll(async () => {
    await server.close();
    await proxy.close();
});

function failure(promise: Promise<unknown>): Promise<HttpError> {
    return promise.then(
        () => {
            throw new Error('expected a rejection');
        },
        (err: unknown) => {
            expect(isHttpError(err)).toBe(true);
            return err as HttpError;
        }
    );
}

/** `err.cause` is `cause` exactly as `new Error(message, { cause })` would hold it. */
function expectCause(err: HttpError, cause: unknown): void {
    expect(Object.getOwnPropertyDescriptor(err, 'cause')).toStrictEqual({
        value: cause,
        writable: true,
        enumerable: false,
        configurable: true
    });
    // JSON.stringify writes the same own enumerable keys (data.res makes the error itself circular).
    expect(Object.keys(err)).not.toContain('cause');
}

describe('the client sets cause as ES2022 does on every error it makes around another', () => {
    it('a network error (502 Client request error): the system error, also data', async () => {
        const err = await failure(client.get(refusedUrl));
        expectCause(err, err.data);
        expect((err.cause as { code: string }).code).toBe('ECONNREFUSED');
        // Node's inspector follows it, as it follows any error's cause.
        expect(inspect(err)).toMatch(/\[cause\]: Error: connect ECONNREFUSED/);
    });

    it('the request timeout, a phase timeout and the deadline (504): the ETIMEDOUT error, also data', async () => {
        for (const options of [{ timeout: 50 }, { timeouts: { response: 50 } }, { deadline: 50 }]) {
            const err = await failure(client.get(`${server.url}/slow`, options));
            expect(err.output.statusCode).toBe(504);
            expectCause(err, err.data);
            expect((err.cause as { code: string }).code).toBe('ETIMEDOUT');
        }
    });

    it('the read timeout (408): the ETIMEDOUT error, also data', async () => {
        const res = await client.request('GET', `${server.url}/stall`);
        const err = await failure(client.read(res, { timeout: 50 }));
        expect(err.output.statusCode).toBe(408);
        expectCause(err, err.data);
    });

    it("an abort (500): the AbortError, also data, whose own cause is the signal's reason", async () => {
        const reason = new Error('user navigated away');
        const controller = new AbortController();
        const pending = client.get(`${server.url}/slow`, { signal: controller.signal });
        setTimeout(() => controller.abort(reason), 20);
        const err = await failure(pending);
        expectCause(err, err.data);
        expect((err.cause as Error).name).toBe('AbortError');
        expect(Object.getOwnPropertyDescriptor(err.cause, 'cause')).toMatchObject({ value: reason, enumerable: false });

        const read = await failure(client.read(Readable.from(['x']), { signal: AbortSignal.abort(reason) }));
        expect(read.message).toBe('Client read aborted');
        expectCause(read, read.data);
    });

    it('a body that does not decompress (502): the zlib error, also data', async () => {
        const err = await failure(client.get(`${server.url}/bad-gzip`, { gunzip: true }));
        expect(err.output.statusCode).toBe(502);
        expectCause(err, err.data);
        expect((err.cause as { code: string }).code).toMatch(/^Z_/);
    });

    it('invalid JSON (502): the SyntaxError, with data.payload the raw body as before (and data.res)', async () => {
        const err = await failure(client.get(`${server.url}/bad-json`, { json: true }));
        expect(err.cause).toBeInstanceOf(SyntaxError);
        expectCause(err, err.cause);
        expect(err.data).toMatchObject({ payload: Buffer.from('{"a":') });
    });

    it('an invalid redirect location (502): the URL error, also data', async () => {
        const err = await failure(client.get(`${server.url}/bad-location`, { redirects: 1 }));
        expect(err.message).toMatch(/^Invalid redirect/);
        expect(err.cause).toBeInstanceOf(TypeError);
        expectCause(err, err.data);
    });

    it('a payload stream that fails (500): the stream error, with data left to the caller', async () => {
        const broken = new Error('disk gone');
        const stream = new Readable({
            read() {
                this.destroy(broken);
            }
        });
        const err = await failure(client.read(stream));
        expectCause(err, broken);
        expect(err.data).toBeNull();
    });

    it('a listener or callback that throws (500): what it threw, also data, an Error or not', async () => {
        const thrown = new Error('listener bug');
        const observed = client.defaults({ events: true });
        observed.events!.once('request', () => {
            throw thrown;
        });
        const err = await failure(observed.get(`${server.url}/`));
        expect(err.message).toBe('A request event listener threw: listener bug');
        expectCause(err, thrown);
        expect(err.data).toBe(thrown);

        const stop = new Error('not today');
        const stopped = await failure(
            client.get(`${server.url}/loop`, { redirects: 1, beforeRedirect: (...args) => args[5](stop) })
        );
        expectCause(stopped, stop);

        const text = await failure(
            client.get(`${server.url}/`, {
                onUploadProgress: () => {
                    throw 'a string';
                },
                payload: 'x',
                method: 'POST'
            } as Parameters<typeof client.get>[1])
        );
        expect(text.message).toMatch(/^The onUploadProgress callback threw/);
        expectCause(text, 'a string');
    });

    it("an unreachable proxy (502): an error naming the proxy, also data, whose own cause is the socket's error", async () => {
        const err = await failure(client.get('http://origin.test/', { proxy: 'http://127.0.0.1:1' }));
        expect(err.message).toMatch(/^Client request error: proxy http:\/\/127\.0\.0\.1:1 could not be reached/);
        expectCause(err, err.data);
        expect((err.cause as { code: string }).code).toBe('ECONNREFUSED');
        expect(Object.getOwnPropertyDescriptor(err.cause, 'cause')).toMatchObject({ enumerable: false });
        expect(((err.cause as Error).cause as { code: string }).code).toBe('ECONNREFUSED');
    });
});

describe('an error made around no other error has no cause', () => {
    it("a proxy's refusal, too many redirects, maxBytes, json 'strict', an error response", async () => {
        const withoutCredentials = proxy.url.replace('user:secret@', '');
        const made = [
            await failure(client.get('http://origin.test/', { proxy: withoutCredentials })),
            await failure(client.get(`${server.url}/loop`, { redirects: 1 })),
            await failure(client.get(`${server.url}/stall`, { maxBytes: 1 })),
            await failure(client.get(`${server.url}/`, { json: 'strict' })),
            await failure(client.get(`${server.url}/missing`))
        ];
        expect(made.map((err) => err.output.statusCode)).toStrictEqual([502, 502, 413, 406, 404]);
        expect(made[1]!.message).toBe('Maximum redirections reached');
        for (const err of made) {
            expect(Object.hasOwn(err, 'cause'), err.message).toBe(false);
        }

        // The refusal and the redirect trace stay in data, where they always were.
        expect(made[0]!.data).toMatchObject({ statusCode: 407 });
        expect(Array.isArray(made[1]!.data)).toBe(true);
    });
});
