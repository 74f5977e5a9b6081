import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { constants as http2Constants } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CachedResponse, Client, client, MemoryCacheStore } from '../../../src/client/index.js';
import { MockNetwork } from '../../../src/testing/index.js';
import { settle, startHttp, type TestServer, timerCount } from '../helpers.js';
import { startHttp2 } from '../wire/http2/servers.js';

const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);

// The replies are scripted by a MockNetwork (docs/testing.md): read() decodes, parses, bounds and times them
// above the transport seam as it does a server's. A real server stays for the bodies a connection's end cuts
// short (/cut, /gzip-cut), and a real hapi for a request payload.
const origin = 'http://read.test';
const mock = new MockNetwork();
const api = client.defaults({ mock });

/** Replies to GET `path` with a 200 of `body` and these headers, for every request. */
function route(path: string, headers: Record<string, string | number>, body: string | Buffer): void {
    mock.origin(origin).get(path).reply(200, body, headers).persist();
}

route('/gzip', { 'content-encoding': 'gzip' }, gzipSync(text));
route('/x-gzip', { 'content-encoding': 'x-gzip' }, gzipSync(text));
route('/deflate', { 'content-encoding': 'deflate' }, deflateSync(text));
route('/br', { 'content-encoding': 'br' }, brotliCompressSync(text));
route('/gzip-unlabelled', {}, gzipSync(text));
route('/corrupt-gzip', { 'content-encoding': 'gzip' }, Buffer.from('not gzip at all'));
route('/plain', { 'content-type': 'text/plain' }, text);
route('/json', { 'content-type': 'application/json; charset=utf-8' }, '{"a":1}');
route('/problem', { 'content-type': 'application/problem+json' }, '{"title":"x"}');
route('/json-text', { 'content-type': 'text/plain' }, '[1,2]');
route('/untyped', {}, '{"b":2}');
route('/bad-json', { 'content-type': 'application/json' }, '{"a":');
route('/empty-json', { 'content-type': 'application/json' }, '');
route('/gzip-json', { 'content-encoding': 'gzip', 'content-type': 'application/json' }, gzipSync('{"z":true}'));
route('/big', { 'content-type': 'text/plain' }, 'x'.repeat(5000));
route('/big-declared', { 'content-length': 5000 }, 'x'.repeat(5000));
// 10 MB of zeros compress to about 10 KB: a small response that must not become a large Buffer.
route('/bomb', { 'content-encoding': 'gzip' }, gzipSync(Buffer.alloc(10 * 1024 * 1024)));
// A body of unknown length (chunked), in two pieces.
mock.origin(origin)
    .get('/big-chunked')
    .reply(() => ({
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: Readable.from([Buffer.from('x'.repeat(3000)), Buffer.from('x'.repeat(3000))])
    }))
    .persist();
// The headers and a first piece of the body, and then nothing.
mock.origin(origin)
    .get('/stall')
    .reply(() => {
        const body = new Readable({ read() {} });
        body.push('partial');
        return { status: 200, headers: { 'content-type': 'text/plain' }, body };
    })
    .persist();

let server: TestServer;

beforeAll(async () => {
    server = await startHttp((req, res) => {
        if (req.url === '/gzip-cut') {
            // The headers and a first piece of a gzip body, then a reset: the body never comes whole.
            res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': '1000' });
            res.write(gzipSync(text).subarray(0, 20), () => setTimeout(() => res.socket?.destroy(), 10));
        } else {
            // /cut: a part of the body, then a reset.
            res.writeHead(200, { 'content-length': '1000' });
            res.write('only some of it', () => setTimeout(() => res.socket?.destroy(), 10));
        }
    });
});

afterAll(async () => {
    mock.close();
    await server.close();
});

async function readFrom(path: string, options?: Parameters<typeof client.read>[1]): Promise<unknown> {
    const res = await api.request('GET', `${origin}${path}`);
    return api.read(res, options);
}

