/**
 * The `client` component: an event-first HTTP/HTTPS client (README, "Client"). `client` is the ready
 * instance; `client.defaults()` derives configured ones.
 */
import { Client } from './client.js';

export const client: Client = new Client();

export { MemoryCacheStore, type MemoryCacheStoreOptions } from './cache/memory-store.js';
export type { CacheOptions } from './cache/settings.js';
export { SqliteCacheStore, type SqliteCacheStoreOptions } from './cache/sqlite-store.js';
export type { CachedResponse, CacheStore } from './cache/store.js';
export type { CacheControl } from './cache-control.js';
export {
    CLIENT_CHANNELS,
    type PreRequestMessage,
    type RequestMessage,
    type ResponseMessage
} from './channels.js';
export { Client, type ClientEmitter } from './client.js';
export { clientRequestMarker } from './node-options.js';
export type { ReadableSource } from './read.js';
export type { PhaseTimeouts, TimeoutPhase, TimingPhases, Timings } from './timings.js';
export type {
    Agents,
    BeforeRedirect,
    ClientEvents,
    DefaultsOptions,
    EffectiveOptions,
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
} from './types.js';
