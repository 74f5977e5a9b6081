import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, client, isHttp2Request } from '../../src/client/index.js';
import { MockNetwork, MockNotMatchedError } from '../../src/testing/index.js';
import { startHttp, type TestServer } from '../client/helpers.js';
import { rejection } from '../client/wire/http2/settling.js';

/**
 * tracewire/testing's mock origins (docs/testing.md): how a mock is installed and removed, what an
 * interceptor matches and answers, and what a request no interceptor answers fails with.
 */

const origin = 'https://api.test';
let mocks: MockNetwork[] = [];
let servers: TestServer[] = [];

function mocked(): { mock: MockNetwork; api: Client } {
    const mock = new MockNetwork();
    mocks.push(mock);
    return { mock, api: new Client().defaults({ mock }) };
}

afterEach(async () => {
    for (const mock of mocks) {
        mock.close();
    }

    mocks = [];
    for (const server of servers) {
        await server.close();
    }

    servers = [];
});

async function server(): Promise<TestServer> {
    const started = await startHttp((req, res) => res.end(`network ${req.url}`));
    servers.push(started);
    return started;
}

describe('installing a mock', () => {
    it('per client: the client given it (and the clients derived from it) use it, others the network', async () => {
        const real = await server();
        const { mock, api } = mocked();
        mock.origin(real.url).get('/a').reply(200, 'mocked').times(2);
        expect(String((await api.get(`${real.url}/a`)).payload)).toBe('mocked');
        expect(String((await api.defaults({ headers: { 'x-derived': '1' } }).get(`${real.url}/a`)).payload)).toBe(
            'mocked'
        );
        expect(String((await new Client().get(`${real.url}/a`)).payload)).toBe('network /a');
        mock.assertNoPending();
    });

    it('for the process: the root client and the clients derived from it before and after; uninstall() gives them the network back', async () => {
        const real = await server();
        const derivedBefore = client.defaults({ headers: { 'x-before': '1' } });
        const mock = new MockNetwork().install();
        mocks.push(mock);
        mock.origin(real.url).get('/a').reply(200, 'mocked').persist();
        expect(String((await client.get(`${real.url}/a`)).payload)).toBe('mocked');
        expect(String((await derivedBefore.get(`${real.url}/a`)).payload)).toBe('mocked');
        expect(String((await client.defaults({ timeout: 1000 }).get(`${real.url}/a`)).payload)).toBe('mocked');
        mock.uninstall();
        expect(String((await client.get(`${real.url}/a`)).payload)).toBe('network /a');
        expect(mock.requests.map((request) => request.headers['x-before'])).toEqual([undefined, '1', undefined]);
    });

    it("a client's own mock wins over the process's", async () => {
        const installed = new MockNetwork().install();
        mocks.push(installed);
        installed.origin(origin).get('/').reply(200, 'process');
        const { mock, api } = mocked();
        mock.origin(origin).get('/').reply(200, 'own');
        expect(String((await api.get(`${origin}/`)).payload)).toBe('own');
        expect(String((await client.get(`${origin}/`)).payload)).toBe('process');
    });

    it('refuses a second mock for the process until the first is uninstalled', () => {
        const first = new MockNetwork().install();
        const second = new MockNetwork();
        mocks.push(first, second);
        expect(() => second.install()).toThrow(/another mock or recorder is installed/);
        first.uninstall();
        expect(() => second.install()).not.toThrow();
    });

    it('close() fails the exchanges under way (the request, or its body) and leaves nothing running', async () => {
        const { mock, api } = mocked();
        mock.origin(origin).get('/slow').reply(200, 'late').delay(60_000);
        mock.origin(origin).get('/body').reply(200, 'late body').delay({ body: 60_000 });
        const slow = api.get(`${origin}/slow`);
        const res = await api.request('GET', `${origin}/body`);
        const body = api.read(res);
        await new Promise((resolve) => setTimeout(resolve, 10));
        mock.close();
        const err = await rejection(slow);
        expect([err.output.statusCode, err.message]).toEqual([
            500,
            'The mock network was closed before the exchange ended'
        ]);
        const cut = await rejection(body);
        expect(cut.message).toBe('Payload stream closed prematurely');
    });

    it('the option takes only a mock', async () => {
        expect(() => new Client().defaults({ mock: {} as never })).toThrow(
            'Option mock must be a MockNetwork or a Recorder of tracewire/testing'
        );
    });
});