describe('2.2 Client read options', () => {
    describe('gunzip', () => {
        it('false (the default) leaves a compressed payload as it is', async () => {
            expect(await readFrom('/gzip')).toEqual(gzipSync(text));
            expect(await readFrom('/gzip', { gunzip: false })).toEqual(gzipSync(text));
        });

        it('true decodes gzip, x-gzip, deflate and br content-encodings', async () => {
            for (const path of ['/gzip', '/x-gzip', '/deflate', '/br']) {
                expect((await readFrom(path, { gunzip: true }))?.toString()).toBe(text);
            }
        });

        it('true leaves a payload without content-encoding as it is', async () => {
            expect(await readFrom('/gzip-unlabelled', { gunzip: true })).toEqual(gzipSync(text));
        });

        it("'force' decodes whatever the content-encoding says", async () => {
            expect((await readFrom('/gzip-unlabelled', { gunzip: 'force' }))?.toString()).toBe(text);
            expect((await readFrom('/br', { gunzip: 'force' }))?.toString()).toBe(text);
        });

        it('a payload that does not decode rejects with 502', async () => {
            await expect(readFrom('/corrupt-gzip', { gunzip: true })).rejects.toMatchObject({
                message: expect.stringMatching(/could not be decompressed/),
                output: { statusCode: 502 }
            });
        });

        it('combines with json', async () => {
            expect(await readFrom('/gzip-json', { gunzip: true, json: true })).toEqual({ z: true });
        });
    });

    describe('json', () => {
        it('false (the default) returns a Buffer', async () => {
            expect(Buffer.isBuffer(await readFrom('/json'))).toBe(true);
            expect(Buffer.isBuffer(await readFrom('/json', { json: false }))).toBe(true);
        });

        it('true parses JSON content-types, +json media types included', async () => {
            expect(await readFrom('/json', { json: true })).toEqual({ a: 1 });
            expect(await readFrom('/problem', { json: true })).toEqual({ title: 'x' });
        });

        it('true returns other content-types as a Buffer', async () => {
            expect((await readFrom('/json-text', { json: true })) as Buffer).toEqual(Buffer.from('[1,2]'));
            expect(Buffer.isBuffer(await readFrom('/untyped', { json: true }))).toBe(true);
        });

        it("'strict' parses JSON and rejects other content-types with 406", async () => {
            expect(await readFrom('/json', { json: 'strict' })).toEqual({ a: 1 });
            await expect(readFrom('/json-text', { json: 'strict' })).rejects.toMatchObject({
                message: expect.stringMatching(/non-JSON content-type \('text\/plain'\)/),
                output: { statusCode: 406 }
            });
            await expect(readFrom('/untyped', { json: 'strict' })).rejects.toMatchObject({
                message: expect.stringMatching(/\(none\)/)
            });
        });

        it("'force' parses whatever the content-type", async () => {
            expect(await readFrom('/json-text', { json: 'force' })).toEqual([1, 2]);
            expect(await readFrom('/untyped', { json: 'force' })).toEqual({ b: 2 });
        });

        it('an empty JSON payload is null', async () => {
            expect(await readFrom('/empty-json', { json: true })).toBeNull();
        });

        it('invalid JSON rejects with 502 carrying the raw payload', async () => {
            const err = await readFrom('/bad-json', { json: true }).catch((e: unknown) => e);
            expect(err).toMatchObject({ output: { statusCode: 502 }, data: { payload: Buffer.from('{"a":') } });
            expect((err as Error).message).toMatch(/Invalid JSON response payload/);
            expect((err as Error).cause).toBeInstanceOf(SyntaxError);
        });
    });

    describe('maxBytes', () => {
        it('allows a payload up to the limit', async () => {
            expect(((await readFrom('/big', { maxBytes: 5000 })) as Buffer).length).toBe(5000);
        });

        it('rejects a payload whose content-length exceeds the limit with 413', async () => {
            await expect(readFrom('/big-declared', { maxBytes: 4999 })).rejects.toMatchObject({
                message: 'Maximum payload size reached (maxBytes 4999)',
                output: { statusCode: 413 }
            });
        });

        it('rejects a chunked payload once it grows past the limit', async () => {
            await expect(readFrom('/big-chunked', { maxBytes: 4000 })).rejects.toMatchObject({
                output: { statusCode: 413 }
            });
        });

        it('counts the decompressed size, so a gzip bomb stops at the limit', async () => {
            const res = await api.request('GET', `${origin}/bomb`, { agent: false });
            await expect(api.read(res, { gunzip: true, maxBytes: 100_000 })).rejects.toMatchObject({
                output: { statusCode: 413 }
            });
            expect(res.destroyed).toBe(true);
        });
    });

    describe('timeout', () => {
        it('rejects with 408 when the payload is not read in time, and clears its timer', async () => {
            const timers = timerCount();
            const res = await api.request('GET', `${origin}/stall`, { agent: false });
            const started = Date.now();
            await expect(api.read(res, { timeout: 50 })).rejects.toMatchObject({
                message: 'Client read timeout',
                output: { statusCode: 408 },
                data: { code: 'ETIMEDOUT' }
            });
            expect(Date.now() - started).toBeGreaterThanOrEqual(45);
            expect(res.destroyed).toBe(true);
            await settle();
            expect(timerCount()).toBeLessThanOrEqual(timers);
        });

        it('clears the timer when the payload is read in time', async () => {
            const timers = timerCount();
            await readFrom('/plain', { timeout: 5000 });
            expect(timerCount()).toBeLessThanOrEqual(timers);
        });
    });

    it('accepts null options', async () => {
        expect((await readFrom('/plain', null))?.toString()).toBe(text);
    });

    it('rejects bad read options, naming the option', async () => {
        const cases: Array<[unknown, RegExp]> = [
            [{ gunzip: 'yes' }, /Option gunzip must be true, false or 'force'/],
            [{ json: 'loose' }, /Option json must be/],
            [{ maxBytes: -1 }, /Option maxBytes/],
            [{ timeout: 'soon' }, /Option timeout/],
            [{ signal: {} }, /Option signal must be an AbortSignal/],
            ['fast', /Read options must be an object/]
        ];
        for (const [options, message] of cases) {
            const res = await api.request('GET', `${origin}/plain`);
            await expect(api.read(res, options as never)).rejects.toThrow(message);
            res.destroy();
        }
    });

    it('a derived client refuses the same bad read options, whatever its defaults', async () => {
        for (const derived of [api.defaults({ events: true }), api.defaults({ timeout: 5000 })]) {
            for (const [options, message] of [
                ['fast', /Read options must be an object/],
                [42, /Read options must be an object/],
                [{ json: 'loose' }, /Option json must be/]
            ] as const) {
                const res = await derived.request('GET', `${origin}/plain`);
                await expect(derived.read(res, options as never)).rejects.toThrow(message);
                res.destroy();
            }
        }
    });
});

