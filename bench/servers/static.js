// The servers of the static benchmark, one implementation per process:
//   node bench/servers/static.js <tracewire|inert|fixed|fastify> <fixtures directory>
//   node bench/servers/static.js tracewire@baseline <fixtures directory> <the baseline checkout, built>
// Every server answers /f/<name> (directory handler, or the fixed routes) and, for the two hapi
// plugins, /h/<name> (a route per file whose handler calls h.file()).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { answerParent, RssProbe } from '../lib/processes.js';

const [kind, fixtures, baselineDirectory] = process.argv.slice(2);
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
    } else {
        throw new Error(`unknown server kind ${kind}: tracewire, tracewire@baseline, inert, fixed or fastify`);
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
