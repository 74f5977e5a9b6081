import type { IncomingHttpHeaders } from 'node:http2';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client, type TransferProgress } from '../../../../src/client/index.js';
import { isHttpError } from '../../../../src/errors/index.js';
import { expectReleased, timersBefore } from './released.js';
import { type Http2TestServer, startHttp2 } from './servers.js';

/**
 * The messages of an HTTP/2 exchange (README "HTTP/2"): the request's HEADERS made from the
 * client's headers, the response as the client hands it on, bodies both ways (payloads, progress,
 * decoding, limits) and flow control bounding a large download.
 */

interface Seen {
    method: string;
    path: string;
    headers: IncomingHttpHeaders;
    body: string;
}

let server: Http2TestServer;
// What the server received last on each path.
const seen = new Map<string, Seen>();
const big = Buffer.alloc(32 * 1024 * 1024, 'tracewire ');
const text = 'tracewire over HTTP/2\n'.repeat(500);

beforeAll(async () => {
    server = await startHttp2(undefined);
    server.server.on('stream', (stream, headers) => {
        const path = String(headers[':path']);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
            const body = Buffer.concat(chunks).toString();
            seen.set(new URL(path, 'https://x').pathname, {
                method: String(headers[':method']),
                path,
                headers,
                body
            });
            respond(stream, path, headers, body);
        });
    });
});

afterAll(() => server.close());

type ServerStream = Parameters<Parameters<Http2TestServer['server']['on']>[1]>[0];

function respond(stream: ServerStream, path: string, headers: IncomingHttpHeaders, body: string): void {
    const url = new URL(path, 'https://x');
    switch (url.pathname) {
        case '/fields':
            stream.respond({
                ':status': 201,
                'x-one': 'a',
                'set-cookie': ['a=1', 'b=2'],
                'content-type': 'text/plain'
            });
            stream.end('made');
            return;
        case '/trailers':
            stream.respond({ ':status': 200 }, { waitForTrailers: true });
            stream.on('wantTrailers', () => stream.sendTrailers({ 'x-checksum': 'abc' }));
            stream.end('with trailers');
            return;
        case '/no-content':
            stream.respond({ ':status': 204 }, { endStream: true });
            return;
        case '/not-modified':
            stream.respond({ ':status': 304, etag: '"v1"' }, { endStream: true });
            return;
        case '/head':
            stream.respond({ ':status': 200, 'content-length': 1234 }, { endStream: headers[':method'] === 'HEAD' });
            if (headers[':method'] !== 'HEAD') {
                stream.end(Buffer.alloc(1234));
            }

            return;
        case '/gzip':
            stream.respond({ ':status': 200, 'content-encoding': 'gzip', 'content-type': 'text/plain' });
            stream.end(gzipSync(text));
            return;
        case '/encoded-bodiless': {
            // The head of a gzip body, on a response that has none by definition: to a HEAD, a 204 or a 304.
            const status = Number(url.searchParams.get('status') ?? 200);
            const encoded = gzipSync(text);
            const bodiless = headers[':method'] === 'HEAD' || status === 204 || status === 304;
            // No content-length on a 204 (RFC 9110 8.6): nghttp2 refuses one as a protocol error.
            const length = status === 204 ? {} : { 'content-length': encoded.length };
            stream.respond({ ':status': status, 'content-encoding': 'gzip', ...length }, { endStream: bodiless });
            if (!bodiless) {
                stream.end(encoded);
            }

            return;
        }
        case '/text':
            stream.respond({ ':status': 200, 'content-type': 'text/plain', 'content-length': text.length });
            stream.end(text);
            return;
        case '/json':
            stream.respond({ ':status': 200, 'content-type': 'application/json' });
            stream.end('{"ok":true}');
            return;
        case '/big':
            stream.respond({ ':status': 200, 'content-length': big.length });
            stream.end(big);
            return;
        case '/redirect-307':
            stream.respond({ ':status': 307, location: '/echo' }, { endStream: true });
            return;
        default:
            stream.respond({ ':status': 200, 'content-type': 'application/json' });
            stream.end(JSON.stringify({ method: headers[':method'], body }));
    }
}

