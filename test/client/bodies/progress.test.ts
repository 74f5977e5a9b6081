import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type TransferProgress } from '../../../src/client/index.js';
import type { HttpError } from '../../../src/errors/index.js';
import { body, settle, startHttp, type TestServer } from '../helpers.js';

// Bytes with no pattern a transfer could shortcut: a SHA-256 chain.
function bytes(size: number, seed = 'tracewire'): Buffer {
    const out = Buffer.alloc(size);
    let block = createHash('sha256').update(seed).digest();
    for (let offset = 0; offset < size; offset += block.length) {
        block.copy(out, offset);
        block = createHash('sha256').update(block).digest();
    }

    return out;
}

const large = bytes(3 * 1024 * 1024 + 17);
const compressed = gzipSync(large);

let server: TestServer;
let base: string;

beforeAll(async () => {
    server = await startHttp((req, res) => {
        // A client that fails its upload cuts the body short: the server just drops that request.
        serve(req, res).catch(() => res.destroy());
    });
    base = server.url;
});

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/upload') {
        let received = 0;
        for await (const chunk of req) {
            received += (chunk as Buffer).length;
        }

        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ bytes: received, chunked: req.headers['transfer-encoding'] }));
    } else if (url.pathname === '/redirect') {
        await body(req);
        res.writeHead(307, { location: '/upload' }).end();
    } else if (url.pathname === '/sized') {
        res.writeHead(200, { 'content-length': large.length });
        writeInPieces(res, large);
    } else if (url.pathname === '/chunked') {
        res.writeHead(200);
        writeInPieces(res, large);
    } else if (url.pathname === '/gzip') {
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': compressed.length });
        writeInPieces(res, compressed);
    } else if (url.pathname === '/not-modified') {
        res.writeHead(304, { 'content-length': large.length, 'content-encoding': 'gzip' }).end();
    } else if (url.pathname === '/empty') {
        res.writeHead(200, { 'content-length': 0 }).end();
    } else {
        res.end('ok');
    }
}

afterAll(() => server.close());

/** Writes a body in 256 KiB pieces, each after the previous one drained, so it arrives in many chunks. */
function writeInPieces(res: NodeJS.WritableStream, data: Buffer): void {
    let offset = 0;
    const next = () => {
        while (offset < data.length) {
            const piece = data.subarray(offset, offset + 256 * 1024);
            offset += piece.length;
            if (!res.write(piece)) {
                res.once('drain', next);
                return;
            }
        }

        res.end();
    };
    next();
}

function recorder() {
    const calls: TransferProgress[] = [];
    return { calls, onProgress: (progress: TransferProgress) => calls.push(progress) };
}

/** Every call's transferred never goes down, and the last one says `size`. */
function expectSteadyTo(calls: TransferProgress[], size: number) {
    expect(calls.length).toBeGreaterThan(0);
    for (let i = 1; i < calls.length; i++) {
        expect(calls[i]!.transferred).toBeGreaterThanOrEqual(calls[i - 1]!.transferred);
    }

    expect(calls.at(-1)!.transferred).toBe(size);
}

