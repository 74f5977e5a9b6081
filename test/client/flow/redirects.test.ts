import { ClientRequest, type IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type EffectiveOptions } from '../../../src/client/index.js';
import { badRequest } from '../../../src/errors/index.js';
import { MockNetwork } from '../../../src/testing/index.js';
import { type Echo, echo, echoReply, startHttp, type TestServer } from '../helpers.js';

// The redirects are scripted by a MockNetwork (docs/testing.md): everything that follows them runs above the
// transport seam as on the network. A real server stays for the one test that reads the ClientRequest a
// redirect made over HTTP/1.1.
// GET /redirect/<status>?to=<location> answers <status> with that location (absent when `to` is absent).
// GET /chain/<n> redirects n times before landing on /landed; /slow-chain/<n> the same, each hop 150 ms late.
// GET /held-chain/<n> redirects n times before landing on /held-chain/0, which sends its headers at once
// and its body only `holdBody` ms later.
const holdBody = 1200;
const origin = 'http://redirects.test';
const otherOrigin = 'http://other.test';
const mock = new MockNetwork();
const api = client.defaults({ mock });
const anyMethod = () => true;

mock.intercept({ origin, method: anyMethod, path: /^\/redirect\// })
    .reply((request) => {
        const to = request.query.get('to');
        return {
            status: Number(request.path.split(/[/?]/)[2]),
            headers: to === null ? {} : { location: to },
            body: 'redirect body'
        };
    })
    .persist();
// Each hop answers after 150 ms: well within a 400 ms timeout alone, never all five together.
mock.intercept({ origin, path: /^\/slow-chain\// })
    .reply((request) => ({ status: 302, headers: { location: nextHop(request.path, '/slow-chain/') } }))
    .delay(150)
    .persist();
mock.intercept({ origin, path: /^\/chain\// })
    .reply((request) => ({ status: 301, headers: { location: nextHop(request.path, '/chain/') } }))
    .persist();
mock.intercept({ origin, path: '/held-chain/0' }).reply(200, 'held body').delay({ body: holdBody }).persist();
mock.intercept({ origin, path: /^\/held-chain\// })
    .reply((request) => ({
        status: 301,
        headers: { location: nextHop(request.path, '/held-chain/', '/held-chain/0') }
    }))
    .persist();
mock.intercept({ origin, method: anyMethod }).reply(echoReply).persist();
mock.intercept({ origin: otherOrigin, method: anyMethod }).reply(echoReply).persist();

/** The location after `path` (`<prefix><n>`): `<prefix><n - 1>`, or `last` after the last hop. */
function nextHop(path: string, prefix: string, last = '/landed'): string {
    const left = Number(path.slice(prefix.length));
    return left > 1 ? `${prefix}${left - 1}` : last;
}

let server: TestServer;
beforeAll(async () => {
    server = await startHttp((req, res) => {
        const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
        if (req.url?.startsWith('/redirect/') && to !== null) {
            res.writeHead(Number(req.url.split(/[/?]/)[2]), { location: to }).end();
            return;
        }

        echo(req, res);
    });
});

afterAll(async () => {
    mock.close();
    await server.close();
});

function redirectUrl(status: number, to = '/target', base = origin): string {
    return `${base}/redirect/${status}?to=${encodeURIComponent(to)}`;
}

describe('2.1 Client request options: redirects', () => {
    it('redirects: false (the default) returns the 3xx response itself', async () => {
        const res = await api.request('GET', redirectUrl(301));
        expect(res.statusCode).toBe(301);
        expect(res.headers.location).toBe('/target');
        res.resume();
    });

    for (const status of [301, 302]) {
        it(`follows a ${status} with the original method and the payload`, async () => {
            const { payload } = await api.post<Echo>(redirectUrl(status), {
                payload: { sent: 'again' },
                redirects: 1,
                json: true
            });
            expect(payload).toMatchObject({ method: 'POST', url: '/target', payload: '{"sent":"again"}' });
            expect(payload.headers['content-type']).toBe('application/json');
        });

        it(`follows a ${status} turned into a GET by redirectMethod without the payload or its headers`, async () => {
            const { payload } = await api.post<Echo>(redirectUrl(status), {
                payload: { dropped: true },
                redirects: 1,
                redirectMethod: 'GET',
                json: true
            });
            expect(payload).toMatchObject({ method: 'GET', url: '/target', payload: '' });
            expect(payload.headers['content-type']).toBeUndefined();
        });

        it(`follows a ${status} with redirectMethod when given`, async () => {
            const { payload } = await api.post<Echo>(redirectUrl(status), {
                payload: 'data',
                redirects: 1,
                redirectMethod: 'GET',
                json: true
            });
            expect(payload).toMatchObject({ method: 'GET', payload: '' });
        });
    }

    it('does not follow a 303 unless redirect303 is true', async () => {
        const res = await api.request('POST', redirectUrl(303), { redirects: 1, payload: 'data' });
        expect(res.statusCode).toBe(303);
        res.resume();
    });

    it('follows a 303 with GET when redirect303 is true', async () => {
        const { payload } = await api.post<Echo>(redirectUrl(303), {
            payload: { a: 1 },
            redirects: 1,
            redirect303: true,
            json: true
        });
        expect(payload).toMatchObject({ method: 'GET', payload: '' });
        expect(payload.headers['content-type']).toBeUndefined();
    });

    for (const status of [307, 308]) {
        it(`follows a ${status} with the same method and payload`, async () => {
            const { payload } = await api.put<Echo>(redirectUrl(status), {
                payload: 'kept',
                redirects: 1,
                redirectMethod: 'GET',
                json: true
            });
            expect(payload).toMatchObject({ method: 'PUT', url: '/target', payload: 'kept' });
        });

        it(`follows a ${status} re-sending a stream payload`, async () => {
            const { payload } = await api.post<Echo>(redirectUrl(status), {
                payload: Readable.from(['str', 'eam']),
                redirects: 1,
                json: true
            });
            expect(payload).toMatchObject({ method: 'POST', url: '/target', payload: 'stream' });
        });
    }

    it('does not follow other 3xx statuses', async () => {
        const res = await api.request('GET', redirectUrl(300), { redirects: 3 });
        expect(res.statusCode).toBe(300);
        res.resume();
    });

    it('follows up to `redirects` redirects', async () => {
        const { payload } = await api.get<Echo>(`${origin}/chain/3`, { redirects: 3, json: true });
        expect(payload.url).toBe('/landed');
    });

    it('resolves a relative location against the current URL', async () => {
        const { payload } = await api.get<Echo>(redirectUrl(302, '../elsewhere?q=1'), { redirects: 1, json: true });
        expect(payload.url).toBe('/elsewhere?q=1');
    });

    it('follows a redirect to another origin', async () => {
        const { payload } = await api.get<Echo>(redirectUrl(301, `${otherOrigin}/there`), {
            redirects: 1,
            json: true
        });
        expect(payload.url).toBe('/there');
    });

    describe('beforeRedirect', () => {
        it('is called with the method, status, location, response headers, options and next', async () => {
            const calls: unknown[][] = [];
            await api.get(redirectUrl(302), {
                redirects: 2,
                headers: { 'x-keep': 'yes' },
                beforeRedirect: (...args) => {
                    calls.push(args);
                    args[5]();
                }
            });
            expect(calls).toHaveLength(1);
            const [method, statusCode, location, headers, options, next] = calls[0] as [
                string,
                number,
                string,
                IncomingHttpHeaders,
                EffectiveOptions,
                unknown
            ];
            expect(method).toBe('GET');
            expect(statusCode).toBe(302);
            expect(location).toBe(`${origin}/target`);
            expect(headers.location).toBe('/target');
            expect(options).toMatchObject({ redirects: 1, headers: { 'x-keep': 'yes' } });
            expect(typeof next).toBe('function');
        });

        it('applies changes made to redirectOptions', async () => {
            const { payload } = await api.get<Echo>(redirectUrl(307), {
                redirects: 1,
                json: true,
                beforeRedirect: (_method, _status, _location, _headers, options, next) => {
                    options.headers['X-Added'] = 'on redirect';
                    next();
                }
            });
            expect(payload.headers['x-added']).toBe('on redirect');
        });

        it('next(err) stops the redirect and rejects with that HttpError', async () => {
            const stop = badRequest('No redirects to there');
            await expect(
                api.get(redirectUrl(301), { redirects: 1, beforeRedirect: (...args) => args[5](stop) })
            ).rejects.toBe(stop);
        });

        it('next(err) with a plain Error rejects with a 500 keeping it as cause', async () => {
            const stop = new Error('not today');
            const err = await api
                .get(redirectUrl(301), { redirects: 1, beforeRedirect: (...args) => args[5](stop) })
                .catch((e: unknown) => e);
            expect(err).toMatchObject({ message: 'Redirect stopped: not today', output: { statusCode: 500 } });
            expect((err as Error).cause).toBe(stop);
        });

        it('a throwing or rejecting beforeRedirect stops the redirect', async () => {
            await expect(
                api.get(redirectUrl(301), {
                    redirects: 1,
                    beforeRedirect: () => {
                        throw new Error('sync');
                    }
                })
            ).rejects.toThrow('Redirect stopped: sync');
            await expect(
                api.get(redirectUrl(301), {
                    redirects: 1,
                    beforeRedirect: () => {
                        throw 'a string';
                    }
                })
            ).rejects.toThrow('Redirect stopped: a string');
            await expect(
                api.get(redirectUrl(301), {
                    redirects: 1,
                    beforeRedirect: async () => {
                        throw new Error('async');
                    }
                })
            ).rejects.toThrow('Redirect stopped: async');
        });

        it('an async beforeRedirect may call next later; a second call is ignored', async () => {
            const { payload } = await api.get<Echo>(redirectUrl(301), {
                redirects: 1,
                json: true,
                beforeRedirect: async (...args) => {
                    await new Promise((resolve) => setTimeout(resolve, 5));
                    args[5]();
                    args[5](new Error('too late'));
                }
            });
            expect(payload.url).toBe('/target');
        });

        it('changes are checked like the caller options', async () => {
            await expect(
                api.get(redirectUrl(301), {
                    redirects: 1,
                    beforeRedirect: (_m, _s, _l, _h, options, next) => {
                        options.headers['x-bad'] = 'a\r\nInjected: yes';
                        next();
                    }
                })
            ).rejects.toThrow(/headers\.x-bad must/);
            await expect(
                api.get(redirectUrl(301), {
                    redirects: 1,
                    beforeRedirect: (_m, _s, _l, _h, options, next) => {
                        options.timeout = -1;
                        next();
                    }
                })
            ).rejects.toThrow(/Option timeout/);
        });
    });

    describe('redirected', () => {
        it('is called with the status, the location and the new request', async () => {
            const calls: Array<[number, string, ClientRequest]> = [];
            // Over HTTP/1.1 on the network, where the new request is a ClientRequest.
            const promise = client.request('GET', redirectUrl(308, '/target', server.url), {
                redirects: 1,
                redirected: (statusCode, location, req) => calls.push([statusCode, location, req])
            });
            const res = await promise;
            res.resume();
            expect(calls).toHaveLength(1);
            const [statusCode, location, req] = calls[0]!;
            expect(statusCode).toBe(308);
            expect(location).toBe(`${server.url}/target`);
            expect(req).toBeInstanceOf(ClientRequest);
            expect(req).not.toBe(promise.req);
            expect((res as typeof res & { req: ClientRequest }).req).toBe(req);
        });

        it("a 3xx's small body of declared length is read to its end: its connection serves the next hops", async () => {
            const sockets = new Set<object>();
            const keptAlive = await startHttp((req, res) => {
                sockets.add(req.socket);
                if (req.url === '/moved') {
                    res.writeHead(301, { location: '/target', 'content-length': 8 }).end('Moved...');
                    return;
                }

                res.end('target');
            });
            try {
                for (let call = 0; call < 4; call++) {
                    expect(String((await client.get(`${keptAlive.url}/moved`, { redirects: 1 })).payload)).toBe(
                        'target'
                    );
                }

                // Destroyed, each 3xx took its connection with it: a new one for every hop after it.
                expect(sockets.size).toBeLessThanOrEqual(2);
            } finally {
                await keptAlive.close();
            }
        });

        it('a throwing redirected callback rejects with 500', async () => {
            await expect(
                api.get(redirectUrl(301), {
                    redirects: 1,
                    redirected: () => {
                        throw new Error('oops');
                    }
                })
            ).rejects.toMatchObject({ message: 'The redirected callback threw', output: { statusCode: 500 } });
        });
    });

    describe('failures', () => {
        it('the errors that end a chain carry its redirect responses in data, as { method, url }', async () => {
            const err = (await api
                .get(`${origin}/chain/3`, { redirects: 2 })
                .catch((error: { data: unknown }) => error)) as { data: unknown };
            expect(err.data).toEqual([
                { method: 'GET', url: `${origin}/chain/3` },
                { method: 'GET', url: `${origin}/chain/2` },
                { method: 'GET', url: `${origin}/chain/1` }
            ]);
            const missing = (await api
                .get(`${origin}/redirect/302`, { redirects: 1 })
                .catch((error: { data: unknown }) => error)) as { data: unknown };
            expect(missing.data).toEqual([{ method: 'GET', url: `${origin}/redirect/302` }]);
        });

        it('rejects with 502 Maximum redirections reached past the limit', async () => {
            await expect(api.get(`${origin}/chain/3`, { redirects: 2 })).rejects.toMatchObject({
                message: 'Maximum redirections reached',
                output: { statusCode: 502 }
            });
            await expect(api.get(redirectUrl(301), { redirects: 0 })).rejects.toThrow('Maximum redirections reached');
        });

        it('rejects a redirect without location with 502', async () => {
            await expect(api.get(`${origin}/redirect/302`, { redirects: 1 })).rejects.toMatchObject({
                message: 'Received redirection without location',
                output: { statusCode: 502 }
            });
        });

        it('rejects an unparsable or non-http location with 502 Invalid redirect', async () => {
            await expect(api.get(redirectUrl(301, 'http://[bad'), { redirects: 1 })).rejects.toMatchObject({
                message: expect.stringMatching(/^Invalid redirect/),
                output: { statusCode: 502 }
            });
            await expect(api.get(redirectUrl(301, 'file:///etc/passwd'), { redirects: 1 })).rejects.toThrow(
                'Invalid redirect: unsupported protocol file:'
            );
        });
    });

    describe('timeout bounds the whole request, redirects included', () => {
        it('a chain of redirects each faster than timeout, slower all together, rejects with 504', async () => {
            const events = api.defaults({ events: true });
            const reported: unknown[] = [];
            events.events!.on('response', (err) => reported.push(err?.output.statusCode ?? 'ok'));
            const err = await events
                .get(`${origin}/slow-chain/5`, { redirects: 5, timeout: 400 })
                .catch((error: unknown) => error);
            expect(err).toMatchObject({ message: 'Client request timeout', output: { statusCode: 504 } });
            expect((err as { data: { code: string } }).data.code).toBe('ETIMEDOUT');
            // The hop under way when the time ran out is reported with the 504.
            expect(reported.at(-1)).toBe(504);
            expect(reported.slice(0, -1).every((status) => status === 'ok')).toBe(true);
        });

        it('a beforeRedirect that never calls next rejects with 504 once the timeout elapses', async () => {
            const err = await api
                .get(`${origin}/chain/1`, { redirects: 1, timeout: 100, beforeRedirect: () => {} })
                .catch((error: unknown) => error);
            expect(err).toMatchObject({ message: 'Client request timeout', output: { statusCode: 504 } });
        });

        it('the timer stops with the last response: reading the body is not bounded by it', async () => {
            // A timeout that three round trips meet even on a loaded machine, whose loop can stall past a
            // tight one; the landing route holds its body past it (its hold starts after the timer), so the
            // read is under way when the timer would fire.
            const timeout = 1000;
            const started = performance.now();
            const res = await api.request('GET', `${origin}/held-chain/2`, { redirects: 2, timeout });
            expect(String(await api.read<Buffer>(res))).toBe('held body');
            expect(performance.now() - started).toBeGreaterThan(timeout);
        });
    });
});
