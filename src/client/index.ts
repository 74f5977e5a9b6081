/**
 * The `client` component: an event-first HTTP/HTTPS client (README, "Client"). `client` is the ready
 * instance; `client.defaults()` derives configured ones.
 */
import { Client } from './surface/client.js';

export const client: Client = new Client();

export type { ReadableSource } from './bodies/read.js';
export { type CacheOutcome, cacheOutcomeOf, cacheStoredOf } from './cache/cache-status.js';

export { MemoryCacheStore, type MemoryCacheStoreOptions } from './cache/stores/memory-store.js';
export {
    RedisCacheStore,
    type RedisCacheStoreOptions,
    type RedisStoreFailure
} from './cache/stores/redis/redis-store.js';
export { SqliteCacheStore, type SqliteCacheStoreOptions } from './cache/stores/sqlite-store.js';
export type { CachedResponse, CacheStore, FillLock, FillLocks, FillWait } from './contract/cache-store.js';
export {
    type Http2SessionEnd,
    type Http2StreamFailure,
    isProxyRefusal,
    isReadFailure,
    isRedirectFailure,
    isRequestFailure,
    isResponseError,
    type ProxyRefusalData,
    type ReadFailureData,
    type RedirectHop,
    type RedirectTrace,
    type RequestFailureData
} from './contract/failure-data.js';
export type { PhaseTimeouts, TimeoutPhase, TimingPhases, Timings } from './contract/timings.js';
export type {
    Agents,
    BeforeRedirect,
    CacheOptions,
    ClientEvents,
    CoalesceOptions,
    DefaultsOptions,
    EffectiveOptions,
    HopRequest,
    HopResponse,
    Http2Options,
    NetworkStandIn,
    OutgoingHeaders,
    Payload,
    ProgressCallback,
    ReadOptions,
    Redirected,
    RequestAndReadOptions,
    RequestOptions,
    RequestPromise,
    RequestUri,
    ResendReason,
    ResponseDetails,
    ResponseErrorData,
    ResponseWithPayload,
    RetryOptions,
    TimedResponse,
    TransferProgress
} from './contract/types.js';
export {
    type CacheStoreErrorMessage,
    CLIENT_CHANNELS,
    type PreRequestMessage,
    type RequestMessage,
    type ResponseMessage
} from './pipeline/channels.js';
export { afterErrorRead } from './pipeline/error-read.js';
export {
    type CallMessage,
    CLIENT_TRACING_CHANNELS,
    type HopMessage,
    type HopReason
} from './pipeline/tracing.js';
export type { CacheControl } from './surface/cache-control.js';
export { Client, type ClientEmitter, type ClientWithEvents } from './surface/client.js';
export { type RequestScope, requestScopeKey } from './wire/http1/node-http.js';
export { clientRequestMarker } from './wire/http1/node-options.js';
export { Http2Request, isHttp2Request } from './wire/http2/request.js';
export { type Http2SessionEndReport, http2SessionEndOf } from './wire/http2-session-end.js';
export { type OpenSession as OpenHttp2Session, openSessionsOf as openHttp2Sessions } from './wire/session-census.js';
export { monotonicAt as timingsToMonotonic, timestamp as timingsNow } from './wire/timings-clock.js';
