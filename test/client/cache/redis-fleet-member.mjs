// One instance of a service (redis-fleet.ts): a process with a client whose cache is a RedisCacheStore on
// the shared server, driven over IPC by the test. It runs the built package (`npm test` builds first), as
// the instances of a fleet run what was deployed. Arguments: the server's port, the key prefix, 'tier' or
// 'no-tier', the client package, and the settings as JSON ({ timeout, coalesce, storeTimeout }).
import { once } from 'node:events';
import { client, RedisCacheStore } from 'tracewire';

const [port, keyPrefix, tier, clientPackage, settings] = process.argv.slice(2);
const { timeout, coalesce, storeTimeout } = JSON.parse(settings ?? '{}');
const { Redis } = await import(clientPackage);
const redis = new Redis({ host: '127.0.0.1', port: Number(port) });
redis.on('error', () => {});
await once(redis, 'ready');
const store = new RedisCacheStore({
    client: redis,
    keyPrefix,
    timeout,
    localTier: tier === 'tier' ? { heartbeat: 200 } : false
});
while (tier === 'tier' && !store.localTierLive) {
    await new Promise((resolve) => setTimeout(resolve, 5));
}

const cached = client.defaults({ cache: { store, shared: true, coalesce, storeTimeout } });

process.on('message', async (message) => {
    if (message.close) {
        store.close();
        redis.disconnect();
        process.disconnect();
        return;
    }

    const { id, method, url, headers, via } = message;
    let answer;
    try {
        // A helper reads the body itself (get(), post()); request() hands it over, and read() reads it.
        const { res, payload } =
            via === 'helper'
                ? await cached[method.toLowerCase()](url, { headers })
                : await cached.request(method, url, { headers }).then(async (res) => ({
                      res,
                      payload: await cached.read(res)
                  }));
        answer = {
            status: res.statusCode,
            cacheStatus: res.headers['cache-status'],
            revalidated: res.headers['x-revalidated'],
            body: String(payload)
        };
    } catch (err) {
        answer = { error: err.message };
    }

    // Answered at once: what the call stored has landed before it settled (docs/cache.md, "What is consistent").
    process.send({ id, ...answer });
});

process.send({ ready: true });
