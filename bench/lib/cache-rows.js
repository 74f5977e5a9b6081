// The rows of the client section's cache rows (sections/client-cache.js), by library: each library's rows run
// in a process of its own (children/cache-runner.js), as the section's clients do. All talk to the section's
// origin server: GET /small (uncached), /cached (max-age=3600) and /revalidated (max-age=0 with an ETag,
// answered 304).
import { client, MemoryCacheStore } from 'tracewire';

/** The libraries, each with the rows it runs (the section's row names). */
export const cacheLibraries = {
    tracewire: [
        'tracewire, uncached',
        'tracewire, fresh hit',
        'tracewire, revalidated (304)',
        'tracewire, conditional GET without the cache (304)'
    ],
    'node:http': ['raw node:http, uncached', 'raw node:http, the floor of a revalidation (304, stored body)'],
    'undici 8': ['undici 8 interceptor, fresh hit', 'undici 8 interceptor, revalidated (304)']
};

/** The calls of `library`'s rows against the origin on `port`, by row name, and how to let go of them. */
export async function cacheRowsOf(library, port) {
    const origin = `http://127.0.0.1:${port}`;
    if (library === 'tracewire') {
        const cached = client.defaults({ cache: { store: new MemoryCacheStore() } });
        const { payload: stored } = await client.get(`${origin}/revalidated`);
        return {
            calls: {
                'tracewire, uncached': () => client.get(`${origin}/small`),
                'tracewire, fresh hit': () => cached.get(`${origin}/cached`),
                'tracewire, revalidated (304)': () => cached.get(`${origin}/revalidated`),
                // The same client's conditional GET with no cache at all, the stored body kept by hand: what a
                // revalidation costs on this client's pipeline before any of the cache's rules (lookup,
                // freshness, the 304's judgement and merge, the write, Cache-Status). Beside undici 8's `304`,
                // it bounds what any cache built on the pipeline can reach.
                'tracewire, conditional GET without the cache (304)': async () => {
                    const { res } = await client.get(`${origin}/revalidated`, { headers: { 'if-none-match': '"v1"' } });
                    if (res.statusCode !== 304) {
                        throw new Error(`a ${res.statusCode} where the origin answers 304`);
                    }

                    return stored;
                }
            },
            close() {}
        };
    }

    if (library === 'node:http') {
        const floor = rawFloor(port);
        return {
            calls: {
                'raw node:http, uncached': floor.uncached,
                'raw node:http, the floor of a revalidation (304, stored body)': floor.revalidated
            },
            close: floor.close
        };
    }

    if (library === 'undici 8') {
        // `undici8`, an alias of undici@8 so the other sections keep the undici line they compare with; it needs
        // Node.js 22.19 or later: on an older runtime the import fails and the section leaves the library out.
        const undici = await import('undici8');
        const dispatcher = new undici.Agent().compose(
            undici.interceptors.cache({ store: new undici.cacheStores.MemoryCacheStore() })
        );
        const get = async (path) =>
            Buffer.from(await (await undici.request(origin + path, { dispatcher })).body.arrayBuffer());
        return {
            calls: {
                'undici 8 interceptor, fresh hit': () => get('/cached'),
                'undici 8 interceptor, revalidated (304)': () => get('/revalidated')
            },
            close: () => dispatcher.close()
        };
    }

    throw new Error(`no cache rows for ${library}`);
}

/**
 * The floor of a revalidation, made with node:http's own calls: what any cache must at least do for a stale
 * entry — find it, send the conditional GET, read the `304`, merge its fields into the stored ones and keep
 * the result (RFC 9111 4.3.4), and give the caller the stored body — with none of the cache's rules (no
 * freshness worked out, no `Vary`, no `Cache-Status`, no events). Beside it, the same client's uncached GET:
 * their ratio is the best a revalidation can do against an uncached call on this transport. Its requests are
 * written as tracewire writes its own (src/client/wire/http1/turn-writes.ts: at once when no other awaits a
 * response, else together at the end of the turn), which a client on this transport can do: without it, the
 * floor would sit below what tracewire reaches.
 */
function rawFloor(port) {
    const http = process.getBuiltinModule('node:http');
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    const stored = new Map();
    let awaiting = 0;
    const get = (path, headers) =>
        new Promise((resolve, reject) => {
            const req = http.request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
                awaiting--;
                const chunks = [];
                res.on('data', (chunk) => chunks.push(chunk));
                res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
                res.on('error', reject);
            });
            req.on('error', (error) => {
                awaiting--;
                reject(error);
            });
            awaiting++;
            if (awaiting === 1) {
                req.end();
            } else {
                setImmediate(() => req.end());
            }
        });
    return {
        uncached: async () => (await get('/small', {})).body,
        async revalidated() {
            const path = '/revalidated';
            const entry = stored.get(path);
            const { res, body } = await get(path, entry === undefined ? {} : { 'if-none-match': entry.headers.etag });
            if (res.statusCode !== 304) {
                stored.set(path, { statusCode: res.statusCode, headers: res.headers, body });
                return body;
            }

            const updated = { ...entry, headers: { ...entry.headers, ...res.headers } };
            stored.set(path, updated);
            return updated.body;
        },
        close: () => agent.destroy()
    };
}
