import type { HttpError } from '../../../../errors/index.js';
import { clientFailure } from '../../../contract/errors.js';
import type { RedisCacheClient } from './redis-client.js';

/** What a `RedisCacheStore` call was doing when it failed. */
export type RedisStoreOperation = 'get' | 'set' | 'delete' | 'lockFill' | 'unlockFill' | 'awaitFill' | 'notices';

/**
 * Why it failed: `timeout` (no answer within the store's `timeout`), `unavailable` (not sent: the
 * client did not connect within the timeout, or is closed, or an earlier command is still unanswered
 * past the timeout), `error`
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

// The statuses of a client on its way to `'ready'` (ioredis and iovalkey, a `Redis` and a `Cluster` alike).
const connecting = new Set(['connecting', 'connect', 'reconnecting']);
// The statuses of a client that will not connect again unless the application makes it.
const closed = new Set(['close', 'end', 'disconnecting']);

/** A call waiting for the client to be ready: sent then, or rejected at its bound or when the store closes. */
interface ConnectionWait {
    readonly ready: () => void;
    readonly cancel: (error: HttpError) => void;
}

/**
 * Every command a `RedisCacheStore` sends, bounded: answered within `timeout` ms or rejected, and never
 * queued behind a connection that is down or stalled. A client with an offline queue (ioredis's
 * default) would hold a command until the server is back, and send it then, long after the call gave up
 * on it (a fill lock taken for no one); a server that stopped answering holds every later command of the
 * connection behind the first. So a command is sent only while the client is connected and no earlier
 * one is overdue. A call made while the client connects (a process starting, the server back after a
 * restart) waits for the connection up to `timeout`, then is sent and waits for its answer up to
 * `timeout`: the first calls of an instance are looked up, stored and take the fill locks like the next
 * ones (docs/cache.md "Faults"). Past a bound the other calls fail at once, until the client is ready or
 * the overdue command is answered (or failed by the client). Each failure is reported once.
 */
export class BoundedCalls {
    // The command past its time that later ones would queue behind, until it settles.
    #overdue: Promise<unknown> | undefined;
    readonly #waiting = new Set<ConnectionWait>();
    // A call waited its whole bound for the connection: the next ones fail at once until it is ready.
    #connectionLate = false;
    #listening = false;

    constructor(
        private readonly client: RedisCacheClient,
        readonly timeout: number,
        private readonly report: (failure: RedisStoreFailure) => void
    ) {}

    /** Sends a command with `send` now, or once the client connecting is ready; rejects when it would only wait. */
    run<T>(operation: RedisStoreOperation, send: () => Promise<T>): Promise<T> {
        const status = this.client.status;
        if (status === 'ready' || status === 'wait') {
            return this.#send(operation, send);
        }

        if (!connecting.has(status)) {
            const what = closed.has(status) ? "the client's connection is closed" : 'the client is not connected';
            return Promise.reject(this.fail(operation, 'unavailable', `not sent: ${what}`));
        }

        if (this.#connectionLate) {
            return Promise.reject(this.fail(operation, 'unavailable', 'not sent: the client is connecting'));
        }

        return this.#afterConnecting(operation, send);
    }

    /** Stops waiting for the connection: the calls still waiting reject with `error`. */
    close(error: HttpError): void {
        if (this.#listening) {
            this.#listening = false;
            this.client.removeListener('ready', this.#ready);
        }

        const waiting = [...this.#waiting];
        this.#waiting.clear();
        for (const wait of waiting) {
            wait.cancel(error);
        }
    }

    // Waits for the client's `ready` within the bound, then sends (the answer has the bound of its own).
    #afterConnecting<T>(operation: RedisStoreOperation, send: () => Promise<T>): Promise<T> {
        return new Promise<T>((resolve, reject) => {
            let timer: NodeJS.Timeout | undefined;
            const wait: ConnectionWait = {
                ready: () => {
                    clearTimeout(timer);
                    this.#send(operation, send).then(resolve, reject);
                },
                cancel: (error) => {
                    clearTimeout(timer);
                    reject(error);
                }
            };
            const late = () => {
                if (!this.#waiting.has(wait)) {
                    return;
                }

                this.#waiting.delete(wait);
                if (this.client.status === 'ready') {
                    // Ready, its event not emitted yet.
                    wait.ready();
                    return;
                }

                this.#connectionLate = true;
                const what = `not sent: the client is still connecting after ${this.timeout} ms`;
                reject(this.fail(operation, 'unavailable', what));
            };
            // As for an answer (below): a `ready` waiting in the socket is read before the bound is taken as passed.
            timer = setTimeout(() => setImmediate(late), this.timeout);
            timer.unref();
            this.#waiting.add(wait);
            if (!this.#listening) {
                this.#listening = true;
                this.client.once('ready', this.#ready);
            }
        });
    }

    readonly #ready = (): void => {
        this.#listening = false;
        this.#connectionLate = false;
        const waiting = [...this.#waiting];
        this.#waiting.clear();
        for (const wait of waiting) {
            wait.ready();
        }
    };

    // Sends now, answered within the bound or rejected; at once when an earlier command is overdue.
    #send<T>(operation: RedisStoreOperation, send: () => Promise<T>): Promise<T> {
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
