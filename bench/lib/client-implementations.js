// The clients of the client benchmark. Each offers the same two operations: GET → the body (a Buffer,
// or what the library resolves with when that holds it: tracewire's `{ res, payload }`), POST JSON →
// parsed reply. A GET is the library's own promise, with no async wrapper of ours around it: raw
// node:http's has none. A client process loads only its own client: not even `node:http` for the
// others (its ES module namespace alone, which loads Node's bundled undici, is 2 MB of heap that every
// full garbage collection walks: the 1 MiB case runs one every 20-odd requests).
import { pathToFileURL } from 'node:url';

export const jsonHeaders = { 'content-type': 'application/json' };

export const implementationNames = [
    'node:http',
    '@hapi/wreck',
    'undici',
    'undici 8',
    'fetch',
    'tracewire',
    'tracewire events',
    'tracewire@baseline',
    'tracewire events@baseline'
];

/** The implementation `name` talking to the origin on `port`; a `@baseline` one loads the build in `baselineDirectory`. */
export async function createImplementation(name, port, baselineDirectory) {
    const origin = `http://127.0.0.1:${port}`;
    switch (name) {
        case 'node:http':
            return rawNodeHttp(port);
        case '@hapi/wreck': {
            const { default: Wreck } = await import('@hapi/wreck');
            return {
                get: (path) => Wreck.get(origin + path),
                postJson: async (path, body) =>
                    (await Wreck.post(origin + path, { payload: body, headers: jsonHeaders, json: true })).payload
            };
        }
        case 'undici': {
            const undici = await import('undici');
            return {
                get: async (path) => Buffer.from(await (await undici.request(origin + path)).body.arrayBuffer()),
                postJson: async (path, body) =>
                    (await undici.request(origin + path, { method: 'POST', body, headers: jsonHeaders })).body.json(),
                close: () => undici.getGlobalDispatcher().close()
            };
        }
        case 'undici 8': {
            // undici 8 (the `undici8` alias; Node.js 22.19 or later), for the profile loops (lib/client-case.js).
            const undici = await import('undici8');
            return {
                get: async (path) => Buffer.from(await (await undici.request(origin + path)).body.arrayBuffer()),
                postJson: async (path, body) =>
                    (await undici.request(origin + path, { method: 'POST', body, headers: jsonHeaders })).body.json(),
                close: () => undici.getGlobalDispatcher().close()
            };
        }
        case 'fetch':
            return {
                get: async (path) => Buffer.from(await (await fetch(origin + path)).arrayBuffer()),
                postJson: async (path, body) =>
                    (await fetch(origin + path, { method: 'POST', body, headers: jsonHeaders })).json()
            };
        case 'tracewire':
        case 'tracewire events':
        case 'tracewire@baseline':
        case 'tracewire events@baseline': {
            const baseline = name.endsWith('@baseline');
            if (baseline && baselineDirectory === undefined) {
                throw new Error(`${name} needs the directory of the baseline's build`);
            }

            const { client } = await import(
                baseline ? pathToFileURL(`${baselineDirectory}/dist/src/index.js`).href : 'tracewire'
            );
            const instance = name.startsWith('tracewire events') ? client.defaults({ events: true }) : client;
            return {
                get: (path) => instance.get(origin + path),
                postJson: async (path, body) =>
                    (await instance.post(origin + path, { payload: body, headers: jsonHeaders, json: true })).payload
            };
        }
        default:
            throw new Error(`unknown client ${name}: ${implementationNames.join(', ')}`);
    }
}

function rawNodeHttp(port) {
    // As `require('node:http')` gives it, without the ES namespace.
    const http = process.getBuiltinModule('node:http');
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    const call = (method, path, body) =>
        new Promise((resolve, reject) => {
            const headers = body === undefined ? {} : { ...jsonHeaders, 'content-length': Buffer.byteLength(body) };
            const req = http.request({ host: '127.0.0.1', port, path, method, agent, headers }, (res) => {
                const chunks = [];
                res.on('data', (chunk) => chunks.push(chunk));
                res.on('end', () => resolve(Buffer.concat(chunks)));
                res.on('error', reject);
            });
            req.on('error', reject);
            req.end(body);
        });
    return {
        get: (path) => call('GET', path),
        postJson: async (path, body) => JSON.parse((await call('POST', path, body)).toString()),
        close: () => agent.destroy()
    };
}