let timers = 0;
let api: Client;
beforeEach(() => {
    timers = timersBefore();
    api = new Client().defaults({ http2: { idleTimeout: 100 }, rejectUnauthorized: false });
});

describe('HTTP/2 messages: the request HEADERS', () => {
    it('sends :method, :scheme, :path and :authority, the authority from the host header when there is one', async () => {
        await api.get(`${server.url}/plain?q=1`);
        expect(seen.get('/plain')?.headers).toMatchObject({
            ':method': 'GET',
            ':scheme': 'https',
            ':path': '/plain?q=1',
            ':authority': `127.0.0.1:${server.port}`
        });
        await api.get(`${server.url}/hosted`, { headers: { host: 'example.test:8443' } });
        expect(seen.get('/hosted')?.headers[':authority']).toBe('example.test:8443');
        expect(seen.get('/hosted')?.headers.host).toBeUndefined();
        await expectReleased(api, [server], timers);
    });

    it("sends the URL's credentials as Basic authorization, unless the caller gave one", async () => {
        const url = new URL(`${server.url}/credentials`);
        url.username = 'us%20er';
        url.password = 'p%40ss';
        await api.get(url.href);
        expect(seen.get('/credentials')?.headers.authorization).toBe(
            `Basic ${Buffer.from('us er:p@ss').toString('base64')}`
        );
        await api.get(url.href, { headers: { authorization: 'Bearer mine' } });
        expect(seen.get('/credentials')?.headers.authorization).toBe('Bearer mine');
        await expectReleased(api, [server], timers);
    });

    it('drops the connection-specific fields HTTP/2 forbids, keeps te: trailers and every other field', async () => {
        await api.get(`${server.url}/connection-fields`, {
            headers: {
                connection: 'keep-alive',
                'keep-alive': 'timeout=5',
                'proxy-connection': 'keep-alive',
                'transfer-encoding': 'chunked',
                upgrade: 'websocket',
                'http2-settings': 'AAMAAABkAAQAAP__',
                te: 'trailers',
                'x-kept': 'yes',
                'x-list': ['a', 'b']
            }
        });
        const headers = seen.get('/connection-fields')?.headers ?? {};
        for (const name of [
            'connection',
            'keep-alive',
            'proxy-connection',
            'transfer-encoding',
            'upgrade',
            'http2-settings'
        ]) {
            expect(headers[name], name).toBeUndefined();
        }

        expect(headers.te).toBe('trailers');
        expect(headers['x-kept']).toBe('yes');
        expect(headers['x-list']).toBe('a, b');
        await api.get(`${server.url}/te-gzip`, { headers: { te: 'gzip' } });
        expect(seen.get('/te-gzip')?.headers.te).toBeUndefined();
        await expectReleased(api, [server], timers);
    });

    it('fails a field a preRequest listener made unsendable as a 500 naming it, as HTTP/1.1 does, and keeps the session', async () => {
        const traced = api.defaults({ events: true });
        let bad: Record<string, string> = {};
        traced.events?.on('preRequest', (uri) => Object.assign(uri.headers, bad));
        await traced.get(`${server.url}/before-bad`);
        const connections = server.connections.length;
        for (const fields of [
            { 'x-bad': 'a\u0001b' },
            { 'x-bad': 'a\nb' },
            { 'bad name': 'x' },
            { ':path': '/other' }
        ]) {
            bad = fields;
            const err = await traced.get(`${server.url}/bad`).catch((e: unknown) => e);
            expect(isHttpError(err, 500), JSON.stringify(fields)).toBe(true);
            expect((err as Error).message).toMatch(/^Request could not be created: /);
        }

        bad = {};
        const { res } = await traced.get(`${server.url}/after-bad`);
        expect(res.statusCode).toBe(200);
        expect(server.connections).toHaveLength(connections);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 messages: the response', () => {
    it('has statusCode, statusMessage, headers, rawHeaders and httpVersion 2.0', async () => {
        const { res, payload } = await api.get(`${server.url}/fields`);
        expect(res.statusCode).toBe(201);
        expect(res.statusMessage).toBe('Created');
        expect(res.httpVersion).toBe('2.0');
        expect(res.httpVersionMajor).toBe(2);
        expect(res.httpVersionMinor).toBe(0);
        expect(res.headers).toMatchObject({ 'x-one': 'a', 'set-cookie': ['a=1', 'b=2'], 'content-type': 'text/plain' });
        expect(Object.keys(res.headers).some((name) => name.startsWith(':'))).toBe(false);
        expect(res.rawHeaders).toEqual(
            expect.arrayContaining([
                'x-one',
                'a',
                'set-cookie',
                'a=1',
                'set-cookie',
                'b=2',
                'content-type',
                'text/plain'
            ])
        );
        expect(res.rawHeaders.some((name) => name.startsWith(':'))).toBe(false);
        expect(String(payload)).toBe('made');
        await expectReleased(api, [server], timers);
    });

    it('has the trailers once the body is read', async () => {
        const res = await api.request('GET', `${server.url}/trailers`);
        const body = await api.read(res);
        expect(String(body)).toBe('with trailers');
        expect(res.trailers).toEqual({ 'x-checksum': 'abc' });
        expect(res.rawTrailers).toEqual(['x-checksum', 'abc']);
        await expectReleased(api, [server], timers);
    });

    it('ends at once for HEAD, 204 and 304, with no body', async () => {
        const head = await api.request('HEAD', `${server.url}/head`);
        expect(head.statusCode).toBe(200);
        expect(head.headers['content-length']).toBe('1234');
        expect((await api.read<Buffer>(head)).length).toBe(0);
        const noContent = await api.get(`${server.url}/no-content`);
        expect(noContent.res.statusCode).toBe(204);
        expect(noContent.payload).toEqual(Buffer.alloc(0));
        const notModified = await api.get(`${server.url}/not-modified`, { headers: { 'if-none-match': '"v1"' } });
        expect(notModified.res.statusCode).toBe(304);
        expect(notModified.payload).toEqual(Buffer.alloc(0));
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 messages: a response with no body by definition', () => {
    it('a HEAD, a 204 and a 304 with a content-encoding read as empty with gunzip, and their progress is of 0 bytes', async () => {
        const url = `${server.url}/encoded-bodiless`;
        for (const [method, status] of [
            ['HEAD', 200],
            ['HEAD', 404],
            ['GET', 204],
            ['GET', 304]
        ] as const) {
            for (const gunzip of [true, 'force'] as const) {
                const res = await api.request(method, `${url}?status=${status}`);
                expect(res.statusCode).toBe(status);
                expect(res.headers['content-encoding']).toBe('gzip');
                const progress: TransferProgress[] = [];
                const payload = await api.read(res, { gunzip, onDownloadProgress: (each) => progress.push(each) });
                expect(payload).toEqual(Buffer.alloc(0));
                expect(progress.at(-1)).toEqual({ transferred: 0, total: 0, percent: 100 });
            }
        }

        // With JSON asked for too: an empty body is null.
        const head = await api.request('HEAD', url);
        expect(await api.read(head, { gunzip: true, json: 'force' })).toBeNull();
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 messages: payloads', () => {
    it('sends a string, a Buffer and a JSON object with their content-length', async () => {
        await api.post(`${server.url}/string`, { payload: 'a string' });
        expect(seen.get('/string')).toMatchObject({ method: 'POST', body: 'a string' });
        expect(seen.get('/string')?.headers['content-length']).toBe('8');
        await api.put(`${server.url}/buffer`, { payload: Buffer.from('a buffer') });
        expect(seen.get('/buffer')).toMatchObject({ method: 'PUT', body: 'a buffer' });
        await api.patch(`${server.url}/object`, { payload: { a: 1 } });
        expect(seen.get('/object')).toMatchObject({ method: 'PATCH', body: '{"a":1}' });
        expect(seen.get('/object')?.headers['content-type']).toBe('application/json');
        await api.delete(`${server.url}/delete`);
        expect(seen.get('/delete')).toMatchObject({ method: 'DELETE', body: '' });
        await expectReleased(api, [server], timers);
    });

    it('sends a readable stream, and sends it again from its copy on a 307', async () => {
        await api.post(`${server.url}/stream`, { payload: Readable.from(['str', 'eam']) });
        expect(seen.get('/stream')?.body).toBe('stream');
        const { res, payload } = await api.post(`${server.url}/redirect-307`, {
            payload: Readable.from(['re', 'sent']),
            redirects: 1,
            json: true
        });
        expect(res.statusCode).toBe(200);
        expect(payload).toEqual({ method: 'POST', body: 'resent' });
        expect(seen.get('/redirect-307')?.body).toBe('resent');
        await expectReleased(api, [server], timers);
    });

    it('reports upload and download progress to the whole body', async () => {
        const uploads: TransferProgress[] = [];
        const downloads: TransferProgress[] = [];
        const payload = Buffer.alloc(300_000, 'u');
        await api.post(`${server.url}/upload`, {
            payload,
            onUploadProgress: (progress) => uploads.push(progress)
        });
        expect(seen.get('/upload')?.body.length).toBe(300_000);
        expect(uploads.length).toBeGreaterThan(1);
        expect(uploads.at(-1)).toEqual({ transferred: 300_000, total: 300_000, percent: 100 });
        await api.get(`${server.url}/text`, { onDownloadProgress: (progress) => downloads.push(progress) });
        expect(downloads.at(-1)).toEqual({ transferred: text.length, total: text.length, percent: 100 });

        const streamed: TransferProgress[] = [];
        await api.post(`${server.url}/upload-stream`, {
            payload: Readable.from([Buffer.alloc(1000), Buffer.alloc(500)]),
            onUploadProgress: (progress) => streamed.push(progress)
        });
        expect(streamed.at(-1)?.transferred).toBe(1500);
        await expectReleased(api, [server], timers);
    });
});

describe('HTTP/2 messages: reading the body', () => {
    it('decodes gzip with gunzip', async () => {
        const { payload } = await api.get(`${server.url}/gzip`, { gunzip: true });
        expect(String(payload)).toBe(text);
        await expectReleased(api, [server], timers);
    });

    it('fails a body over maxBytes with a 413, resetting its stream and keeping the session', async () => {
        const err = await api.get(`${server.url}/text`, { maxBytes: 100 }).catch((e: unknown) => e);
        expect(isHttpError(err, 413)).toBe(true);
        const connections = server.connections.length;
        const { res } = await api.get(`${server.url}/after-413`);
        expect(res.statusCode).toBe(200);
        expect(server.connections).toHaveLength(connections);
        await expectReleased(api, [server], timers);
    });

    it("parses JSON and refuses another content-type with json: 'strict'", async () => {
        const { payload } = await api.get(`${server.url}/json`, { json: 'strict' });
        expect(payload).toEqual({ ok: true });
        const err = await api.get(`${server.url}/text`, { json: 'strict' }).catch((e: unknown) => e);
        expect(isHttpError(err, 406)).toBe(true);
        await expectReleased(api, [server], timers);
    });

    it('downloads 32 MiB with memory bounded by the flow-control window while the body is not read', async () => {
        const res = await api.request('GET', `${server.url}/big`);
        // Nothing reads for a while: the server can send only what the windows allow.
        await new Promise((resolve) => setTimeout(resolve, 300));
        // Sent so far: what the stream's window (initialWindowSize, 1 MiB by default) let through, frames included.
        const stream = server.streams.at(-1);
        const sent = stream?.session?.socket.bytesWritten ?? 0;
        expect(sent).toBeGreaterThan(1024 * 1024 - 64 * 1024);
        expect(sent).toBeLessThan(1024 * 1024 + 128 * 1024);
        expect(res.readableLength).toBeLessThanOrEqual(res.readableHighWaterMark);
        let received = 0;
        for await (const chunk of res) {
            received += (chunk as Buffer).length;
        }

        expect(received).toBe(big.length);
        await expectReleased(api, [server], timers);
    }, 30_000);
});
