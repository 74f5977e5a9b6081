// One instance of a service starting cold (redis-cold-start.test.ts): a fresh process that makes its Redis
// client and its RedisCacheStore and, without waiting for the client to connect, sends its burst of GETs at
// once, as a service deployed under load does; then shuts down as the docs say (store.close(); await
// redis.quit()). It runs the built package (`npm test` builds first), its lazily loaded parts loaded first
// (warm-tracewire.mjs), so the burst is sent while the client connects. Arguments: the server's port, the
// key prefix, the client package, and the burst as JSON ({ urls, each, timeout, storeTimeout }: the URLs, the
// calls of each, the store's and the cache's bounds). It prints what each call came to, as JSON on one line.
import './warm-tracewire.mjs';
import { client, RedisCacheStore } from 'tracewire';

const [port, keyPrefix, clientPackage, burst] = process.argv.slice(2);
const { urls, each, timeout, storeTimeout } = JSON.parse(burst);
const { Redis } = await import(clientPackage);
const redis = new Redis({ host: '127.0.0.1', port: Number(port) });
redis.on('error', () => {});
const failures = [];
// The client's statuses as the cache made its lookups, the first first: what the calls were sent into.
const lookedUpWhile = new Set();
class WatchedStore extends RedisCacheStore {
    get(key) {
        lookedUpWhile.add(redis.status);
        return super.get(key);
    }
}

const store = new WatchedStore({
    client: redis,
    keyPrefix,
    timeout,
    onError: ({ operation, error }) => failures.push(`${operation}: ${error.message}`)
});
const cached = client.defaults({ cache: { store, shared: true, storeTimeout } });

const calls = urls.flatMap((url) =>
    Array.from({ length: each }, async () => {
        const { res, payload } = await cached.get(url);
        return { url, cacheStatus: res.headers['cache-status'], body: String(payload) };
    })
);
const answers = await Promise.all(calls);

store.close();
await redis.quit();
process.stdout.write(`${JSON.stringify({ lookedUpWhile: [...lookedUpWhile], answers, failures })}\n`);