describe('2.2 read() reads any readable stream, with or without headers', () => {
    it('a toReadableStream() stream, a Readable of strings and a file stream', async () => {
        expect((await client.read<Buffer>(client.toReadableStream(text))).toString()).toBe(text);
        expect((await client.read<Buffer>(Readable.from(['a', 'b', 'c']))).toString()).toBe('abc');
        const dir = mkdtempSync(join(tmpdir(), 'tracewire-read-'));
        try {
            writeFileSync(join(dir, 'body.txt'), text);
            expect((await client.read<Buffer>(createReadStream(join(dir, 'body.txt')))).toString()).toBe(text);
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });

    it('without headers: json true leaves a Buffer, strict refuses with 406, force parses', async () => {
        const json = () => client.toReadableStream('{"a":1}');
        expect(Buffer.isBuffer(await client.read(json(), { json: true }))).toBe(true);
        await expect(client.read(json(), { json: 'strict' })).rejects.toMatchObject({ output: { statusCode: 406 } });
        expect(await client.read(json(), { json: 'force' })).toEqual({ a: 1 });
    });

    it('with headers given to the stream: content-type and content-encoding apply', async () => {
        const stream = Object.assign(Readable.from([gzipSync('{"a":1}')]), {
            headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }
        });
        expect(await client.read(stream, { json: true, gunzip: true })).toEqual({ a: 1 });
        expect((await client.read<Buffer>(Readable.from([gzipSync(text)]), { gunzip: 'force' })).toString()).toBe(text);
    });

    it('a hapi request payload (server.inject and a real socket)', async () => {
        const server = Hapi.server({ host: '127.0.0.1', port: 0 });
        server.route({
            method: 'POST',
            path: '/',
            options: { payload: { output: 'stream', parse: false } },
            handler: async (request) => client.read(request.payload as Readable, { json: true })
        });
        const injected = await server.inject({
            method: 'POST',
            url: '/',
            payload: '{"via":"inject"}',
            headers: { 'content-type': 'application/json' }
        });
        expect(injected.result).toEqual({ via: 'inject' });
        await server.start();
        try {
            const { payload } = await client.post(`${server.info.uri}/`, { payload: { via: 'socket' }, json: true });
            expect(payload).toEqual({ via: 'socket' });
        } finally {
            await server.stop();
        }
    });

    it('a stream that fails rejects with 500 Payload stream error carrying the error', async () => {
        const failure = new Error('disk gone');
        const stream = new Readable({
            read() {
                this.destroy(failure);
            }
        });
        const err = await client.read(stream).catch((error: unknown) => error);
        expect(err).toMatchObject({ message: 'Payload stream error: disk gone', output: { statusCode: 500 } });
        expect((err as Error).cause).toBe(failure);
    });

    it('a stream failure keeps the stream error as cause and leaves data to the caller', async () => {
        const failure = new Error('gone');
        const stream = new Readable({
            read() {
                this.destroy(failure);
            }
        });
        const err = (await client.read(stream).catch((error: unknown) => error)) as Error & { data: unknown };
        expect(err.cause).toBe(failure);
        expect(err.data).toBeNull();
    });

    it('a stream that closes before its end rejects with 500 Payload stream closed prematurely', async () => {
        const stream = new Readable({ read() {} });
        const reading = client.read(stream);
        stream.push('some');
        setImmediate(() => stream.destroy());
        await expect(reading).rejects.toThrow('Payload stream closed prematurely');
    });

    it('maxBytes stops a stream without headers, and destroys it', async () => {
        const stream = Readable.from([Buffer.alloc(20)]);
        await expect(client.read(stream, { maxBytes: 10 })).rejects.toMatchObject({ output: { statusCode: 413 } });
        expect(stream.destroyed).toBe(true);
    });

    it('anything but a readable stream is refused with a TypeError', async () => {
        for (const value of [undefined, null, 'text', {}, { on() {} }]) {
            const err = await client.read(value as never).catch((error: unknown) => error);
            expect(err).toBeInstanceOf(TypeError);
            expect((err as Error).message).toBe('read() needs a readable stream, such as the response of request()');
        }
    });
});

