import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { MockNotMatchedError, type RecordedExchange, Recorder, replayFrom } from '../../src/testing/index.js';
import { body, startHttps, type TestServer } from '../client/helpers.js';
import { type Http2TestServer, startHttp2 } from '../client/wire/http2/servers.js';
import { rejection } from '../client/wire/http2/settling.js';
import { outcomeOf } from './parity/outcome.js';

/**
 * Record and replay (docs/testing.md, "Record and replay"): a Recorder sends to the real origin and
 * writes each exchange as a line of JSON, redacted; replayFrom() answers the same calls from the
 * file, as the origin did, without the network, and fails a request the file does not hold.
 */

let dir: string;
let file: string;
let cleanups: (() => unknown)[] = [];
beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tracewire-recording-'));
    file = join(dir, 'session.jsonl');
});

afterEach(async () => {
    for (const cleanup of cleanups.reverse()) {
        await cleanup();
    }

    cleanups = [];
    rmSync(dir, { recursive: true, force: true });
});

/** An origin that answers as an upstream might: JSON with a cookie, an echo, gzip, a 404, a body cut short. */
async function https1(): Promise<TestServer> {
    const server = await startHttps(async (req, res) => {
        const received = await body(req);
        if (req.url === '/user?id=1') {
            res.setHeader('set-cookie', ['session=secret; HttpOnly']);
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify({ id: 1, auth: req.headers.authorization !== undefined }));
        } else if (req.url === '/echo') {
            res.end(`${req.method} ${received}`);
        } else if (req.url === '/gz') {
            res.setHeader('content-encoding', 'gzip');
            res.end(gzipSync('zipped '.repeat(10)));
        } else if (req.url === '/cut') {
            res.writeHead(200, { 'content-length': '50' });
            res.write('x'.repeat(5));
            setTimeout(() => req.socket.destroy(), 20);
        } else {
            res.statusCode = 404;
            res.end('not here');
        }
    });
    cleanups.push(() => server.close());
    return server;
}

/** The calls of the session, and what the client reported of each. */
async function session(api: Client, origin: string) {
    return [
        await outcomeOf(
            api.get(`${origin}/user?id=1`, {
                json: true,
                headers: { authorization: 'Bearer token', cookie: 'a=b', 'x-request': 'one' }
            })
        ),
        await outcomeOf(api.post(`${origin}/echo`, { payload: { hello: 'world' } })),
        await outcomeOf(api.get(`${origin}/gz`, { gunzip: true })),
        await outcomeOf(api.get(`${origin}/missing`)),
        await outcomeOf(api.get(`${origin}/cut`))
    ];
}

function lines(): RecordedExchange[] {
    return readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as RecordedExchange);
}

function dateless(outcomes: Awaited<ReturnType<typeof session>>) {
    return structuredClone(outcomes).map(({ ok, err }) => ({
        err,
        ok: ok && { ...ok, headers: { ...ok.headers, date: 'DATE' } as Record<string, unknown> }
    }));
}

describe('recording', () => {
    it('writes one line of JSON per exchange: the request and the response as they went, authorization, cookie and set-cookie redacted', async () => {
        const server = await https1();
        const recorder = new Recorder(file);
        const api = new Client().defaults({ mock: recorder, rejectUnauthorized: false });
        await session(api, server.url);
        recorder.close();
        expect(recorder.recorded).toBe(5);
        const recorded = lines();
        const [user, echo, gz, missing, cut] = recorded as [
            RecordedExchange,
            RecordedExchange,
            RecordedExchange,
            RecordedExchange,
            RecordedExchange
        ];
        expect(user.request).toEqual({
            method: 'GET',
            url: `${server.url}/user?id=1`,
            // As it went: the helper reading JSON asks for problem details too (docs/client.md).
            headers: {
                accept: 'application/json, application/problem+json, */*;q=0.8',
                authorization: '[REDACTED]',
                cookie: '[REDACTED]',
                'x-request': 'one'
            }
        });
        expect(user.response).toMatchObject({
            status: 200,
            httpVersion: '1.1',
            headers: { 'set-cookie': '[REDACTED]', 'content-type': 'application/json' },
            body: '{"id":1,"auth":true}'
        });
        expect(echo.request).toMatchObject({ method: 'POST', body: '{"hello":"world"}' });
        expect(echo.response?.body).toBe('POST {"hello":"world"}');
        expect(Buffer.from(gz.response?.bodyBase64 as string, 'base64')).toEqual(gzipSync('zipped '.repeat(10)));
        expect(missing.response).toMatchObject({ status: 404, body: 'not here' });
        expect(cut.response).toMatchObject({ status: 200, body: 'xxxxx', cut: true });
        expect(readFileSync(file, 'utf8')).not.toContain('secret');
        expect(readFileSync(file, 'utf8')).not.toContain('token');
    });

    it('the headers to redact can be named; a refused connection is recorded as its fault; over HTTP/2 as well', async () => {
        const h2: Http2TestServer = await startHttp2((req, res) => res.end(`h2 ${req.url}`));
        cleanups.push(() => h2.close());
        const recorder = new Recorder(file, { redact: ['X-Api-Key'] });
        cleanups.push(() => recorder.close());
        const api = new Client().defaults({ mock: recorder, rejectUnauthorized: false, http2: true });
        await api.get(`${h2.url}/a`, { headers: { 'x-api-key': 'k', authorization: 'kept' } });
        const closed = await startHttps(() => {});
        await closed.close();
        await rejection(api.get(`${closed.url}/`));
        const [a, refused] = lines() as [RecordedExchange, RecordedExchange];
        expect(a.request.headers).toEqual({ 'x-api-key': '[REDACTED]', authorization: 'kept' });
        expect(a.response).toMatchObject({ status: 200, httpVersion: '2.0', body: 'h2 /a' });
        expect(refused).toEqual({
            request: { method: 'GET', url: `${closed.url}/`, headers: {} },
            fault: 'connection-refused'
        });
    });

    it('installed for the process, records the root client too', async () => {
        const server = await https1();
        const recorder = new Recorder(file).install();
        cleanups.push(() => recorder.close());
        const { client } = await import('../../src/client/index.js');
        await client.get(`${server.url}/missing`, { rejectUnauthorized: false }).catch(() => undefined);
        recorder.uninstall();
        expect(lines().map((line) => line.response?.status)).toEqual([404]);
    });
});

