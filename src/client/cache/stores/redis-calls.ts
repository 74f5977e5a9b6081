import type { HttpError } from '../../../errors/index.js';
import { clientFailure } from '../../contract/errors.js';
import type { RedisCacheClient } from './redis-client.js';

/** What a `RedisCacheStore` call was doing when it failed. */
export type RedisStoreOperation = 'get' | 'set' | 'delete' | 'lockFill' | 'unlockFill' | 'awaitFill' | 'notices';

/**
 * Why it failed: `timeout` (no answer within the store's `timeout`), `unavailable` (not sent: the
 * client is not connected, or an earlier command is still unanswered past the timeout), `error`
 * (the server or the client answered with an error, or the store's own connection reported one).
 */
export type RedisStoreFailureReason = 'timeout' | 'unavailable' | 'error';

/** One failure, as `onError` gets it (README "Cache stores"): a counter's attributes and the error itself. */
export interface RedisStoreFailure {
    readonly operation: RedisStoreOperation;
    readonly reason: RedisStoreFailureReason;
    /** A 500 HttpError naming the store, the operation and the cause (kept as `cause` and `data`). */
    readonly error: HttpError;
}

/**
 * Every command a `RedisCacheStore` sends, bounded: answered within `timeout` ms or rejected, and never
 * queued behind a connection that is down or stalled. A client with an offline queue (ioredis's
 * default) would hold a command until the server is back, and a server that stopped answering holds
 * every later command of the connection behind the first: so a command is sent only while the
 * client is connected and no earlier one is overdue; the others fail at once, until the overdue one
 * is answered (or failed by the client). Each failure is reported once.
 */
export class BoundedCalls {
    // The command past its time that later ones would queue behind, until it settles.
    #overdue: Promise<unknown> | undefined;

    constructor(
        private readonly client: RedisCacheClient,
        readonly timeout: number,
        private readonly report: (failure: RedisStoreFailure) => void
    ) {}

    /** Sends a command with `send` now, or rejects at once when it would only wait. */
    run<T>(operation: RedisStoreOperation, send: () => Promise<T>): Promise<T> {
        const status = this.client.status;
        if (status !== 'ready' && status !== 'wait') {
            return Promise.reject(this.fail(operation, 'unavailable', `not sent: the client is ${status}`));
        }

        if (this.#overdue !== undefined) {
            const what = `not sent: an earlier command is unanswered after ${this.timeout} ms`;
            return Promise.reject(this.fail(operation, 'unavailable', what));
        }

        let pending: Promise<T>;
        try {
            pending = send();
        } catch (err) {
            return Promise.reject(this.fail(operation, 'error', `failed: ${(err as Error).message}`, err));
        }

        return new Promise<T>((resolve, reject) => {
            let settled = false;
            const timedOut = () => {
                if (settled) {
                    return;
                }

                settled = true;
                this.#overdue = pending;
                const clear = () => {
                    if (this.#overdue === pending) {
                        this.#overdue = undefined;
                    }
                };
                pending.then(clear, clear);
                reject(this.fail(operation, 'timeout', `took longer than ${this.timeout} ms`));
            };
            // After a loop turn blocked past the bound, timers run before the sockets are read: the answer
            // may be waiting there. It is read before the call is taken for timed out.
            const timer = setTimeout(() => setImmediate(timedOut), this.timeout);
            // The bound must not keep a process alive that has nothing else to do.
            timer.unref();
            pending.then(
                (value) => {
                    if (!settled) {
                        clearTimeout(timer);
                        resolve(value);
                    }
                },
                (err: unknown) => {
                    if (!settled) {
                        clearTimeout(timer);
                        reject(this.fail(operation, 'error', `failed: ${(err as Error)?.message}`, err));
                    }
                }
            );
        });
    }

    /** Reports a failure and returns its error. */
    fail(operation: RedisStoreOperation, reason: RedisStoreFailureReason, what: string, cause?: unknown): HttpError {
        const error = clientFailure(`RedisCacheStore ${operation} ${what}`, cause);
        this.report({ operation, reason, error });
        return error;
    }
}