/** Resolves once `res` has closed: its `error` and `close` are past, before anyone reads it. */
function closed(res: IncomingMessage): Promise<void> {
    // Its error (the reset) is what a reader reports: kept from the process's unhandled errors here.
    res.on('error', () => {});
    return res.closed ? Promise.resolve() : new Promise((resolve) => res.once('close', () => resolve()));
}

/** The call's outcome within `ms`: a reader that never settles shows as 'unsettled', not as a test timeout. */
function within(ms: number, call: Promise<unknown>): Promise<unknown> {
    return Promise.race([
        call.then(
            () => 'resolved',
            (err: unknown) => err
        ),
        new Promise((resolve) => setTimeout(() => resolve('unsettled'), ms))
    ]);
}

describe('2.2 read() of a response that can no longer be read settles', () => {
    it('a response reset after its headers, before read(): 500 Payload stream closed prematurely, as a body cut while read', async () => {
        for (const options of [{}, { gunzip: true }]) {
            const res = await client.request('GET', `${server.url}/gzip-cut`, { agent: false });
            await closed(res);
            expect(res.destroyed).toBe(true);
            const err = await within(1000, client.read(res, options));
            expect(err).toMatchObject({
                message: 'Payload stream closed prematurely',
                output: { statusCode: 500 }
            });
            expect((err as Error).cause).toMatchObject({ code: 'ECONNRESET' });
        }
    });

    it('an HTTP/2 response whose stream was reset after its headers, before read(): the same 500', async () => {
        const h2 = await startHttp2(undefined);
        h2.server.on('stream', (stream) => {
            stream.respond({ ':status': 200, 'content-encoding': 'gzip', 'content-length': 1000 });
            stream.write(gzipSync(text).subarray(0, 20), () =>
                setTimeout(() => stream.close(http2Constants.NGHTTP2_INTERNAL_ERROR), 10)
            );
        });
        const api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
        try {
            for (const options of [{}, { gunzip: true }]) {
                const res = await api.request('GET', `${h2.url}/reset`);
                await closed(res);
                const err = await within(1000, api.read(res, options));
                expect(err).toMatchObject({
                    message: 'Payload stream closed prematurely',
                    output: { statusCode: 500 }
                });
            }
        } finally {
            await h2.close();
        }
    });

    it('a response read to its end, read again: 500 Payload stream already read to its end', async () => {
        const res = await api.request('GET', `${origin}/plain`);
        expect((await api.read(res))?.toString()).toBe(text);
        const err = await within(1000, api.read(res));
        expect(err).toMatchObject({ message: 'Payload stream already read to its end', output: { statusCode: 500 } });
    });

    it('a stream destroyed with an error, closed before read(): 500 Payload stream error, the error as cause', async () => {
        const failure = new Error('disk gone');
        const stream = new Readable({ read() {} });
        stream.on('error', () => {});
        stream.destroy(failure);
        await new Promise((resolve) => stream.once('close', resolve));
        const err = await within(1000, client.read(stream));
        expect(err).toMatchObject({ message: 'Payload stream error: disk gone', output: { statusCode: 500 } });
        expect((err as Error).cause).toBe(failure);
    });

    it("a helper's response reset while the cache invalidates before the helper reads it: the same 500, with data.res", async () => {
        // An unsafe method's 2xx invalidates the stored URL before the flow has its response; a store
        // whose delete outlasts the reset hands the helper a response destroyed already.
        const memory = new MemoryCacheStore();
        const store = {
            get: (key: string) => memory.get(key),
            set: (key: string, entry: CachedResponse) => memory.set(key, entry),
            delete: (key: string) => settle(100).then(() => memory.delete(key))
        };
        const cached = new Client().defaults({ cache: { store } });
        const call = cached.post(`${server.url}/cut`, { payload: 'x', agent: false });
        const err = await within(2000, call);
        expect(err).toMatchObject({ message: 'Payload stream closed prematurely', output: { statusCode: 500 } });
        expect((err as { data: { res: IncomingMessage } }).data.res.statusCode).toBe(200);
    });
});