describe('onDownloadProgress', () => {
    it('reports a sized body as it arrives, against its content-length, ending at 100%', async () => {
        const { calls, onProgress } = recorder();
        const { payload } = await client.get<Buffer>(`${base}/sized`, { onDownloadProgress: onProgress });
        expect(payload.equals(large)).toBe(true);
        expectSteadyTo(calls, large.length);
        expect(calls.length).toBeGreaterThan(2);
        expect(calls.every((call) => call.total === large.length)).toBe(true);
        expect(calls.at(-1)!.percent).toBe(100);
        expect(calls[0]!.percent).toBeGreaterThan(0);
        expect(calls[0]!.percent).toBeLessThan(100);
    });

    it('reports a chunked body of unknown size with no total and no percent', async () => {
        const { calls, onProgress } = recorder();
        const { payload } = await client.get<Buffer>(`${base}/chunked`, { onDownloadProgress: onProgress });
        expect(payload.length).toBe(large.length);
        expectSteadyTo(calls, large.length);
        expect(calls.length).toBeGreaterThan(2);
        expect(calls.every((call) => call.total === undefined && call.percent === undefined)).toBe(true);
    });

    it('counts a compressed body in bytes as received, before gunzip decodes it', async () => {
        const { calls, onProgress } = recorder();
        const { payload } = await client.get<Buffer>(`${base}/gzip`, {
            gunzip: true,
            onDownloadProgress: onProgress
        });
        expect(payload.equals(large)).toBe(true);
        expectSteadyTo(calls, compressed.length);
        expect(calls.at(-1)).toEqual({ transferred: compressed.length, total: compressed.length, percent: 100 });
    });

    it('calls once for an empty body: 0 of 0, 100%', async () => {
        const { calls, onProgress } = recorder();
        await client.get(`${base}/empty`, { onDownloadProgress: onProgress });
        expect(calls).toEqual([{ transferred: 0, total: 0, percent: 100 }]);
    });

    it('counts a HEAD or a 304 as the empty body it is, whatever its content-length says: 0 of 0, 100%', async () => {
        for (const [method, path] of [
            ['HEAD', '/sized'],
            ['GET', '/not-modified']
        ] as const) {
            const { calls, onProgress } = recorder();
            const res = await client.request(method, `${base}${path}`);
            await client.read(res, { gunzip: true, onDownloadProgress: onProgress });
            expect(calls).toEqual([{ transferred: 0, total: 0, percent: 100 }]);
        }
    });

    it('works with read() on any stream, and from defaults()', async () => {
        const { calls, onProgress } = recorder();
        const reading = client.defaults({ onDownloadProgress: onProgress });
        const res = await reading.request('GET', `${base}/sized`);
        await reading.read(res);
        expectSteadyTo(calls, large.length);

        const streamed = recorder();
        const payload = await client.read(Readable.from(['ab', 'cdé']), { onDownloadProgress: streamed.onProgress });
        expect(String(payload)).toBe('abcdé');
        expect(streamed.calls).toEqual([
            { transferred: 2, total: undefined, percent: undefined },
            { transferred: 6, total: undefined, percent: undefined }
        ]);
    });

    it('fails the request with a 500 naming the callback when it throws, and calls it no more', async () => {
        let calls = 0;
        const failing = client.get(`${base}/sized`, {
            onDownloadProgress: () => {
                calls++;
                throw new Error('bar broke');
            }
        });
        await expect(failing).rejects.toMatchObject({
            output: { statusCode: 500 },
            message: 'The onDownloadProgress callback threw: bar broke'
        });
        expect(calls).toBe(1);
        const error = (await failing.catch((err: HttpError) => err)) as HttpError;
        expect((error.cause as Error).message).toBe('bar broke');
    });

    it('fails read() too when the last call, that of an empty body, throws', async () => {
        const res = await client.request('GET', `${base}/empty`);
        await expect(
            client.read(res, {
                onDownloadProgress: () => {
                    throw new Error('no');
                }
            })
        ).rejects.toThrow('The onDownloadProgress callback threw: no');
    });
});

