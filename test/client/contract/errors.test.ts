import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type ResponseErrorData } from '../../../src/client/index.js';
import { type HttpError, isHttpError } from '../../../src/errors/index.js';
import { type MockedRequest, MockNetwork, type MockResponse } from '../../../src/testing/index.js';
import { echo, echoReply, refusedUrl, startHttp, startHttps, type TestServer } from '../helpers.js';

// The replies and their timing are scripted by a MockNetwork (docs/testing.md): the errors are made above the
// transport seam as for a server's. The real servers stay for what only a connection gives: a reset, a body
// cut by its connection's end, a certificate that does not verify (and a refused connection, a failed lookup).
// `?status=<code>` answers that status with x-status and a body (the echo for 200); /json, /bad-json and
// /html that body with a content-type; /weird the reason phrase Weird; /slow its answer after 500 ms; /stall
// its headers and a first piece of its body, never the rest.
const origin = 'http://errors.test';
const mock = new MockNetwork();
const api = client.defaults({ mock });
mock.intercept({ origin, path: '/slow' }).reply(200, 'late').delay(500).persist();
mock.intercept({ origin, path: '/stall' })
    .reply(() => ({ status: 200, body: stalled('part') }))
    .persist();
mock.intercept({ origin, method: () => true })
    .reply((request) => scripted(request))
    .persist();

function scripted(request: MockedRequest): MockResponse {
    const status = Number(request.query.get('status') ?? 200);
    const path = request.path.split('?')[0];
    if (path === '/json') {
        return { status, headers: { 'content-type': 'application/json' }, body: '{"reason":"bad"}' };
    }

    if (path === '/bad-json') {
        return { status, headers: { 'content-type': 'application/json' }, body: '<html>proxy error</html>' };
    }

    if (path === '/html') {
        return { status, headers: { 'content-type': 'text/html' }, body: '<h1>Not here</h1>' };
    }

    if (path === '/weird') {
        return { status, statusMessage: 'Weird', body: 'w' };
    }

    return status === 200
        ? echoReply(request)
        : { status, headers: { 'x-status': String(status) }, body: 'error body' };
}

/** A body that sends `first` and then nothing more, never ending. */
function stalled(first: string): Readable {
    const body = new Readable({ read() {} });
    body.push(first);
    return body;
}

let server: TestServer;
let secure: TestServer;

beforeAll(async () => {
    server = await startHttp((req, res) => {
        if (req.url === '/reset') {
            req.socket.destroy();
        } else {
            // /cut: a body that its connection's end cuts short.
            res.writeHead(200, { 'content-length': '100' });
            res.write('partial', () => setTimeout(() => req.socket.destroy(), 5));
        }
    });
    secure = await startHttps(echo);
});

afterAll(async () => {
    mock.close();
    await server.close();
    await secure.close();
});

function failure(promise: Promise<unknown>): Promise<HttpError> {
    return promise.then(
        () => {
            throw new Error('expected a rejection');
        },
        (err: HttpError) => err
    );
}

