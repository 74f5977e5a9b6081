import type { HttpError } from '../../../../errors/index.js';
import { invalidOption } from '../../../contract/errors.js';
import { isCount } from '../../../options/values.js';
import type { RedisStoreFailure } from './redis-calls.js';
import { isRedisCacheClient, type RedisCacheClient } from './redis-client.js';

/** The settings of a `RedisCacheStore` (README "Cache stores"); null or undefined means "not set". */
export interface RedisCacheStoreOptions {
    /** The application's ioredis or iovalkey client (`Redis` or `Cluster`); the store never ends it. */
    client: RedisCacheClient;
    /** Put before every key and channel name; no `{` or `}` (the store's own hash tags follow it). Default `'tracewire:cache:'`. */
    keyPrefix?: string | null | undefined;
    /** The largest entry stored, in bytes (body and head); a larger one is declined. Default 1 MiB. */
    maxEntrySize?: number | null | undefined;
    /** The most variants kept for one URL (`Vary`); past it the oldest stored go. Default 16. */
    maxVariants?: number | null | undefined;
    /** How long a call waits for the server, in ms, before it rejects. Default 100. */
    timeout?: number | null | undefined;
    /** A tier in this process's memory in front of the server, kept current by change notices. Default off. */
    localTier?: boolean | RedisLocalTierOptions | null | undefined;
    /**
     * Called with each failure (a log line); what it throws is ignored. Each failure is published on
     * `tracewire:client:cacheStoreError` whether or not it is given (docs/cache.md "Store failures").
     */
    onError?: ((failure: RedisStoreFailure) => void) | null | undefined;
}

/** The bounds of the local tier; an absent one keeps its default. */
export interface RedisLocalTierOptions {
    /** Bytes held. Default 64 MiB. */
    maxSize?: number | null | undefined;
    /** Stored responses held (each variant counts). Default 4096. */
    maxCount?: number | null | undefined;
    /**
     * ms between two heartbeats the store sends itself through the server: a heartbeat not back
     * before the next empties the tier until one is. Default 1000.
     */
    heartbeat?: number | null | undefined;
}

/** The options resolved, defaults applied. */
export interface RedisStoreSettings {
    readonly client: RedisCacheClient;
    readonly keyPrefix: string;
    readonly maxEntrySize: number;
    readonly maxVariants: number;
    readonly timeout: number;
    readonly localTier: { maxSize: number; maxCount: number } | undefined;
    readonly heartbeat: number;
    readonly onError: ((failure: RedisStoreFailure) => void) | undefined;
}

const defaults = {
    keyPrefix: 'tracewire:cache:',
    maxEntrySize: 2 ** 20,
    maxVariants: 16,
    timeout: 100,
    localMaxSize: 64 * 2 ** 20,
    localMaxCount: 4096,
    heartbeat: 1000
};
// The server's default bound on one value (proto-max-bulk-len).
const largestEntry = 512 * 2 ** 20;

/** The first invalid option as a 500 HttpError naming it, or undefined. */
export function checkRedisStoreOptions(options: unknown): HttpError | undefined {
    if (typeof options !== 'object' || options === null) {
        return invalidOption('RedisCacheStore options must be an object with a client');
    }

    const { client, keyPrefix, maxEntrySize, maxVariants, timeout, localTier, onError } =
        options as RedisCacheStoreOptions;
    if (!isRedisCacheClient(client)) {
        return invalidOption(
            'Option client must be an ioredis or iovalkey client (status, hgetallBuffer, eval, publish, duplicate)'
        );
    }

    if (isSet(keyPrefix) && (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix))) {
        return invalidOption('Option keyPrefix must be a string without { or } (the store adds its own hash tags)');
    }

    const counts: [string, unknown, number][] = [
        ['maxEntrySize', maxEntrySize, largestEntry],
        ['maxVariants', maxVariants, 1024],
        ['timeout', timeout, 60_000]
    ];
    if (typeof localTier === 'object' && localTier !== null) {
        counts.push(
            ['localTier.maxSize', localTier.maxSize, Number.MAX_SAFE_INTEGER],
            ['localTier.maxCount', localTier.maxCount, Number.MAX_SAFE_INTEGER],
            ['localTier.heartbeat', localTier.heartbeat, 60_000]
        );
    } else if (isSet(localTier) && typeof localTier !== 'boolean') {
        return invalidOption('Option localTier must be a boolean or an object of bounds');
    }

    for (const [name, value, most] of counts) {
        if (isSet(value) && !(isCount(value) && (value as number) > 0 && (value as number) <= most)) {
            return invalidOption(`Option ${name} must be a positive integer up to ${most}`);
        }
    }

    if (isSet(onError) && typeof onError !== 'function') {
        return invalidOption('Option onError must be a function');
    }

    return undefined;
}

/** The settings of options `checkRedisStoreOptions` accepted. */
export function resolveRedisStoreOptions(options: RedisCacheStoreOptions): RedisStoreSettings {
    const tier = options.localTier;
    const bounds = typeof tier === 'object' && tier !== null ? tier : {};
    return {
        client: options.client,
        keyPrefix: options.keyPrefix ?? defaults.keyPrefix,
        maxEntrySize: options.maxEntrySize ?? defaults.maxEntrySize,
        maxVariants: options.maxVariants ?? defaults.maxVariants,
        timeout: options.timeout ?? defaults.timeout,
        localTier:
            tier === true || (typeof tier === 'object' && tier !== null)
                ? {
                      maxSize: bounds.maxSize ?? defaults.localMaxSize,
                      maxCount: bounds.maxCount ?? defaults.localMaxCount
                  }
                : undefined,
        heartbeat: bounds.heartbeat ?? defaults.heartbeat,
        onError: options.onError ?? undefined
    };
}

function isSet(value: unknown): boolean {
    return value !== undefined && value !== null;
}