describe('matching', () => {
    it('method, path (string, RegExp, function), query and headers; the first interceptor that matches answers', async () => {
        const { mock, api } = mocked();
        const o = mock.origin(origin);
        o.get('/users', { query: { role: 'admin' } }).reply(200, 'admins');
        o.get('/users').reply(200, 'all users');
        o.get(/^\/users\/\d+$/).reply(200, 'one user');
        o.get((path) => path.startsWith('/fn/')).reply(200, 'function');
        o.get('/exact?b=2&a=1').reply(200, 'exact query');
        o.delete('/users/1', { headers: { authorization: /^Bearer / } }).reply(204);
        const text = async (path: string, options = {}) => String((await api.get(`${origin}${path}`, options)).payload);
        expect(await text('/users?role=admin')).toBe('admins');
        expect(await text('/users?role=guest')).toBe('all users');
        expect(await text('/users/42')).toBe('one user');
        expect(await text('/fn/x?y=1')).toBe('function');
        expect(await text('/exact?a=1&b=2')).toBe('exact query');
        const deleted = await api.delete(`${origin}/users/1`, { headers: { Authorization: 'Bearer t' } });
        expect(deleted.res.statusCode).toBe(204);
        mock.assertNoPending();
    });

    it('the body: text, JSON, RegExp, function; a request with a body waits for it to be chosen', async () => {
        const { mock, api } = mocked();
        const o = mock.origin(origin);
        o.post('/json', { name: 'ada' }).reply(201, 'json matched');
        o.post('/json').reply(400, 'other json');
        o.post('/text', 'plain').reply(200, 'text matched');
        o.post('/re', /^id=\d+$/).reply(200, 're matched');
        o.post('/fn', (text: string) => text.length === 3).reply(200, 'fn matched');
        const post = async (path: string, payload: unknown) =>
            String((await api.post(`${origin}${path}`, { payload: payload as string })).payload);
        expect(await post('/json', { name: 'ada' })).toBe('json matched');
        await expect(post('/json', { name: 'bob' })).rejects.toMatchObject({ output: { statusCode: 400 } });
        expect(await post('/text', 'plain')).toBe('text matched');
        expect(await post('/re', 'id=12')).toBe('re matched');
        expect(await post('/fn', Readable.from(['a', 'bc']))).toBe('fn matched');
        mock.assertNoPending();
    });

    it('times(n) and persist(); assertNoPending() lists what was not called as often as it said', async () => {
        const { mock, api } = mocked();
        const o = mock.origin(origin);
        o.get('/twice').reply(200, 'ok').times(2);
        o.get('/always').reply(200, 'ok').persist();
        o.post('/never').reply(201);
        await api.get(`${origin}/twice`);
        for (let i = 0; i < 3; i++) {
            await api.get(`${origin}/always`);
        }

        expect(mock.pending()).toEqual([
            'GET https://api.test/twice (reply; called 1 of 2×)',
            'POST https://api.test/never (reply; called 0 of 1×)'
        ]);
        expect(() => mock.assertNoPending()).toThrow(
            '2 mocked replies were not used:\n  - GET https://api.test/twice (reply; called 1 of 2×)\n  - POST https://api.test/never (reply; called 0 of 1×)'
        );
        await api.get(`${origin}/twice`);
        await api.post(`${origin}/never`);
        expect(() => mock.assertNoPending()).not.toThrow();
    });

    it('an unmatched request fails with a 500 naming it and the closest interceptor, and what differs', async () => {
        const { mock, api } = mocked();
        mock.origin(origin).get('/users/1').reply(200, 'one');
        mock.origin('https://other.test').post('/users/1').reply(200, 'other');
        const err = await rejection(api.get(`${origin}/users/2?x=1`, { http2: true }));
        expect(err.output.statusCode).toBe(500);
        expect(err.message).toBe(
            'No mocked reply for GET https://api.test/users/2?x=1 (HTTP/2): the closest interceptor is GET https://api.test/users/1 (reply; called 0 of 1×): path /users/2?x=1 is not /users/1'
        );
        expect(err.cause).toBeInstanceOf(MockNotMatchedError);
        expect((err.cause as MockNotMatchedError).code).toBe('ERR_MOCK_NOT_MATCHED');
        expect(mock.unmatched.map((miss) => miss.request.url)).toEqual(['https://api.test/users/2?x=1']);
        await api.get(`${origin}/users/1`);
        const used = await rejection(api.get(`${origin}/users/1`));
        expect(used.message).toContain('(reply; called 1 of 1×): it was used up (called 1×)');
        const posted = await rejection(api.post(`${origin}/users/1`, { payload: { a: 1 } }));
        expect(posted.message).toBe(
            'No mocked reply for POST https://api.test/users/1 (HTTP/1.1, 7-byte body): the closest interceptor is GET https://api.test/users/1 (reply; called 1 of 1×): method POST is not GET; it was used up (called 1×)'
        );
    });

    it('with no interceptor at all, says so; a request is never retried for it', async () => {
        const { mock, api } = mocked();
        const err = await rejection(api.get(`${origin}/`, { retry: true }));
        expect(err.message).toBe('No mocked reply for GET https://api.test/ (HTTP/1.1): the mock has no interceptor');
        expect(mock.requests).toHaveLength(1);
    });

    it('allowNetwork(): the unmatched requests to that origin go to the network, the matched ones are mocked', async () => {
        const real = await server();
        const { mock, api } = mocked();
        mock.allowNetwork(real.url);
        mock.origin(real.url).get('/mocked').reply(200, 'mocked');
        expect(String((await api.get(`${real.url}/mocked`)).payload)).toBe('mocked');
        expect(String((await api.get(`${real.url}/other`)).payload)).toBe('network /other');
        expect(String((await api.get(`${real.url}/mocked`)).payload)).toBe('network /mocked');
        const err = await rejection(api.get(`${origin}/`));
        expect(err.cause).toBeInstanceOf(MockNotMatchedError);
    });

    it('checks what it is given when an interceptor is made', () => {
        const mock = new MockNetwork();
        expect(() => mock.origin('https://api.test/base')).toThrow(/scheme, host and port alone/);
        expect(() => mock.origin('not a url')).toThrow(/must be a URL/);
        expect(() => mock.origin(origin).get('/').reply(42)).toThrow(/status must be an integer from 100 to 999/);
        expect(() => mock.origin(origin).get('/').reply(200, 'x', { 'bad name': 'x' })).toThrow(/Header name/);
        expect(() => mock.origin('http://api.test').get('/').fault('tls')).toThrow(/needs an https origin/);
        expect(() => mock.origin(origin).get('/').reply(200).times(0)).toThrow(/positive integer/);
        expect(() =>
            mock
                .origin(origin)
                .get('/')
                .reply(200, Readable.from(['x']))
                .persist()
        ).toThrow(/sent once/);
        expect(() => mock.origin(origin).get('/').fault('connection-reset').cutAfter(1)).toThrow(
            /call reply\(\) first/
        );
        const answered = mock.origin(origin).get('/');
        answered.reply(200);
        expect(() => answered.fault('connection-reset')).toThrow(/already has its answer/);
    });
});