describe('replaying', () => {
    it('answers the recorded calls as the origin did, without it, over HTTP/1.1 and HTTP/2 alike', async () => {
        const server = await https1();
        const recorder = new Recorder(file);
        const recorded = await session(
            new Client().defaults({ mock: recorder, rejectUnauthorized: false }),
            server.url
        );
        recorder.close();
        await server.close();
        for (const http2Option of [false, true]) {
            const mock = replayFrom(file);
            cleanups.push(() => mock.close());
            const replayed = await session(
                new Client().defaults({ mock, rejectUnauthorized: false, http2: http2Option }),
                server.url
            );
            const expected = dateless(recorded);
            // What was recorded redacted is replayed so.
            (expected[0]?.ok?.headers as Record<string, unknown>)['set-cookie'] = ['[REDACTED]'];
            if (http2Option) {
                // The body cut short fails as an HTTP/2 stream's does when its connection drops.
                Object.assign(expected[4]?.err ?? {}, {
                    cause: 'The HTTP/2 session closed before the response ended',
                    causeCode: 'ERR_HTTP2_STREAM_CLOSED'
                });
                for (const outcome of expected) {
                    if (outcome.ok !== undefined) {
                        // Over HTTP/2: no fields of a connection, and the protocol's own version.
                        const {
                            connection: _c,
                            'keep-alive': _k,
                            ...headers
                        } = outcome.ok.headers as Record<string, unknown>;
                        outcome.ok = { ...outcome.ok, headers, httpVersion: '2.0' };
                    }
                }
            }

            expect(dateless(replayed)).toEqual(expected);
            mock.assertNoPending();
        }
    });

    it('fails a request the recording does not hold, naming the closest recorded one; lists what was not replayed', async () => {
        const lines = [
            {
                request: { method: 'GET', url: 'https://api.test/a?x=1', headers: {} },
                response: { status: 200, httpVersion: '1.1', headers: {}, body: 'a' }
            },
            {
                request: { method: 'POST', url: 'https://api.test/b', headers: {}, body: 'one' },
                response: { status: 201, httpVersion: '1.1', headers: {} }
            },
            { request: { method: 'GET', url: 'https://api.test/c', headers: {} }, fault: 'connection-reset' }
        ];
        writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n'));
        const mock = replayFrom(file);
        cleanups.push(() => mock.close());
        const api = new Client().defaults({ mock });
        const unknown = await rejection(api.get('https://api.test/a'));
        expect(unknown.cause).toBeInstanceOf(MockNotMatchedError);
        expect(unknown.message).toContain('the closest interceptor is GET https://api.test/a?x=1');
        const otherBody = await rejection(api.post('https://api.test/b', { payload: 'two' }));
        expect(otherBody.message).toContain('body "two" is not "one"');
        expect(String((await api.get('https://api.test/a?x=1')).payload)).toBe('a');
        // On a new connection: a reset on a kept-alive one would be sent again (README "Stale connections").
        const reset = await rejection(new Client().defaults({ mock }).get('https://api.test/c'));
        expect([reset.message, (reset.data as { code?: string }).code]).toEqual([
            'Client request error: socket hang up',
            'ECONNRESET'
        ]);
        expect(() => mock.assertNoPending()).toThrow(/POST https:\/\/api.test\/b\? with body "one"/);
    });

    it('refuses a file that is not a recording, naming the line', () => {
        writeFileSync(
            file,
            '{"request":{"method":"GET","url":"https://a.test/"},"fault":"connection-reset"}\nnot json\n'
        );
        expect(() => replayFrom(file)).toThrow(`${file}:2 is not JSON`);
        writeFileSync(file, '{"request":{"method":"GET","url":"https://a.test/"}}\n');
        expect(() => replayFrom(file)).toThrow(`${file}:1 is not a recorded exchange`);
    });
});
