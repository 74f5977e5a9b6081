/**
 * tracewire: an event-first HTTP client (`client`), HTTP error objects (`errors`), and for hapi a
 * static-file plugin (`staticFiles`) and a problem-details plugin (`problemDetails`, also
 * `errors.problemDetails`). OpenTelemetry instrumentation lives in `tracewire/instrumentation`.
 */
export {
    type CacheStore,
    client,
    MemoryCacheStore,
    type MemoryCacheStoreOptions,
    RedisCacheStore,
    type RedisCacheStoreOptions,
    SqliteCacheStore,
    type SqliteCacheStoreOptions
} from './client/index.js';
export * as errors from './errors/index.js';
export { problemDetails } from './errors/problem-plugin.js';
// From the plugin's own module, not the static entry: that one adds the plugin's typings to
// `@hapi/hapi` (h.file(), the handlers), which needs hapi; `tracewire/static` carries them.
export { staticFiles } from './static/plugin.js';
