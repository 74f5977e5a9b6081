import { randomUUID } from 'node:crypto';
import type { FillLock, FillLocks, FillWait } from '../../../contract/cache-store.js';
import type { BoundedCalls } from './redis-calls.js';
import type { RedisCacheClient } from './redis-client.js';
import { everything, type ResourceKeys } from './redis-keys.js';
import { lockState, releaseLock, takeLock } from './redis-scripts.js';

// A waiter looks again after these pauses (doubling), or as soon as a notice names its key.
const firstPause = 10;
const longestPause = 200;

/** One waiter's wake-up: by a notice for its key, or by its pause running out. */
interface Waiter {
    noticed: boolean;
    wake: (() => void) | undefined;
}

/**
 * The fill locks of a `RedisCacheStore` (`FillLocks`, contract/cache-store.ts): `<prefix>{<id>}:lock` taken with SET NX PX
 * and a random token, released by compare-and-delete, so a lock expires on the server after its ttl
 * whatever becomes of its holder, and no one but its holder releases it. A waiter polls the lock's
 * state with growing pauses and is woken early by the notice the release publishes (when the store's
 * notices connection is up; the polling alone is enough without it).
 */
export class RedisFillLocks implements FillLocks {
    readonly #waiters = new Map<string, Set<Waiter>>();
    // The locks this store holds, token to key, until their release is sent: `releaseHeld()` sends the rest.
    readonly #held = new Map<string, string>();
    #listening = false;

    constructor(
        private readonly client: RedisCacheClient,
        private readonly calls: BoundedCalls,
        private readonly keysOf: (key: string) => ResourceKeys,
        private readonly channel: string,
        private readonly listen: (listener: (id: string) => void) => void
    ) {}

    async lockFill(key: string, ttl: number): Promise<FillLock> {
        checkTime(ttl, 'lockFill ttl');
        const keys = this.keysOf(key);
        const token = randomUUID();
        // Counted as held from the moment it is asked for: a release sent meanwhile (`releaseHeld()`) reaches
        // the server after the lock, on the same connection, and undoes it.
        this.#held.set(token, key);
        let answer: unknown;
        try {
            answer = await this.calls.run('lockFill', () =>
                this.client.eval(takeLock, 2, keys.lock, keys.pass, token, ttl)
            );
        } catch (err) {
            this.#held.delete(token);
            throw err;
        }

        if (answer !== 'acquired') {
            this.#held.delete(token);
            return { acquired: false, reason: answer === 'pass' ? 'pass' : 'held' };
        }

        return { acquired: true, token };
    }

    /** Sends the release at once (before this call returns), so a `quit()` the application sends next comes after it. */
    async unlockFill(key: string, token: string, passFor = 0): Promise<boolean> {
        checkTime(passFor, 'unlockFill passFor', true);
        this.#held.delete(token);
        return (await this.#release(key, token, passFor)) === 1;
    }

    /**
     * Sends the release of every lock still held (the store is closing, docs/cache.md "Fill locks"): a
     * lock must not outlive its holder, or another instance's calls for its URL would wait for it until it
     * expires. Sent before this returns, so an application's `quit()` right after comes after them.
     */
    releaseHeld(): void {
        for (const [token, key] of this.#held) {
            this.#release(key, token, 0).catch(() => {
                // Counted by the calls: the lock then expires on the server at its ttl.
            });
        }

        this.#held.clear();
    }

    #release(key: string, token: string, passFor: number): Promise<unknown> {
        const keys = this.keysOf(key);
        return this.calls.run('unlockFill', () =>
            // Without the instance: waiters in this process too are woken.
            this.client.eval(releaseLock, 2, keys.lock, keys.pass, token, passFor, this.channel, keys.id)
        );
    }

    /** True while this store holds (or is taking) `token`'s lock and has not sent its release. */
    holds(token: string): boolean {
        return this.#held.has(token);
    }

    async awaitFill(key: string, timeout: number): Promise<FillWait> {
        checkTime(timeout, 'awaitFill timeout', true);
        if (!this.#listening) {
            this.#listening = true;
            this.listen((id) => this.#noticed(id));
        }

        const keys = this.keysOf(key);
        const giveUpAt = Date.now() + timeout;
        for (let pause = firstPause; ; pause = Math.min(pause * 2, longestPause)) {
            // Listening before looking: a notice sent between the look and the pause is not missed.
            const waiter = this.#wait(keys.id);
            try {
                const state = asState(
                    await this.calls.run('awaitFill', () => this.client.eval(lockState, 2, keys.lock, keys.pass))
                );
                if (state !== 'held') {
                    return state;
                }

                const left = giveUpAt - Date.now();
                if (left <= 0) {
                    return 'timeout';
                }

                if (!waiter.noticed) {
                    let timer: NodeJS.Timeout | undefined;
                    await new Promise<void>((resolve) => {
                        waiter.wake = resolve;
                        timer = setTimeout(resolve, Math.min(pause, left));
                    });
                    clearTimeout(timer);
                }
            } finally {
                this.#stopWaiting(keys.id, waiter);
            }
        }
    }

    #wait(id: string): Waiter {
        const waiter: Waiter = { noticed: false, wake: undefined };
        let waiters = this.#waiters.get(id);
        if (waiters === undefined) {
            waiters = new Set();
            this.#waiters.set(id, waiters);
        }

        waiters.add(waiter);
        return waiter;
    }

    #stopWaiting(id: string, waiter: Waiter): void {
        const waiters = this.#waiters.get(id);
        waiters?.delete(waiter);
        if (waiters?.size === 0) {
            this.#waiters.delete(id);
        }
    }

    #noticed(id: string): void {
        const woken = id === everything ? [...this.#waiters.values()] : [this.#waiters.get(id) ?? []];
        for (const waiters of woken) {
            for (const waiter of waiters) {
                waiter.noticed = true;
                waiter.wake?.();
            }
        }
    }
}

function asState(answer: unknown): 'held' | 'pass' | 'released' {
    return answer === 'pass' || answer === 'released' ? answer : 'held';
}

function checkTime(value: unknown, name: string, zero = false): void {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < (zero ? 0 : 1)) {
        throw new TypeError(`RedisCacheStore ${name} must be a ${zero ? 'non-negative' : 'positive'} integer (ms)`);
    }
}
