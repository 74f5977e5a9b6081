/**
 * tracewire: an event-first HTTP client (`client`), HTTP error objects (`errors`) and a static-file
 * plugin for hapi (`staticFiles`). OpenTelemetry instrumentation lives in `tracewire/instrumentation`.
 */
export {
    type CacheStore,
    client,
    MemoryCacheStore,
    type MemoryCacheStoreOptions,
    SqliteCacheStore,
    type SqliteCacheStoreOptions
} from './client/index.js';
export * as errors from './errors/index.js';
export { staticFiles } from './static/index.js';