describe('replies', () => {
    it('a JSON value with its content-type and length; a string; bytes; a repeated header', async () => {
        const { mock, api } = mocked();
        const o = mock.origin(origin);
        o.get('/json').reply(200, { id: 1, tags: ['a'] });
        o.get('/text').reply(200, 'hello', { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] });
        o.get('/bytes').reply(200, new Uint8Array([1, 2, 3]));
        const json = await api.get(`${origin}/json`, { json: true });
        expect(json.payload).toEqual({ id: 1, tags: ['a'] });
        const { date, ...fields } = json.res.headers;
        expect(fields).toEqual({ 'content-type': 'application/json', 'content-length': '21' });
        expect(Math.abs(Date.parse(date as string) - Date.now())).toBeLessThan(2000);
        const text = await api.get(`${origin}/text`);
        expect(text.res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
        expect(text.res.rawHeaders).toEqual([
            'content-type',
            'text/plain',
            'set-cookie',
            'a=1',
            'set-cookie',
            'b=2',
            'date',
            text.res.headers.date,
            'content-length',
            '5'
        ]);
        expect([text.res.statusMessage, text.res.httpVersion]).toEqual(['OK', '1.1']);
        expect([...((await api.get(`${origin}/bytes`)).payload as Buffer)]).toEqual([1, 2, 3]);
    });

    it('a function of the request (async), given its method, URL, headers and body', async () => {
        const { mock, api } = mocked();
        mock.origin(origin)
            .post('/echo')
            .reply(async (request) => ({
                status: 201,
                headers: { 'x-method': request.method },
                body: {
                    got: request.json(),
                    path: request.path,
                    agent: request.headers['x-agent'],
                    version: request.httpVersion
                }
            }));
        const { res, payload } = await api.post(`${origin}/echo?q=1`, {
            payload: { n: 1 },
            headers: { 'x-agent': 'test' },
            json: true,
            http2: true
        });
        expect([res.statusCode, res.headers['x-method'], res.httpVersion]).toEqual([201, 'POST', '2.0']);
        expect(payload).toEqual({ got: { n: 1 }, path: '/echo?q=1', agent: 'test', version: '2.0' });
    });

    it('a stream, chunk by chunk (chunked over HTTP/1.1), counted by onDownloadProgress', async () => {
        const { mock, api } = mocked();
        mock.origin(origin)
            .get('/stream')
            .reply(() => ({
                status: 200,
                body: Readable.from([Buffer.from('ab'), Buffer.from('cd'), Buffer.from('e')])
            }));
        const seen: number[] = [];
        const { res, payload } = await api.get(`${origin}/stream`, {
            onDownloadProgress: ({ transferred }) => seen.push(transferred)
        });
        expect(String(payload)).toBe('abcde');
        expect(res.headers['transfer-encoding']).toBe('chunked');
        expect(seen.at(-1)).toBe(5);
        expect(seen.length).toBeGreaterThan(1);
    });

    it('a HEAD, a 204 and a 304 have no body; over HTTP/2 the fields of a connection are left out', async () => {
        const { mock, api } = mocked();
        const o = mock.origin(origin);
        o.head('/').reply(200, 'not sent');
        o.get('/empty').reply(204, 'not sent');
        o.get('/h2').reply(200, 'x', { connection: 'keep-alive', 'X-Case': 'kept' });
        const head = await api.request('HEAD', `${origin}/`);
        // As a Node.js server's: the length of a body it does not send is the reply's to give.
        expect([head.headers['content-length'], String(await api.read(head))]).toEqual([undefined, '']);
        const empty = await api.get(`${origin}/empty`);
        expect([empty.res.headers['content-length'], String(empty.payload)]).toEqual([undefined, '']);
        const h2 = await api.get(`${origin}/h2`, { http2: true });
        expect(h2.res.rawHeaders).toEqual(['x-case', 'kept', 'date', h2.res.headers.date, 'content-length', '1']);
    });

    it('a reply function that throws fails the request with a 500 naming it', async () => {
        const { mock, api } = mocked();
        mock.origin(origin)
            .get('/')
            .reply(() => {
                throw new Error('boom');
            });
        mock.origin(origin)
            .get('/bad')
            .reply(() => ({ status: 1 }));
        const err = await rejection(api.get(`${origin}/`));
        expect([err.output.statusCode, err.message]).toEqual([500, "The mock's reply function failed: boom"]);
        const bad = await rejection(api.get(`${origin}/bad`));
        expect(bad.message).toMatch(/status must be an integer from 100 to 999, got 1/);
    });

    it('the request object: HTTP/1.1 with the members of a ClientRequest, HTTP/2 an Http2Request', async () => {
        const { mock, api } = mocked();
        mock.origin('https://user:pw@api.test'.replace('user:pw@', '')).get('/').reply(200, 'ok').times(2);
        const first = api.request('GET', 'https://user:pw@api.test/');
        const req = first.req as NonNullable<typeof first.req>;
        expect([req.method, req.path, req.host, req.protocol, isHttp2Request(req)]).toEqual([
            'GET',
            '/',
            'api.test',
            'https:',
            false
        ]);
        expect(req.getHeader('host')).toBe('api.test');
        expect(req.getHeader('authorization')).toBe(`Basic ${Buffer.from('user:pw').toString('base64')}`);
        await api.read(await first);
        const second = api.request('GET', `${origin}/`, { http2: true });
        await new Promise((resolve) => setImmediate(resolve));
        expect(isHttp2Request(second.req)).toBe(true);
        await api.read(await second);
        expect(mock.requests.map((request) => request.headers.authorization !== undefined)).toEqual([true, false]);
    });

    it('a header Node.js refuses fails the request as it is made, over HTTP/1.1 as over HTTP/2, and nothing is received', async () => {
        const { mock, api } = mocked();
        mock.origin(origin).get('/').reply(200, 'ok').persist();
        const traced = api.defaults({ events: true });
        let header: [string, unknown] = ['x-ok', 'ok'];
        traced.events!.on('preRequest', (uri) => {
            // Past the options' own checks: as a listener may set it.
            (uri.headers as Record<string, unknown>)[header[0]] = header[1];
        });
        const refused: Array<[[string, unknown], string, string]> = [
            [['x-bad', 'a\r\nb'], 'Invalid character in header content ["x-bad"]', 'ERR_INVALID_CHAR'],
            [['x-list', ['a', 'b\n']], 'Invalid character in header content ["x-list"]', 'ERR_INVALID_CHAR'],
            [['x a', 'v'], 'Header name must be a valid HTTP token ["x a"]', 'ERR_INVALID_HTTP_TOKEN'],
            [['x-gone', undefined], 'Invalid value "undefined" for header "x-gone"', 'ERR_HTTP_INVALID_HEADER_VALUE']
        ];
        for (const http2 of [false, true]) {
            for (const [given, message, code] of refused) {
                header = given;
                const err = await rejection(traced.get(`${origin}/`, { http2 }));
                expect(err.message, `${given[0]} http2 ${http2}`).toBe(`Request could not be created: ${message}`);
                expect((err.cause as { code: string }).code).toBe(code);
            }
        }

        expect(mock.requests).toHaveLength(0);
        header = ['x-ok', 'ok'];
        expect(String((await traced.get(`${origin}/`)).payload)).toBe('ok');
    });
});

