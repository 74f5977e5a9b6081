// The servers of the static benchmark, one implementation per process:
//   node bench/servers/static.js <tracewire|inert|fixed|fastify> <fixtures directory>
// Every server answers /f/<name> (directory handler, or the fixed routes) and, for the two hapi
// plugins, /h/<name> (a route per file whose handler calls h.file()).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answerParent, RssProbe } from '../lib/processes.js';

const [kind, fixtures] = process.argv.slice(2);
const files = ['file-1k.txt', 'file-64k.txt', 'file-10m.bin', 'file-1g.bin'];

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

/** The ceiling for any hapi plugin: the same bodies from memory, no file system at all. */
function fixedRoutes(server) {
    const oneKiB = readFileSync(join(fixtures, 'file-1k.txt'), 'utf8');
    const sixtyFourKiB = readFileSync(join(fixtures, 'file-64k.txt'));
    const sixtyFourKiBGzip = readFileSync(join(fixtures, 'file-64k.txt.gz'));
    const tenMiB = readFileSync(join(fixtures, 'file-10m.bin'));
    server.route({
        method: 'GET',
        path: '/f/file-1k.txt',
        // Plain GETs get the bare string; only a conditional GET pays for hapi's entity check.
        handler: (request, h) => (request.headers['if-none-match'] ? (h.entity({ etag: 'fixed' }) ?? oneKiB) : oneKiB)
    });
    server.route({
        method: 'GET',
        path: '/f/file-64k.txt',
        handler: (request, h) => {
            if (request.headers['accept-encoding']?.includes('gzip')) {
                return h.response(sixtyFourKiBGzip).type('text/plain').header('content-encoding', 'gzip');
            }

            return h.response(sixtyFourKiB).type('text/plain');
        }
    });
    server.route({ method: 'GET', path: '/f/file-10m.bin', handler: () => tenMiB });
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
    } else if (kind === 'inert') {
        const { default: Inert } = await import('@hapi/inert');
        server = await hapiServer(Inert);
        fileRoutes(server);
    } else if (kind === 'fixed') {
        server = await hapiServer(null);
        fixedRoutes(server);
    } else {
        throw new Error(`unknown server kind ${kind}: tracewire, inert, fixed or fastify`);
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
    stopProbe: () => probe.stop()
});

start().then(
    (port) => process.send({ ready: true, port }),
    (error) => {
        process.send({ error: error.stack ?? String(error) });
        process.exit(1);
    }
);
process.on('SIGTERM', () => process.exit(0));
