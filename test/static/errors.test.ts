import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import * as Http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import type * as Hapi from '@hapi/hapi';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isHttpError, notFound } from '../../src/errors/index.js';
import { countOpenFds, createFixture, createServer, type Fixture, settledFdCount } from './helpers.js';

let fixture: Fixture;

beforeAll(() => {
    fixture = createFixture();
});

afterAll(() => {
    fixture.remove();
});

const restores: Array<() => void> = [];

afterEach(() => {
    for (const restore of restores.splice(0).reverse()) {
        restore();
    }
});

type AsyncFsName = 'open' | 'stat' | 'readdir';
type SyncFsName = 'openSync' | 'realpathSync' | 'lstatSync' | 'statSync' | 'fstatSync' | 'readSync';

/**
 * Makes one fs call fail with `code` for paths containing `marker` (descriptor-based calls always
 * fail). The tests run as root, where permissions never deny a read, so EACCES and friends are
 * produced this way.
 */
function failFs(name: AsyncFsName | SyncFsName, code: string, marker: string): void {
    const target = (name === 'realpathSync' ? fs.realpathSync : fs) as unknown as Record<string, Function>;
    const key = name === 'realpathSync' ? 'native' : name;
    const original = target[key]!;
    const isSync = name.endsWith('Sync');
    const replacement = function (this: unknown, ...args: unknown[]) {
        const first = args[0];
        const matches = typeof first === 'string' ? first.includes(marker) : true;
        if (!matches) {
            return original.apply(this, args);
        }

        const error: NodeJS.ErrnoException = new Error(`${code}: simulated`);
        error.code = code;
        if (isSync) {
            throw error;
        }

        process.nextTick(args[args.length - 1] as (err: Error) => void, error);
    };
    target[key] = replacement;
    syncBuiltinESMExports();
    restores.push(() => {
        target[key] = original;
        syncBuiltinESMExports();
    });
}

interface ErrorResponse {
    statusCode: number;
    path: string | undefined;
}

async function errorOf(server: Hapi.Server, url: string): Promise<ErrorResponse> {
    let error: unknown;
    server.events.on('response', (request) => {
        const response = request.response as unknown as { _error?: unknown };
        error = response._error;
    });
    const res = await server.inject(url);
    const data = isHttpError<{ path?: string } | null>(error) ? error.data : null;
    return { statusCode: res.statusCode, path: data?.path };
}

async function fileServer(options: Record<string, unknown> = {}): Promise<Hapi.Server> {
    const server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
    server.route({
        method: 'GET',
        path: '/file/{p*}',
        handler: { file: { path: (request) => `${request.params.p}`, ...options } }
    });
    server.route({ method: 'GET', path: '/dir/{p*}', handler: { directory: { path: '.', listing: true } } });
    return server;
}