describe('onUploadProgress', () => {
    it('reports a Buffer payload as it goes out, against its length', async () => {
        const { calls, onProgress } = recorder();
        const { payload } = await client.post<{ bytes: number }>(`${base}/upload`, {
            payload: large,
            json: true,
            onUploadProgress: onProgress
        });
        expect(payload.bytes).toBe(large.length);
        expectSteadyTo(calls, large.length);
        expect(calls.length).toBeGreaterThan(2);
        expect(calls.every((call) => call.total === large.length)).toBe(true);
        expect(calls.at(-1)!.percent).toBe(100);
    });

    it('counts a string payload in bytes', async () => {
        const text = 'é'.repeat(100_000);
        const { calls, onProgress } = recorder();
        const { payload } = await client.put<{ bytes: number }>(`${base}/upload`, {
            payload: text,
            json: true,
            onUploadProgress: onProgress
        });
        expect(payload.bytes).toBe(200_000);
        expectSteadyTo(calls, 200_000);
        expect(calls.at(-1)).toEqual({ transferred: 200_000, total: 200_000, percent: 100 });
    });

    it('reports a stream payload of unknown size (chunked) with no total', async () => {
        const { calls, onProgress } = recorder();
        const { payload } = await client.post<{ bytes: number; chunked: string }>(`${base}/upload`, {
            payload: Readable.from([large.subarray(0, 1_000_000), large.subarray(1_000_000)]),
            json: true,
            onUploadProgress: onProgress
        });
        expect(payload).toEqual({ bytes: large.length, chunked: 'chunked' });
        expectSteadyTo(calls, large.length);
        expect(calls.every((call) => call.total === undefined && call.percent === undefined)).toBe(true);
    });

    it('counts what else is written to the request, a string with its callback included', async () => {
        const { calls, onProgress } = recorder();
        const payload = new PassThrough();
        const promise = client.request('POST', `${base}/upload`, { payload, onUploadProgress: onProgress });
        const written = await new Promise<Error | null | undefined>((resolve) => {
            promise.req!.write('é', 'utf8', resolve);
        });
        expect(written).toBeFalsy();
        promise.req!.write('ab', (err?: Error | null) => expect(err).toBeFalsy());
        payload.end(Buffer.from('xyz'));
        const res = await promise;
        expect(JSON.parse(String(await client.read(res)))).toMatchObject({ bytes: 7 });
        expectSteadyTo(calls, 7);
    });

    it('takes the total of a stream payload from the content-length given for it', async () => {
        const { calls, onProgress } = recorder();
        await client.post(`${base}/upload`, {
            payload: Readable.from([large]),
            headers: { 'content-length': large.length },
            onUploadProgress: onProgress
        });
        expectSteadyTo(calls, large.length);
        expect(calls.at(-1)).toEqual({ transferred: large.length, total: large.length, percent: 100 });
    });

    it('calls once for a request without a body: 0 of 0, 100%', async () => {
        const { calls, onProgress } = recorder();
        await client.get(`${base}/`, { onUploadProgress: onProgress });
        expect(calls).toEqual([{ transferred: 0, total: 0, percent: 100 }]);
    });

    it('starts again from 0 on each hop that re-sends the body (a 307 redirect), from defaults()', async () => {
        const { calls, onProgress } = recorder();
        const uploading = client.defaults({ onUploadProgress: onProgress, redirects: 1 });
        const { payload } = await uploading.post<{ bytes: number }>(`${base}/redirect`, {
            payload: large,
            json: true
        });
        expect(payload.bytes).toBe(large.length);
        const restart = calls.findIndex((call, i) => i > 0 && call.transferred < calls[i - 1]!.transferred);
        expect(restart).toBeGreaterThan(0);
        expectSteadyTo(calls.slice(0, restart), large.length);
        expectSteadyTo(calls.slice(restart), large.length);
    });

    it('stops at an abort mid-upload: no call claims the whole body, nothing hangs', async () => {
        const { calls, onProgress } = recorder();
        const controller = new AbortController();
        const aborting = client.post(`${base}/upload`, {
            payload: large,
            signal: controller.signal,
            onUploadProgress: (progress) => {
                onProgress(progress);
                controller.abort();
            }
        });
        await expect(aborting).rejects.toMatchObject({
            output: { statusCode: 500 },
            message: 'Client request aborted'
        });
        await settle();
        expect(calls.length).toBeGreaterThan(0);
        expect(calls.at(-1)!.transferred).toBeLessThan(large.length);
    });

    it('fails the request with a 500 naming the callback when it throws, and calls it no more', async () => {
        let calls = 0;
        const failing = client.post(`${base}/upload`, {
            payload: large,
            onUploadProgress: () => {
                calls++;
                throw new Error('upload bar broke');
            }
        });
        await expect(failing).rejects.toMatchObject({
            output: { statusCode: 500 },
            message: 'The onUploadProgress callback threw: upload bar broke'
        });
        expect(calls).toBe(1);
    });
});

describe('progress options are validated', () => {
    it('refuses a non-function, naming the option', async () => {
        await expect(client.get(`${base}/`, { onUploadProgress: 'yes' as never })).rejects.toThrow(
            'Option onUploadProgress must be a function, got string'
        );
        await expect(client.get(`${base}/`, { onDownloadProgress: 1 as never })).rejects.toThrow(
            'Option onDownloadProgress must be a function, got number'
        );
        const res = await client.request('GET', `${base}/`);
        await expect(client.read(res, { onDownloadProgress: {} as never })).rejects.toThrow(
            'Option onDownloadProgress must be a function, got object'
        );
        expect(() => client.defaults({ onUploadProgress: true as never })).toThrow(
            'Option onUploadProgress must be a function, got boolean'
        );
    });

    it('takes null or undefined as not set', async () => {
        const { res } = await client.get(`${base}/`, { onUploadProgress: null, onDownloadProgress: undefined });
        expect(res.statusCode).toBe(200);
    });
});