describe('7. Errors', () => {
    describe('7.1 a 4xx or 5xx response makes the helpers throw an HttpError', () => {
        it('with data.isResponseError, headers, payload and res', async () => {
            const err = await failure(api.get(`${origin}/?status=404`));
            expect(isHttpError(err, 404)).toBe(true);
            expect(err.message).toBe('Response Error: 404 Not Found');
            const data = err.data as ResponseErrorData<Buffer>;
            expect(data.isResponseError).toBe(true);
            expect(data.headers['x-status']).toBe('404');
            expect(data.payload.toString()).toBe('error body');
            expect(data.res.statusCode).toBe(404);
        });

        it('for every helper and for 5xx statuses', async () => {
            for (const method of ['post', 'patch', 'put', 'delete'] as const) {
                const err = await failure(api[method](`${origin}/?status=503`));
                expect(err.output.statusCode).toBe(503);
                expect(err.message).toBe('Response Error: 503 Service Unavailable');
            }
        });

        it('with the parsed payload when json applies', async () => {
            const err = await failure(api.get(`${origin}/json?status=422`, { json: true }));
            expect((err.data as ResponseErrorData).payload).toEqual({ reason: 'bad' });
        });

        it('maps a status above 599 to 502 and keeps it in the message', async () => {
            const err = await failure(api.get(`${origin}/weird?status=600`));
            expect(err.output.statusCode).toBe(502);
            expect(err.message).toBe('Response Error: 600 Weird');
        });

        it("a 4xx/5xx stays its own status when json: 'strict' refuses its content-type; the raw body is data.payload", async () => {
            const err = await failure(api.get(`${origin}/html?status=404`, { json: 'strict' }));
            expect(isHttpError(err, 404)).toBe(true);
            const data = err.data as ResponseErrorData<Buffer>;
            expect(data.payload.toString()).toBe('<h1>Not here</h1>');
            expect(data.res.statusCode).toBe(404);
        });

        it('a 4xx/5xx stays its own status when its JSON body does not parse; the raw body is data.payload', async () => {
            for (const json of [true, 'strict', 'force'] as const) {
                const err = await failure(api.get(`${origin}/bad-json?status=502`, { json }));
                expect(isHttpError(err, 502)).toBe(true);
                expect(err.message).toBe('Response Error: 502 Bad Gateway');
                expect((err.data as ResponseErrorData<Buffer>).payload.toString()).toBe('<html>proxy error</html>');
            }
        });

        it('a 2xx whose JSON body does not parse is still the 502 invalid JSON error', async () => {
            const err = await failure(api.get(`${origin}/bad-json?status=200`, { json: true }));
            expect(err.message).toMatch(/^Invalid JSON response payload/);
            expect((err.data as { res: import('node:http').IncomingMessage }).res.statusCode).toBe(200);
        });

        it('every read failure of a helper carries the response as data.res', async () => {
            // [URL, options, the error's status, the status of the response it carries]
            const cases: Array<[string, object, number, number]> = [
                [`${origin}/html?status=200`, { json: 'strict' }, 406, 200],
                [`${origin}/bad-json?status=200`, { json: true }, 502, 200],
                [`${origin}/?status=200`, { maxBytes: 1 }, 413, 200],
                // The helper's timeout bounds the wait for the headers too: roomy, so that a loaded machine
                // that stalls its loop still gets them in time and the read is what runs out.
                [`${origin}/stall`, { timeout: 1000 }, 408, 200],
                [`${server.url}/cut`, {}, 500, 200],
                [`${origin}/html?status=404`, { maxBytes: 1 }, 413, 404]
            ];
            for (const [url, options, status, responseStatus] of cases) {
                const err = await failure((url.startsWith(origin) ? api : client).get(url, options));
                expect(err.output.statusCode).toBe(status);
                const res = (err.data as { res: import('node:http').IncomingMessage }).res;
                expect(res.statusCode).toBe(responseStatus);
                expect(res.headers.date).toEqual(expect.any(String));
            }
        });

        it('request() itself resolves with the error status', async () => {
            const res = await api.request('GET', `${origin}/?status=500`);
            expect(res.statusCode).toBe(500);
            res.resume();
        });
    });

    it("7.2 json: 'strict' with a non-JSON content-type is a 406", async () => {
        const err = await failure(api.get(`${origin}/weird?status=200`, { json: 'strict' }));
        expect(err.output.statusCode).toBe(406);
    });

    describe('7.3 other failures', () => {
        it('a refused connection is a 502 Client request error keeping the system error', async () => {
            // Nothing listens on port 1; a port freed by a closed server could be taken again by another test.
            const err = await failure(client.get(refusedUrl));
            expect(err.output.statusCode).toBe(502);
            expect(err.message).toMatch(/^Client request error: connect ECONNREFUSED/);
            expect((err.data as { code: string }).code).toBe('ECONNREFUSED');
            expect(err.cause).toBe(err.data);
        });

        it('a reset connection is a 502 with code ECONNRESET', async () => {
            const err = await failure(client.get(`${server.url}/reset`, { agent: false }));
            expect(err.output.statusCode).toBe(502);
            expect((err.data as { code: string }).code).toBe('ECONNRESET');
        });

        it('a failed DNS lookup is a 502 with the lookup error code', async () => {
            const lookup = ((_host: string, _options: unknown, callback: Function) => {
                callback(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' }));
            }) as unknown as LookupFunction;
            const err = await failure(client.get('http://nowhere.test/', { lookup, agent: false }));
            expect(err.output.statusCode).toBe(502);
            expect((err.data as { code: string }).code).toBe('ENOTFOUND');
        });

        it('an untrusted certificate is a 502 with the TLS error code', async () => {
            const err = await failure(client.get(secure.url, { agent: false }));
            expect(err.output.statusCode).toBe(502);
            expect((err.data as { code: string }).code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
        });

        it('no response within timeout is a 504 Client request timeout with code ETIMEDOUT', async () => {
            const started = Date.now();
            const err = await failure(api.get(`${origin}/slow`, { timeout: 40 }));
            expect(Date.now() - started).toBeLessThan(400);
            expect(err).toMatchObject({
                message: 'Client request timeout',
                output: { statusCode: 504 },
                data: { code: 'ETIMEDOUT' }
            });
        });

        it('a response that closes before its end is a 500', async () => {
            const err = await failure(client.get(`${server.url}/cut`, { agent: false }));
            expect(err).toMatchObject({ message: 'Payload stream closed prematurely', output: { statusCode: 500 } });
        });

        it('a response stream destroyed by the caller while read is a 500', async () => {
            const res = await api.request('GET', `${origin}/stall`);
            const reading = api.read(res);
            res.destroy(new Error('gone'));
            await expect(reading).rejects.toMatchObject({ output: { statusCode: 500 } });
        });

        it('a response stream destroyed without an error while read is a 500', async () => {
            const res = await api.request('GET', `${origin}/stall`);
            const reading = api.read(res);
            res.destroy();
            await expect(reading).rejects.toMatchObject({
                message: 'Payload stream closed prematurely',
                output: { statusCode: 500 }
            });
        });

        it('an aborted request is a 500 Client request aborted', async () => {
            const controller = new AbortController();
            const pending = failure(api.get(`${origin}/slow`, { signal: controller.signal }));
            setTimeout(() => controller.abort(), 10);
            expect(await pending).toMatchObject({ message: 'Client request aborted', output: { statusCode: 500 } });
        });

        it('a failing payload stream is a 502 carrying the stream error', async () => {
            const payload = new Readable({
                read() {
                    this.destroy(Object.assign(new Error('disk gone'), { code: 'EIO' }));
                }
            });
            const err = await failure(api.post(`${origin}/`, { payload }));
            expect(err.output.statusCode).toBe(502);
            expect((err.data as { code: string }).code).toBe('EIO');
        });
    });

    describe('bad options reject, never throw, with a message naming the option', () => {
        const url = () => origin;
        const cases: Array<[string, () => [string | undefined, unknown, unknown], RegExp]> = [
            ['method', () => ['BAD METHOD', url(), {}], /Method must be an HTTP method name/],
            ['options', () => ['GET', url(), 'fast'], /Request options must be an object/],
            ['uri type', () => ['GET', 42, {}], /uri must be a string or a URL/],
            ['uri', () => ['GET', 'not a url', {}], /Request uri "not a url" is not a valid URL/],
            ['uri protocol', () => ['GET', 'ftp://host/file', {}], /must use http: or https:/],
            [
                'uri credentials',
                () => ['GET', 'http://%E0%A4%A@127.0.0.1/', {}],
                /user name or password that is not valid percent-encoding/
            ],
            [
                'uri credentials in a URL',
                () => ['GET', new URL('http://u:%E0%A4%A@127.0.0.1/'), {}],
                /user name or password that is not valid percent-encoding/
            ],
            ['baseUrl with a URL', () => ['GET', new URL(url()), { baseUrl: url() }], /Option baseUrl requires/],
            ['baseUrl invalid', () => ['GET', 'x', { baseUrl: 'nope' }], /against baseUrl "nope"/],
            ['baseUrl type', () => ['GET', 'x', { baseUrl: 5 }], /Option baseUrl must be a string/],
            ['agent', () => ['GET', url(), { agent: {} }], /Option agent must be an http.Agent/],
            [
                'agent with rejectUnauthorized',
                () => ['GET', url(), { agent: client.agents.https, rejectUnauthorized: false }],
                /Option agent cannot be combined with rejectUnauthorized/
            ],
            ['headers', () => ['GET', url(), { headers: 'x' }], /Option headers must be an object/],
            ['headers array', () => ['GET', url(), { headers: [] }], /Option headers must be an object/],
            ['header CR/LF', () => ['GET', url(), { headers: { 'x-a': 'v\r\nx: y' } }], /headers\.x-a must/],
            ['header LF in list', () => ['GET', url(), { headers: { 'x-a': ['ok', 'v\n'] } }], /headers\.x-a must/],
            ['header value type', () => ['GET', url(), { headers: { 'x-a': {} } }], /headers\.x-a must/],
            ['header name', () => ['GET', url(), { headers: { 'x a': 'v' } }], /invalid header name "x a"/],
            ['payload', () => ['POST', url(), { payload: 5 }], /Option payload must be/],
            ['redirects', () => ['GET', url(), { redirects: -1 }], /Option redirects must be false or/],
            ['redirects true', () => ['GET', url(), { redirects: true }], /Option redirects/],
            ['redirectMethod', () => ['GET', url(), { redirectMethod: 'G T' }], /Option redirectMethod/],
            ['redirect303', () => ['GET', url(), { redirect303: 'yes' }], /Option redirect303 must be a boolean/],
            ['rejectUnauthorized', () => ['GET', url(), { rejectUnauthorized: 0 }], /Option rejectUnauthorized/],
            [
                'beforeRedirect',
                () => ['GET', url(), { beforeRedirect: 'x' }],
                /Option beforeRedirect must be a function/
            ],
            ['redirected', () => ['GET', url(), { redirected: 1 }], /Option redirected must be a function/],
            ['lookup', () => ['GET', url(), { lookup: 'dns' }], /Option lookup must be a function/],
            ['ciphers', () => ['GET', url(), { ciphers: 1 }], /Option ciphers must be a string/],
            ['secureProtocol', () => ['GET', url(), { secureProtocol: 1 }], /Option secureProtocol must be a string/],
            ['socketPath', () => ['GET', url(), { socketPath: 1 }], /Option socketPath must be a string/],
            ['route', () => ['GET', url(), { route: 1 }], /Option route must be a string/],
            ['timeout', () => ['GET', url(), { timeout: -5 }], /Option timeout/],
            ['timeout type', () => ['GET', url(), { timeout: '5' }], /Option timeout/],
            ['family', () => ['GET', url(), { family: 5 }], /Option family must be 4 or 6/],
            ['hints', () => ['GET', url(), { hints: 1.5 }], /Option hints must be an integer/],
            ['signal', () => ['GET', url(), { signal: {} }], /Option signal must be an AbortSignal/]
        ];

        for (const [name, make, message] of cases) {
            it(name, async () => {
                const [method, uri, options] = make();
                let promise: Promise<unknown> | undefined;
                expect(() => {
                    promise = api.request(method, uri as string, options as never);
                }).not.toThrow();
                const err = await failure(promise!);
                expect(err).toBeInstanceOf(TypeError);
                expect(isHttpError(err)).toBe(true);
                expect(err.message).toMatch(message);
            });
        }

        it('options the client does not know are left alone', async () => {
            const { res } = await api.get(origin, { someOtherLibrary: true } as never);
            expect(res.statusCode).toBe(200);
        });

        it('unknown gunzip and json values reject the helpers', async () => {
            await expect(api.get(origin, { gunzip: 'always' as never })).rejects.toThrow(/Option gunzip/);
            await expect(api.get(origin, { json: 'yes' as never })).rejects.toThrow(/Option json/);
        });

        it('the rejected promise has no req and sends nothing', async () => {
            const received = mock.requests.length;
            const promise = api.request('GET', `${origin}/`, { headers: { 'x-a': 'v\r\n' } });
            expect(promise.req).toBeUndefined();
            await expect(promise).rejects.toThrow(/headers\.x-a/);
            await new Promise((resolve) => setTimeout(resolve, 20));
            expect(mock.requests.length).toBe(received);
        });
    });
});
