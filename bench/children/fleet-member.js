// One instance of a fleet for the stampede rows of the cache-redis section: a client whose cache is a
// RedisCacheStore on the section's redis-server, with coalescing on or off:
//   node bench/children/fleet-member.js <redis port> <key prefix> <on|off>
// Asked `{ type: 'stampede', url, count }`, it makes `count` concurrent GETs of `url` and reports when they settled.
import { subscribe } from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
import { client, RedisCacheStore } from 'tracewire';
import { answerParent } from '../lib/processes.js';

const [port, keyPrefix, coalesce] = process.argv.slice(2);
const redis = new Redis({ host: '127.0.0.1', port: Number(port) });
redis.on('error', () => {});
await new Promise((resolve) => redis.once('ready', resolve));
const store = new RedisCacheStore({ client: redis, keyPrefix });
const cached = client.defaults({ cache: { store, shared: true, coalesce: coalesce === 'on' } });

// The store's failures during a stampede (a call past its bound on a loaded loop, say).
let failures = 0;
subscribe('tracewire:client:cacheStoreError', () => failures++);

answerParent({
    async stampede({ url, count }) {
        failures = 0;
        const answers = await Promise.all(Array.from({ length: count }, () => cached.get(url)));
        return { settledAt: Date.now(), ok: answers.every(({ res }) => res.statusCode === 200), failures };
    }
});
process.on('SIGTERM', () => {
    store.close();
    redis.disconnect();
    process.exit(0);
});
process.send({ ready: true });
