import { once } from 'node:events';
import { Redis as IORedis, Cluster as IORedisCluster, type RedisOptions } from 'ioredis';
import { Redis as IORedis5, Cluster as IORedis5Cluster } from 'ioredis5';
import { Valkey, Cluster as ValkeyCluster } from 'iovalkey';

/**
 * The clients a `RedisCacheStore` is tested with (README "Cache stores" names them): ioredis 6 and 5
 * (the peer range) and iovalkey, whose interfaces match, a `Redis` and a `Cluster` of each. Typed as ioredis's here, for
 * the raw commands the tests send beside the store.
 */

export type AppClient = IORedis;
export type AppCluster = IORedisCluster;

export interface ClientKind {
    readonly name: 'ioredis' | 'ioredis 5' | 'iovalkey';
    /** A client of the server on `port`, connected; `options` as an application would set them. */
    connect(port: number, options?: RedisOptions): Promise<AppClient>;
    /** The same, not waited for (`lazyConnect: true` leaves it unconnected). */
    create(port: number, options?: RedisOptions): AppClient;
    /** A cluster client of the cluster whose masters listen on `ports`, ready. */
    cluster(ports: number[]): Promise<AppCluster>;
}

// Reconnect at once, as a test waits for it (an application keeps the client's default backoff).
const testOptions: RedisOptions = { host: '127.0.0.1', retryStrategy: () => 50 };

export const clientKinds: readonly ClientKind[] = [
    {
        name: 'ioredis',
        connect: (port, options) => ready(new IORedis({ ...testOptions, port, ...options } as never)),
        create: (port, options) => listened(new IORedis({ ...testOptions, port, ...options } as never)),
        cluster: (ports) =>
            ready(
                new IORedisCluster(
                    ports.map((port) => ({ host: '127.0.0.1', port })),
                    { clusterRetryStrategy: () => 50 }
                )
            )
    },
    {
        name: 'ioredis 5',
        connect: (port, options) =>
            ready(new IORedis5({ ...testOptions, port, ...options } as never) as unknown as AppClient),
        create: (port, options) =>
            listened(new IORedis5({ ...testOptions, port, ...options } as never) as unknown as AppClient),
        cluster: (ports) =>
            ready(
                new IORedis5Cluster(
                    ports.map((port) => ({ host: '127.0.0.1', port })),
                    { clusterRetryStrategy: () => 50 }
                ) as unknown as AppCluster
            )
    },
    {
        name: 'iovalkey',
        connect: (port, options) =>
            ready(new Valkey({ ...testOptions, port, ...options } as never) as unknown as AppClient),
        create: (port, options) =>
            listened(new Valkey({ ...testOptions, port, ...options } as never) as unknown as AppClient),
        cluster: (ports) =>
            ready(
                new ValkeyCluster(
                    ports.map((port) => ({ host: '127.0.0.1', port })),
                    { clusterRetryStrategy: () => 50 }
                ) as unknown as AppCluster
            )
    }
];

interface Connecting {
    status: string;
    once(event: string, listener: () => void): unknown;
    on(event: 'error', listener: () => void): unknown;
}

// The application's client has its own error listener, as ioredis asks (it prints errors nobody listens to).
function listened<T extends Connecting>(client: T): T {
    client.on('error', () => {});
    return client;
}

async function ready<T extends Connecting>(client: T): Promise<T> {
    listened(client);
    if (client.status !== 'ready') {
        await once(client as never, 'ready');
    }

    return client;
}

/** Resolves once `condition()` holds, checking every few ms, or rejects after `ms`. */
export async function eventually(condition: () => boolean | Promise<boolean>, ms = 5_000): Promise<number> {
    const started = Date.now();
    while (!(await condition())) {
        if (Date.now() - started > ms) {
            throw new Error(`not true after ${ms} ms`);
        }

        await new Promise((resolve) => setTimeout(resolve, 2));
    }

    return Date.now() - started;
}

/** The Redis Cluster slot of `key` (CRC16/XMODEM of its hash tag, or of the whole key, mod 16384). */
export function clusterSlot(key: string): number {
    const open = key.indexOf('{');
    const close = open === -1 ? -1 : key.indexOf('}', open + 1);
    const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
    let crc = 0;
    for (const byte of Buffer.from(hashed)) {
        crc ^= byte << 8;
        for (let bit = 0; bit < 8; bit++) {
            crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
        }
    }

    return crc % 16384;
}
