import { channel } from 'node:diagnostics_channel';
import type { EventEmitter } from 'eventemitter3';
import type { HttpError } from '../../errors/index.js';
import type { CacheStore } from '../contract/cache-store.js';
import type { ClientEvents, EffectiveOptions, HopRequest, RequestUri, ResponseDetails } from '../contract/types.js';
import type { CallTrace } from './tracing.js';

/**
 * The `node:diagnostics_channel` names every client publishes its pipeline on (README "Diagnostics
 * channels"): a public contract for APM tools, the process-wide twin of a client's `events`; and the
 * channel the cache's store failures are published on, for a metric.
 */
export const CLIENT_CHANNELS = {
    preRequest: 'tracewire:client:preRequest',
    request: 'tracewire:client:request',
    response: 'tracewire:client:response',
    cacheStoreError: 'tracewire:client:cacheStoreError'
} as const;

/** The message of `tracewire:client:preRequest`: the arguments of the `preRequest` event. */
export interface PreRequestMessage {
    uri: RequestUri;
    options: EffectiveOptions;
}

/** The message of `tracewire:client:request`: the `HopRequest`, and the hop's `uri` it belongs to. */
export interface RequestMessage {
    req: HopRequest;
    uri: RequestUri;
}

/**
 * The message of `tracewire:client:response`, once per hop: the arguments of the `response` event,
 * the hop's `timings` among the details (README "Timings").
 */
export interface ResponseMessage {
    err: HttpError | undefined;
    details: ResponseDetails;
}

/**
 * The message of `tracewire:client:cacheStoreError`, once per failed call to a cache store (docs/cache.md
 * "Store failures"): the failure never reached a request (the cache went on without the store), so this
 * is where a metric counts it.
 */
export interface CacheStoreErrorMessage {
    /** The store call: `get`, `set`, `delete`, `lockFill`, `unlockFill`, `awaitFill`, or a store's own (`notices`). */
    operation: string;
    /**
     * `timeout`: no answer within the bound (the cache's, or the store's own); `unavailable`: not even sent
     * (RedisCacheStore while its server is out of reach); `error`: it threw or rejected.
     */
    reason: 'timeout' | 'unavailable' | 'error';
    /** A 500 HttpError naming the store call and the cause. */
    error: HttpError;
    /** The store that failed. */
    store: CacheStore;
}

// Held here for the life of the process: Node keeps a channel without subscribers only weakly.
const preRequestChannel = channel(CLIENT_CHANNELS.preRequest);
const requestChannel = channel(CLIENT_CHANNELS.request);
const responseChannel = channel(CLIENT_CHANNELS.response);
const cacheStoreErrorChannel = channel(CLIENT_CHANNELS.cacheStoreError);

// A failure seen twice (a store reports its own, then the cache sees the call reject with it) counts once.
const publishedFailures = new WeakSet<HttpError>();

/** Publishes a store failure on `tracewire:client:cacheStoreError`, once per error, while it has subscribers. */
export function publishCacheStoreError(message: CacheStoreErrorMessage): void {
    if (cacheStoreErrorChannel.hasSubscribers && !publishedFailures.has(message.error)) {
        publishedFailures.add(message.error);
        cacheStoreErrorChannel.publish(message);
    }
}

/** What a request reports its hops to: a client's emitter, or the publisher below. */
export interface PipelineEmitter {
    /** The call's tracing (tracing.ts), when a tracing channel had a subscriber as it began. */
    readonly tracing?: CallTrace | undefined;
    emit(event: 'preRequest', uri: RequestUri, options: EffectiveOptions): unknown;
    emit(event: 'request', req: HopRequest): unknown;
    emit(event: 'response', err: HttpError | undefined, details: ResponseDetails): unknown;
}

/**
 * What a new request reports to: the client's observed emitter (or none) when no channel has a
 * subscriber and the call is not traced, the usual case, which costs three `hasSubscribers` reads;
 * else a publisher that feeds the emitter and the channels, and carries the call's tracing. Like the
 * emitter's, the choice holds for the whole request.
 */
export function withChannels(
    events: EventEmitter<ClientEvents> | undefined,
    tracing: CallTrace | undefined
): PipelineEmitter | undefined {
    const plain = preRequestChannel.hasSubscribers || requestChannel.hasSubscribers || responseChannel.hasSubscribers;
    return plain || tracing !== undefined ? new ChannelPublisher(events, tracing, plain) : events;
}

/**
 * Emits each pipeline event on the client's emitter first (an `instrumentClient()` on it claims the
 * hop before a process-wide instrumentation sees it), then publishes it. The channel gets every
 * event even when an emitter listener throws, whose error still reaches the request as it would
 * without channels. A throwing channel subscriber never reaches the request: Node reports it as an
 * `uncaughtException` on a later tick (README "Diagnostics channels").
 */
class ChannelPublisher implements PipelineEmitter {
    // The hop under way, for the `request` message.
    private uri: RequestUri | undefined;

    constructor(
        private readonly events: EventEmitter<ClientEvents> | undefined,
        readonly tracing: CallTrace | undefined,
        // Whether the plain channels had a subscriber as the request began: made for the tracing channels
        // alone, the publisher builds no message for them, and a subscriber that comes later gets none of
        // this request's (never a `response` without its `preRequest`).
        private readonly plain: boolean
    ) {}

    emit(event: 'preRequest', uri: RequestUri, options: EffectiveOptions): unknown;
    emit(event: 'request', req: HopRequest): unknown;
    emit(event: 'response', err: HttpError | undefined, details: ResponseDetails): unknown;
    emit(event: keyof ClientEvents, first: unknown, second?: unknown): unknown {
        const events = this.events;
        switch (event) {
            case 'preRequest':
                this.uri = first as RequestUri;
                try {
                    events?.emit('preRequest', first as RequestUri, second as EffectiveOptions);
                } finally {
                    if (this.plain) {
                        preRequestChannel.publish({ uri: first, options: second });
                    }
                }

                return undefined;
            case 'request':
                try {
                    events?.emit('request', first as HopRequest);
                } finally {
                    if (this.plain) {
                        requestChannel.publish({ req: first, uri: this.uri });
                    }
                }

                return undefined;
            default:
                try {
                    events?.emit('response', first as HttpError | undefined, second as ResponseDetails);
                } finally {
                    if (this.plain) {
                        responseChannel.publish({ err: first, details: second });
                    }
                }

                return undefined;
        }
    }
}
