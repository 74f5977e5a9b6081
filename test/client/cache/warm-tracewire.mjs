// Loads the parts of the built package that load on first use (the cache layer, RedisCacheStore's workings),
// as they are in a service that has taken traffic: a process that imports this first sends its first calls
// while its Redis client is still connecting, whatever the machine's load (redis-cold-start.test.ts). On a
// loaded test machine, loading them at the first call takes longer than connecting to a loopback server.
await import(new URL('../../../dist/src/client/cache/layer.js', import.meta.url).href);
await import(new URL('../../../dist/src/client/cache/stores/redis/redis-engine.js', import.meta.url).href);