describe('delays', () => {
    it('before the headers: the timeout and the response phase bound run out as on the network', async () => {
        const { mock, api } = mocked();
        mock.origin(origin).get('/slow').reply(200, 'late').delay(500).persist();
        const timedOut = await rejection(api.get(`${origin}/slow`, { timeout: 50 }));
        expect([timedOut.output.statusCode, timedOut.message]).toEqual([504, 'Client request timeout']);
        const phase = await rejection(api.get(`${origin}/slow`, { timeouts: { response: 50 } }));
        expect((phase.data as { phase?: string }).phase).toBe('response');
    });

    it('before the body: the read timeout runs out, and the download phase is timed', async () => {
        const { mock, api } = mocked();
        mock.origin(origin).get('/stall').reply(200, 'late body').delay({ body: 300 }).times(2);
        const err = await rejection(api.get(`${origin}/stall`, { timeout: 100 }));
        expect([err.output.statusCode, err.message]).toEqual([408, 'Client read timeout']);
        const { res } = await api.get(`${origin}/stall`);
        expect(res.timings.phases.download).toBeGreaterThanOrEqual(250);
    });
});

describe('faults', () => {
    it('a refused connection reads not a byte of a stream body', async () => {
        const { mock, api } = mocked();
        mock.origin(origin).post('/').fault('connection-refused');
        let read = false;
        const payload = new Readable({
            read() {
                read = true;
                this.push(null);
            }
        });
        const err = await rejection(api.post(`${origin}/`, { payload }));
        expect([err.output.statusCode, (err.data as { code?: string }).code]).toEqual([502, 'ECONNREFUSED']);
        expect(err.message).toBe('Client request error: connect ECONNREFUSED api.test:443');
        expect(read).toBe(false);
    });

    it("a TLS fault does not apply to a request that verifies no certificate; HTTP/2's faults not to HTTP/1.1", async () => {
        const { mock, api } = mocked();
        mock.origin(origin).get('/tls').fault('tls');
        mock.origin(origin).get('/goaway').fault('goaway');
        const unverified = await rejection(api.get(`${origin}/tls`, { rejectUnauthorized: false }));
        expect(unverified.message).toContain(
            'its TLS fault is a certificate the request does not verify (rejectUnauthorized: false)'
        );
        const verified = await rejection(api.get(`${origin}/tls`));
        // Node's own wording, with the hint on the system's CAs that Node 24 and later add (parity.test.ts holds it to a real handshake).
        expect([verified.message, (verified.data as { code?: string }).code]).toEqual([
            expect.stringMatching(
                /^Client request error: self-signed certificate(; if the root CA is installed locally, .*)?$/
            ),
            'DEPTH_ZERO_SELF_SIGNED_CERT'
        ]);
        const http1 = await rejection(api.get(`${origin}/goaway`));
        expect(http1.message).toContain("its goaway fault is HTTP/2's, and the request went over HTTP/1.1");
    });

    it("docs/testing.md's HTTP/2 example: a POST left unprocessed by a GOAWAY is sent again on a new session", async () => {
        const { mock } = mocked();
        const api = new Client().defaults({ mock, http2: true, events: true });
        const reasons: unknown[] = [];
        api.events?.on('preRequest', (uri) => reasons.push(uri.resendReason));
        const h2 = mock.origin('https://push.example.com');
        h2.post('/send').fault('goaway');
        h2.post('/send').reply(202, { queued: true });
        const { res, payload } = await api.post('https://push.example.com/send', { payload: { to: 'x' }, json: true });
        expect([res.statusCode, payload, res.httpVersion]).toEqual([202, { queued: true }, '2.0']);
        expect(reasons).toEqual([undefined, 'http2-goaway']);
        expect(mock.requests.map((request) => request.text())).toEqual(['{"to":"x"}', '{"to":"x"}']);
    });

    it('an origin that answers ALPN with http/1.1 speaks HTTP/1.1 to a request offering HTTP/2', async () => {
        const { mock, api } = mocked();
        mock.origin(origin, { http2: false }).get('/').reply(200, 'one');
        const { res } = await api.get(`${origin}/`, { http2: true });
        expect(res.httpVersion).toBe('1.1');
    });
});