describe('static serving errors: their status and data.path', () => {
    it('a missing file is 404 with data.path', async () => {
        const server = await fileServer();
        expect(await errorOf(server, '/file/missing.txt')).toEqual({
            statusCode: 404,
            path: join(fixture.root, 'missing.txt')
        });
    });

    it('a path through a file (ENOTDIR) is 404', async () => {
        const server = await fileServer();
        expect((await errorOf(server, '/file/hello.txt/more')).statusCode).toBe(404);
    });

    it('a hidden file through the directory handler is 404 without data.path (no lookup happened)', async () => {
        const server = await fileServer();
        expect(await errorOf(server, '/dir/.env')).toEqual({ statusCode: 404, path: undefined });
    });

    it('a file that exists but cannot be opened (EACCES, EPERM) is 403 with data.path', async () => {
        const server = await fileServer({ confine: false });
        failFs('openSync', 'EACCES', 'hello.txt');
        expect(await errorOf(server, '/file/hello.txt')).toEqual({
            statusCode: 403,
            path: join(fixture.root, 'hello.txt')
        });
        failFs('openSync', 'EPERM', 'page.html');
        expect((await errorOf(server, '/file/page.html')).statusCode).toBe(403);
    });

    it('a path outside the confine directory is 403 with data.path', async () => {
        const server = await fileServer();
        expect(await errorOf(server, `/file/${encodeURIComponent('../outside/secret.txt')}`)).toEqual({
            statusCode: 403,
            path: join(fixture.base, 'outside/secret.txt')
        });
    });

    it('a symlink escaping the confine root reports the requested path, not the real one', async () => {
        const server = await fileServer();
        expect(await errorOf(server, '/file/link-outside.txt')).toEqual({
            statusCode: 403,
            path: join(fixture.root, 'link-outside.txt')
        });
    });

    it('a directory requested through the file handler is 403, never a crash', async () => {
        const server = await fileServer();
        expect(await errorOf(server, '/file/dir')).toEqual({ statusCode: 403, path: join(fixture.root, 'dir') });
        const head = await server.inject({ method: 'HEAD', url: '/file/dir' });
        expect(head.statusCode).toBe(403);
    });

    it('a FIFO is refused with 403 at once instead of waiting for a writer', async () => {
        const fifo = join(fixture.root, 'pipe.fifo');
        execFileSync('mkfifo', [fifo]);
        const server = await fileServer();
        expect((await server.inject('/file/pipe.fifo')).statusCode).toBe(403);
        expect((await server.inject('/dir/pipe.fifo')).statusCode).toBe(403);
        fs.rmSync(fifo);
    });

    it('an unexpected failure is a 500 carrying data.path', async () => {
        const server = await fileServer({ confine: false });
        failFs('openSync', 'EIO', 'hello.txt');
        expect(await errorOf(server, '/file/hello.txt')).toEqual({
            statusCode: 500,
            path: join(fixture.root, 'hello.txt')
        });
    });

    it("the file-system call's error is the cause of each, own and not enumerable, as ES2022 sets it", async () => {
        const server = await fileServer({ confine: false });
        let error: unknown;
        server.events.on('response', (request) => {
            error = (request.response as unknown as { _error?: unknown })._error;
        });
        failFs('openSync', 'EACCES', 'hello.txt');
        failFs('openSync', 'EIO', 'page.html');
        for (const [url, status, code] of [
            ['/file/missing.txt', 404, 'ENOENT'],
            ['/file/hello.txt', 403, 'EACCES'],
            ['/file/page.html', 500, 'EIO']
        ] as const) {
            expect((await server.inject(url)).statusCode).toBe(status);
            const descriptor = Object.getOwnPropertyDescriptor(error, 'cause');
            expect(descriptor, url).toMatchObject({ enumerable: false, writable: true, configurable: true });
            expect((descriptor?.value as NodeJS.ErrnoException | undefined)?.code).toBe(code);
            expect(Object.keys(error as object)).not.toContain('cause');
            // data is what it was: the path, and on a 500 the same error as data.cause.
            const data = (error as { data: { path: string; cause?: unknown } }).data;
            expect(Object.keys(data)).toStrictEqual(status === 500 ? ['path', 'cause'] : ['path']);
            if (status === 500) {
                expect(data.cause).toBe(descriptor?.value);
            }
        }
    });

    it('a failure while hashing is a 500 and the next request hashes again', async () => {
        const server = await fileServer();
        failFs('open', 'EIO', 'page.html');
        // realpath and the metadata-only stat succeed; the hash stream's open fails.
        const res = await server.inject({ url: '/file/page.html', headers: { 'if-none-match': '"x"' } });
        expect(res.statusCode).toBe(500);
        restores.pop()?.();
        const again = await server.inject('/file/page.html');
        expect(again.statusCode).toBe(200);
    });

    it('an fstat failure is mapped and the descriptor closed', async () => {
        const server = await fileServer();
        failFs('fstatSync', 'EIO', '');
        expect((await server.inject('/file/hello.txt')).statusCode).toBe(500);
    });

    it('a read failure while sending a small file is a 500', async () => {
        const server = await fileServer({ etagMethod: 'simple' });
        failFs('readSync', 'EIO', '');
        expect((await server.inject('/file/hello.txt')).statusCode).toBe(500);
    });

    it('a read failure while streaming a large file not hashed yet ends the response and closes the file', async () => {
        // Above the in-memory limit, so the file is streamed and hashed as it passes.
        fs.writeFileSync(join(fixture.root, 'streamed.bin'), Buffer.alloc(4 * 1024 * 1024, 'x'));
        const server = await fileServer();
        await server.start();
        const baseline = countOpenFds();
        const original = fs.read;
        let reads = 0;
        // The second read of the stream fails: the headers and a first chunk are already out.
        (fs as unknown as { read: Function }).read = (...args: unknown[]) => {
            if (++reads === 2) {
                const error: NodeJS.ErrnoException = new Error('EIO: simulated');
                error.code = 'EIO';
                process.nextTick(args[args.length - 1] as (err: Error) => void, error);
                return;
            }

            return (original as Function)(...args);
        };
        syncBuiltinESMExports();
        restores.push(() => {
            (fs as unknown as { read: Function }).read = original;
            syncBuiltinESMExports();
        });
        try {
            const outcome = await new Promise<string>((resolve) => {
                const req = Http.get(
                    { host: '127.0.0.1', port: server.info.port, path: '/file/streamed.bin', agent: false },
                    (res) => {
                        let bytes = 0;
                        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
                        res.on('error', () => resolve('cut short'));
                        res.on('end', () => resolve(bytes === 4 * 1024 * 1024 ? 'complete' : 'cut short'));
                    }
                );
                req.on('error', () => resolve('cut short'));
            });
            expect(outcome).toBe('cut short');
            expect(reads).toBeGreaterThanOrEqual(2);
            expect(await settledFdCount(baseline)).toBeLessThanOrEqual(baseline);
            restores.pop()?.();
            // Nothing was remembered from the broken response: the next one is whole, still under the
            // identity tag (hex digits joined by dashes), not a content hash.
            const next = await server.inject('/file/streamed.bin');
            expect(next.rawPayload.length).toBe(4 * 1024 * 1024);
            expect(next.headers.etag).toMatch(/^"[0-9a-f]+(-[0-9a-f.]+){4}"$/);
        } finally {
            await server.stop();
        }
    });

    it('a file that shrinks while it is read, after its headers were set, is a 503 to retry (README, "Static files")', async () => {
        const path = join(fixture.root, 'shrinking.txt');
        fs.writeFileSync(path, 'twelve bytes');
        const server = await fileServer({ etagMethod: false });
        const original = fs.readSync;
        let truncated = false;
        (fs as unknown as { readSync: Function }).readSync = (...args: unknown[]) => {
            if (!truncated) {
                truncated = true;
                fs.truncateSync(path, 4);
            }

            return (original as Function)(...args);
        };
        syncBuiltinESMExports();
        restores.push(() => {
            (fs as unknown as { readSync: Function }).readSync = original;
            syncBuiltinESMExports();
        });
        const res = await server.inject('/file/shrinking.txt');
        expect(res.statusCode).toBe(503);
        expect(res.headers['retry-after']).toBe('1');
    });

    it('an error without a code is a 500', async () => {
        const server = await fileServer({ confine: false });
        failFs('openSync', undefined as unknown as string, 'hello.txt');
        expect((await server.inject('/file/hello.txt')).statusCode).toBe(500);
    });

    it('HEAD of a missing file without confine is a 404 from the metadata lookup', async () => {
        const server = await fileServer({ confine: false });
        const res = await server.inject({ method: 'HEAD', url: '/file/missing.txt' });
        expect(res.statusCode).toBe(404);
    });

    it('a listing leaves out entries that vanish while it is built', async () => {
        const server = await fileServer();
        failFs('stat', 'ENOENT', 'b.txt');
        const res = await server.inject({ url: '/dir/listed/', headers: { accept: 'application/json' } });
        expect((res.result as Array<{ name: string }>).map((entry) => entry.name)).toEqual(['another', 'sub', 'a.txt']);
    });

    it('a listing that cannot be read is mapped like a file', async () => {
        const server = await fileServer();
        failFs('readdir', 'EACCES', 'listed');
        expect(await errorOf(server, '/dir/listed/')).toEqual({ statusCode: 403, path: join(fixture.root, 'listed') });
    });

    it('an index lookup failing other than missing is the answer', async () => {
        const server = await fileServer();
        failFs('lstatSync', 'EACCES', 'index.html');
        expect((await server.inject('/dir/dir/')).statusCode).toBe(403);
    });

    it('a pre-compressed variant failing other than missing is the answer', async () => {
        const server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
        server.route({ method: 'GET', path: '/', handler: { file: { path: 'large.txt', lookupCompressed: true } } });
        failFs('lstatSync', 'EACCES', 'large.txt.gz');
        expect((await server.inject({ url: '/', headers: { 'accept-encoding': 'gzip' } })).statusCode).toBe(403);
    });

    it('a file in a second root failing other than missing is the answer', async () => {
        const server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
        server.route({ method: 'GET', path: '/{p*}', handler: { directory: { path: ['second', '.'] } } });
        failFs('lstatSync', 'EACCES', 'root/hello.txt');
        expect((await server.inject('/hello.txt')).statusCode).toBe(403);
    });
});

