import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/**
 * Instances of a service sharing one Redis server through RedisCacheStore (docs/cache.md "Running as a
 * fleet"): each a process of its own with its own client package, driven over IPC (redis-fleet-member.mjs),
 * for redis-fleet.test.ts and redis-coalescing.test.ts.
 */

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const member = fileURLToPath(new URL('redis-fleet-member.mjs', import.meta.url));

/** What a call in an instance came to. */
export interface Answer {
    status?: number;
    cacheStatus?: string;
    revalidated?: string;
    body?: string;
    error?: string;
}

/** How the instances are made: each its store's `timeout`, and its client's `cache.coalesce`. */
export interface MemberSettings {
    timeout?: number | undefined;
    coalesce?: boolean | { lockTimeout?: number; passFor?: number };
    /** The cache's `storeTimeout` (default 250 ms). */
    storeTimeout?: number;
}

export class Instance {
    private calls = 0;
    private readonly pending = new Map<number, (answer: Answer) => void>();
    stderr = '';

    constructor(readonly process: ChildProcess) {
        process.stderr?.on('data', (chunk: Buffer) => {
            this.stderr += chunk.toString();
        });
        process.on('message', (message: Answer & { id?: number }) => {
            if (message.id !== undefined) {
                this.pending.get(message.id)?.(message);
                this.pending.delete(message.id);
            }
        });
    }

    /** A call in the instance: through a helper (`get()`...), or `request()` then `read()`. */
    call(
        method: string,
        url: string,
        headers: Record<string, string> = {},
        via: 'helper' | 'read' = 'read'
    ): Promise<Answer> {
        const id = ++this.calls;
        return new Promise((resolve) => {
            this.pending.set(id, resolve);
            this.process.send({ id, method, url, headers, via });
        });
    }
}

let fleets = 0;

/** Instances on the server at `port` under one fresh prefix, one per client package given (each a package name). */
export async function startFleet(
    port: number,
    packages: readonly string[],
    tier: boolean,
    settings: MemberSettings = {}
): Promise<{ instances: Instance[]; prefix: string }> {
    const prefix = `fleet${++fleets}:`;
    const instances = packages.map((clientPackage) => {
        const args = [member, String(port), prefix, tier ? 'tier' : 'no-tier', clientPackage, JSON.stringify(settings)];
        const child = spawn(process.execPath, args, { cwd: repo, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
        return new Instance(child);
    });
    await Promise.all(
        instances.map(
            (instance) =>
                new Promise<void>((resolve, reject) => {
                    instance.process.once('message', () => resolve());
                    instance.process.once('exit', () => reject(new Error(`an instance exited: ${instance.stderr}`)));
                })
        )
    );
    return { instances, prefix };
}

/** Closes the instances' stores and clients: each must then exit by itself, nothing left running. */
export async function closeAll(instances: Instance[]): Promise<void> {
    await Promise.all(
        instances.map(async (instance) => {
            const exited = once(instance.process, 'exit');
            instance.process.send({ close: true });
            const [code] = (await exited) as [number];
            expect(code).toBe(0);
            expect(instance.stderr).toBe('');
        })
    );
}
