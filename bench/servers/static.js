// The servers of the static benchmark, one implementation per process:
//   node bench/servers/static.js <tracewire|inert|fixed|floor|floor-sync|fastify> <fixtures directory>
//   node bench/servers/static.js tracewire@baseline <fixtures directory> <the baseline checkout, built>
// Every server answers /f/<name> (directory handler, or the fixed routes) and, for the two hapi
// plugins, /h/<name> (a route per file whose handler calls h.file()).
import { close, fstatSync, lstatSync, openSync, read, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { answerParent, RssProbe } from '../lib/processes.js';

const [kind, fixtures, baselineDirectory] = process.argv.slice(2);
const floorReadsSync = kind === 'floor-sync';
const files = ['file-1k.txt', 'file-64k.txt', 'file-10m.bin', 'file-1g.bin'];
// The in-memory routes hold what they serve: not the 1 GiB file of the memory benchmark.
const inMemory = files.filter((name) => name !== 'file-1g.bin');

async function hapiServer(plugin) {
    const { default: Hapi } = await import('@hapi/hapi');
    // h.file() paths are relative to the fixtures, where the default `confine` allows them.
    const server = Hapi.server({ host: '127.0.0.1', port: 0, routes: { files: { relativeTo: fixtures } } });
    if (plugin) {
        await server.register(plugin);
    }

    return server;
}

function fileRoutes(server) {
    server.route({
        method: 'GET',
        path: '/f/{path*}',
        handler: { directory: { path: fixtures, lookupCompressed: true } }
    });
    for (const name of files) {
        server.route({
            method: 'GET',
            path: `/h/${name}`,
            handler: (_request, h) => h.file(name, { lookupCompressed: true })
        });
    }
}

/**
 * The ceiling for any hapi plugin: the same bytes from memory with the validators a file carries
 * (etag and last-modified, checked by hapi's own h.entity, so If-None-Match gets its 304), no file
 * system at all.
 */
function fixedRoutes(server) {
    const load = (name) => {
        const bytes = readFileSync(join(fixtures, name));
        const { mtime } = statSync(join(fixtures, name));
        return { bytes, etag: `fixed-${name}-${bytes.length}`, modified: mtime.toUTCString() };
    };
    const bodies = Object.fromEntries(inMemory.map((name) => [name, load(name)]));
    const gzip = load('file-64k.txt.gz');
    for (const name of inMemory) {
        server.route({
            method: 'GET',
            path: `/f/${name}`,
            handler: (request, h) => {
                const useGzip = name === 'file-64k.txt' && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
                const body = useGzip ? gzip : bodies[name];
                const notModified = h.entity({ etag: body.etag, modified: body.modified });
                if (notModified) {
                    return notModified;
                }

                const response = h
                    .response(body.bytes)
                    .type(name.endsWith('.txt') ? 'text/plain; charset=utf-8' : 'application/octet-stream');
                return useGzip ? response.header('content-encoding', 'gzip').vary('accept-encoding') : response;
            }
        });
    }
}

/**
 * The floor of a plugin that serves files from disk, changed ones fresh on the next request, for the
 * profiles (bench/profile/static-instructions.js, static-ab.js): what such a plugin cannot do without
 * and nothing else (no confinement, no content cache, no ranges, no encodings, no checks). A route
 * with a path parameter, as the `directory` handler's. A small file: one `lstat` per request, its
 * bytes and validators from memory (the in-memory route's answers). A large one: `open` and `fstat`,
 * then its bytes read on the thread pool in 256 KiB chunks into one buffer, filled again once the
 * connection has written the chunk, and written to the connection (Node has no `sendfile`); `floor-sync`
 * reads them on the event loop instead, which no server should do (a read that misses the page cache
 * stops every other request), to show what the thread pool's round trips cost.
 */
function floorRoutes(server) {
    const bodies = new Map(
        inMemory.map((name) => {
            const bytes = readFileSync(join(fixtures, name));
            const { mtime } = statSync(join(fixtures, name));
            return [name, { bytes, etag: `fixed-${name}-${bytes.length}`, modified: mtime.toUTCString() }];
        })
    );
    server.route({
        method: 'GET',
        path: '/f/{path*}',
        handler: (request, h) => {
            const name = request.params.path;
            const body = bodies.get(name);
            if (body === undefined) {
                return h.response().code(404);
            }

            if (body.bytes.length > 64 * 1024) {
                const fd = openSync(join(fixtures, name), 'r');
                const { size } = fstatSync(fd);
                return h
                    .response(new DiskChunks(fd, size, request.raw.res))
                    .type('application/octet-stream')
                    .bytes(size);
            }

            if (!lstatSync(join(fixtures, name)).isFile()) {
                return h.response().code(404);
            }

            const notModified = h.entity({ etag: body.etag, modified: body.modified });
            if (notModified) {
                return notModified;
            }

            return h.response(body.bytes).type('text/plain; charset=utf-8');
        }
    });
}

/** The floor's large body: chunks read on the thread pool into one buffer, a new one while the last is unwritten. */
class DiskChunks extends Readable {
    constructor(fd, size, sink) {
        super({ highWaterMark: 0 });
        Object.assign(this, { fd, left: size, position: 0, sink, buffer: Buffer.allocUnsafeSlow(256 * 1024) });
    }

    _read() {
        const buffer = this.sink.writableLength === 0 ? this.buffer : Buffer.allocUnsafeSlow(this.buffer.length);
        const length = Math.min(buffer.length, this.left);
        const readChunk = floorReadsSync
            ? (...args) => {
                  const callback = args.pop();
                  callback(null, readSync(...args));
              }
            : read;
        readChunk(this.fd, buffer, 0, length, this.position, (error, bytesRead) => {
            if (error || bytesRead === 0) {
                this.destroy(error ?? new Error('file shrank'));
                return;
            }

            this.position += bytesRead;
            this.left -= bytesRead;
            this.push(buffer.subarray(0, bytesRead));
            if (this.left === 0) {
                this.push(null);
            }
        });
    }

    _destroy(error, callback) {
        close(this.fd, () => callback(error));
    }
}

async function start() {
    if (kind === 'fastify') {
        const { default: Fastify } = await import('fastify');
        const { default: fastifyStatic } = await import('@fastify/static');
        const app = Fastify({ logger: false });
        await app.register(fastifyStatic, { root: fixtures, prefix: '/f/', preCompressed: true });
        await app.listen({ host: '127.0.0.1', port: 0 });
        return app.server.address().port;
    }

    let server;
    if (kind === 'tracewire') {
        const { staticFiles } = await import('tracewire');
        server = await hapiServer(staticFiles);
        fileRoutes(server);
    } else if (kind === 'tracewire@baseline') {
        const entry = pathToFileURL(join(baselineDirectory, 'dist', 'src', 'index.js')).href;
        const { staticFiles } = await import(entry);
        server = await hapiServer(staticFiles);
        fileRoutes(server);
    } else if (kind === 'inert') {
        const { default: Inert } = await import('@hapi/inert');
        server = await hapiServer(Inert);
        fileRoutes(server);
    } else if (kind === 'fixed') {
        server = await hapiServer(null);
        fixedRoutes(server);
    } else if (kind === 'floor' || kind === 'floor-sync') {
        server = await hapiServer(null);
        floorRoutes(server);
    } else {
        throw new Error(
            `unknown server kind ${kind}: tracewire, tracewire@baseline, inert, fixed, floor, floor-sync or fastify`
        );
    }

    await server.start();
    return server.info.port;
}

// The memory benchmark asks for this process's RSS growth while it serves a large file.
const probe = new RssProbe();
answerParent({
    startProbe: () => {
        probe.start();
        return {};
    },
    stopProbe: () => probe.stop(),
    // The stalled-readers row reads the RSS after a GC, what the responses in flight hold.
    rss: () => {
        globalThis.gc?.();
        return { rss: process.memoryUsage.rss() };
    },
    // The static section divides this process's CPU time by the requests wrk completed.
    cpu: () => process.cpuUsage()
});

start().then(
    (port) => process.send({ ready: true, port }),
    (error) => {
        process.send({ error: error.stack ?? String(error) });
        process.exit(1);
    }
);
process.on('SIGTERM', () => process.exit(0));
