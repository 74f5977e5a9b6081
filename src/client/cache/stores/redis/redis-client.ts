/**
 * The part of a Redis or Valkey client a `RedisCacheStore` uses, as ioredis and iovalkey (their
 * `Redis` and `Cluster` alike) offer it: the store names no client package, the application passes
 * the one it has (README "Cache stores").
 */

/** A value sent as a command argument. */
export type RedisArgument = string | Buffer | number;

/** The application's client: the store sends its commands on it, and duplicates it for its notices. */
export interface RedisCacheClient {
    /**
     * `'ready'` once connected; the store sends only then (or before a lazy client's first connection,
     * `'wait'`). While it connects (`'connecting'`, `'connect'`, `'reconnecting'`), a call waits for
     * `'ready'` within the store's `timeout`.
     */
    readonly status: string;
    /** The store waits for `'ready'` this way while the client connects, and stops waiting on `close()`. */
    once(event: 'ready', listener: () => void): unknown;
    removeListener(event: 'ready', listener: () => void): unknown;
    hgetallBuffer(key: string): Promise<Record<string, Buffer>>;
    eval(script: string, numberOfKeys: number, ...args: RedisArgument[]): Promise<unknown>;
    publish(channel: string, message: string): Promise<unknown>;
    /** A new connection with the same settings: the store's own, for the notices it subscribes to. */
    duplicate(): RedisSubscriberClient;
}

/** The connection the store makes with `duplicate()` and owns: it subscribes on it, and ends it on `close()`. */
export interface RedisSubscriberClient {
    readonly status: string;
    subscribe(...channels: string[]): Promise<unknown>;
    on(event: 'message', listener: (channel: string, message: string) => void): unknown;
    on(event: 'ready' | 'close', listener: () => void): unknown;
    on(event: 'error', listener: (error: Error) => void): unknown;
    disconnect(): void;
}

/** True when `value` has the methods of a `RedisCacheClient`. */
export function isRedisCacheClient(value: unknown): value is RedisCacheClient {
    const client = value as Partial<Record<keyof RedisCacheClient, unknown>> | null;
    return (
        typeof value === 'object' &&
        client !== null &&
        typeof client.status === 'string' &&
        ['hgetallBuffer', 'eval', 'publish', 'duplicate', 'once', 'removeListener'].every(
            (name) => typeof client[name as keyof RedisCacheClient] === 'function'
        )
    );
}