describe('errors of a directory path function', () => {
    it('an HttpError returned by the path function goes to the client unchanged', async () => {
        const server = await createServer();
        server.route({
            method: 'GET',
            path: '/{p*}',
            handler: { directory: { path: () => notFound('no such tenant', { tenant: 'x' }) } }
        });
        const res = await server.inject('/anything');
        expect(res.statusCode).toBe(404);
        expect(res.result).toEqual({ statusCode: 404, error: 'Not Found', message: 'no such tenant' });
    });

    it('a plain Error returned by the path function is a 500', async () => {
        const server = await createServer();
        server.route({ method: 'GET', path: '/{p*}', handler: { directory: { path: () => new Error('boom') } } });
        expect((await server.inject('/anything')).statusCode).toBe(500);
    });
});

describe('replacing a 404 with a file from onPreResponse', () => {
    it('h.file() in onPreResponse turns a 404 into a file sent with status 404', async () => {
        const server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
        server.route({ method: 'GET', path: '/{p*}', handler: { directory: { path: '.' } } });
        server.ext('onPreResponse', (request, h) => {
            const response = request.response;
            if (isHttpError(response, 404)) {
                return h.file('page.html').code(404);
            }

            return h.continue;
        });
        const res = await server.inject('/missing.html');
        expect(res.statusCode).toBe(404);
        expect(res.payload).toBe('<h1>page</h1>\n');
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        // An error page is not the resource: no validators, so no 304 can replace it.
        expect(res.headers.etag).toBeUndefined();
        const conditional = await server.inject({
            url: '/missing.html',
            headers: { 'if-modified-since': new Date().toUTCString() }
        });
        expect(conditional.statusCode).toBe(404);
        const unmatchedRoute = await server.inject('/also/missing');
        expect(unmatchedRoute.statusCode).toBe(404);
        const found = await server.inject('/hello.txt');
        expect(found.statusCode).toBe(200);
    });

    it('a failing h.file() in onPreResponse becomes that error', async () => {
        const server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
        server.ext('onPreResponse', (request, h) =>
            isHttpError(request.response, 404) ? h.file('no-such-page.html').code(404) : h.continue
        );
        const res = await server.inject('/x');
        expect(res.statusCode).toBe(404);
        expect(res.result).toMatchObject({ error: 'Not Found' });
    });
});
