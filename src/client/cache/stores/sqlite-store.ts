import { setTimeout as sleep } from 'node:timers/promises';
import { type HttpError, isHttpError } from '../../../errors/index.js';
import type { CachedResponse, CacheStore } from '../../contract/cache-store.js';
import { clientFailure, invalidOption } from '../../contract/errors.js';
import { isCount } from '../../options/values.js';
import { varyRecord, varyText } from '../vary.js';
import { openSqlite, type SqliteDatabase, type SqliteStatement, type SqliteValue } from './node-sqlite.js';

/** The settings of a `SqliteCacheStore` (README "Cache stores"); null or undefined means "not set". */
export interface SqliteCacheStoreOptions {
    /** The database file, created when missing; `':memory:'` (the default) keeps the entries in this process only. */
    location?: string | null | undefined;
    /** The most entries (variants) kept; past it the oldest stored are evicted. Default 10,000. */
    maxCount?: number | null | undefined;
    /** The most bytes kept, bodies and headers together; past it the oldest stored are evicted. Default 256 MiB. */
    maxSize?: number | null | undefined;
    /** The largest entry stored, in bytes (body and headers); a larger one is declined. Default 16 MiB. */
    maxEntrySize?: number | null | undefined;
    /**
     * How long a call waits while another connection (another process) holds the write lock, in ms,
     * before it is rejected. Default 5,000.
     */
    lockTimeout?: number | null | undefined;
}

const defaults = {
    location: ':memory:',
    maxCount: 10_000,
    maxSize: 256 * 2 ** 20,
    maxEntrySize: 16 * 2 ** 20,
    lockTimeout: 5_000
};
// SQLite's own limit on a blob or a string (SQLITE_MAX_LENGTH in Node's build).
const largestEntry = 1_000_000_000;
// A call waits for another connection's write lock in short synchronous waits (SQLite's busy_timeout)
// separated by asynchronous pauses, so that a writer in another process never blocks the event loop for long.
const busyTimeoutMs = 10;
// The pause between two attempts to open a file another process is setting up at the same moment.
const openRetryMs = 20;
// Expired entries purged by one `set`: a bounded statement, however many have expired.
const purgeBatch = 64;
// The oldest entries read at a time while evicting.
const evictionBatch = 64;
// One name per layout of the table: a file written by another layout is left alone, not misread.
const table = 'tracewire_cache_v1';

/**
 * A `CacheStore` in a SQLite database on `node:sqlite` (Node.js 22.13+): persistent across restarts and
 * shared safely by several processes using one file (WAL journal, transactions, lock waits that
 * never stall the event loop). Bounded by entry count and total bytes, oldest stored evicted first;
 * expired entries are never returned and are purged as new ones are stored. Call `close()` when done.
 */
export class SqliteCacheStore implements CacheStore {
    /** The database file, or `':memory:'`. */
    readonly location: string;
    readonly maxCount: number;
    readonly maxSize: number;
    readonly maxEntrySize: number;
    readonly lockTimeout: number;
    readonly #db: SqliteDatabase;
    readonly #statements: Statements;
    #closed = false;

    /** Throws a 500 HttpError when an option is invalid, node:sqlite is missing or the location cannot be used. */
    constructor(options: SqliteCacheStoreOptions = {}) {
        const problem = checkStoreOptions(options);
        if (problem !== undefined) {
            throw problem;
        }

        this.location = options.location ?? defaults.location;
        this.maxCount = options.maxCount ?? defaults.maxCount;
        this.maxSize = options.maxSize ?? defaults.maxSize;
        this.maxEntrySize = Math.min(options.maxEntrySize ?? defaults.maxEntrySize, this.maxSize);
        this.lockTimeout = options.lockTimeout ?? defaults.lockTimeout;
        const giveUpAt = Date.now() + this.lockTimeout;
        for (;;) {
            let db: SqliteDatabase | undefined;
            try {
                db = openSqlite(this.location);
                this.#statements = prepareSchema(db, this.lockTimeout);
                this.#db = db;
                return;
            } catch (err) {
                db?.close();
                // Processes opening one new file at once race to make it WAL and create the table; SQLite
                // answers the loser "locked" without its busy handler: it tries again, within lockTimeout.
                if (!isBusy(err) || Date.now() >= giveUpAt) {
                    throw isHttpError(err) ? err : this.#failure('cannot be used', err);
                }

                pauseSynchronously(openRetryMs);
            }
        }
    }

    get(key: string): Promise<readonly CachedResponse[]> {
        return this.#attempt(() => this.#statements.select.all(key, Date.now()).map(toCachedResponse));
    }

    /** Resolves false when it declined the entry (larger than `maxEntrySize`). */
    set(key: string, entry: CachedResponse): Promise<boolean> {
        return this.#attempt(() => {
            const row = toRow(key, entry);
            // Declined: the call still resolves (the CacheStore contract).
            if (row.size > this.maxEntrySize) {
                return false;
            }

            this.#transaction(() => this.#store(row));
            return true;
        });
    }

    delete(key: string): Promise<void> {
        return this.#attempt(() => {
            this.#statements.deleteKey.run(key);
        });
    }

    /** Closes the database; calls made afterwards are rejected. Idempotent. */
    close(): void {
        if (!this.#closed) {
            this.#closed = true;
            this.#db.close();
        }
    }

    #store(row: Row): void {
        const statements = this.#statements;
        statements.deleteVariant.run(row.key, row.vary);
        statements.insert.run(
            row.key,
            row.vary,
            row.method,
            row.statusCode,
            row.statusMessage,
            row.rawHeaders,
            row.body,
            row.requestTime,
            row.responseTime,
            row.deleteAt,
            row.size
        );
        statements.purgeExpired.run(Date.now(), purgeBatch);
        this.#evictOldest();
    }

    // Drops the oldest stored entries until both bounds hold again, reading them in batches (each
    // statement bounded, and run to its end so no read stays open).
    #evictOldest(): void {
        const totals = this.#statements.totals.get()!;
        let excessCount = Number(totals.count) - this.maxCount;
        let excessBytes = Number(totals.bytes) - this.maxSize;
        let newestEvicted = 0;
        while (excessCount > 0 || excessBytes > 0) {
            const oldest = this.#statements.oldest.all(newestEvicted, evictionBatch);
            // Totals above the rows would be a broken file: stop rather than loop.
            if (oldest.length === 0) {
                break;
            }

            for (const row of oldest) {
                newestEvicted = Number(row.id);
                excessCount -= 1;
                excessBytes -= Number(row.size);
                if (excessCount <= 0 && excessBytes <= 0) {
                    break;
                }
            }
        }

        if (newestEvicted > 0) {
            this.#statements.deleteThrough.run(newestEvicted);
        }
    }

    // One write transaction, taken before the first read: a concurrent writer makes BEGIN wait (or
    // fail busy, retried by #attempt) instead of failing halfway through.
    #transaction(work: () => void): void {
        this.#db.exec('BEGIN IMMEDIATE');
        try {
            work();
            this.#db.exec('COMMIT');
        } catch (err) {
            rollback(this.#db);
            throw err;
        }
    }

    // Runs one short synchronous operation; while another connection holds the lock it tries again
    // after pauses that let the event loop run, for up to `lockTimeout`.
    async #attempt<T>(operation: () => T): Promise<T> {
        const deadline = Date.now() + this.lockTimeout;
        for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
            if (this.#closed) {
                throw clientFailure(`SqliteCacheStore at ${this.location} is closed`);
            }

            try {
                return operation();
            } catch (err) {
                if (!isBusy(err)) {
                    throw this.#failure('failed', err);
                }

                if (Date.now() + pause > deadline) {
                    throw this.#failure(`stayed locked by another connection for ${this.lockTimeout} ms`, err);
                }
            }

            await sleep(pause);
        }
    }

    #failure(what: string, err: unknown): HttpError {
        const reason = err instanceof Error ? `: ${err.message}` : '';
        return clientFailure(`SqliteCacheStore at ${this.location} ${what}${reason}`, err);
    }
}

/** The first invalid option as a 500 HttpError naming it, or undefined. */
function checkStoreOptions(options: unknown): HttpError | undefined {
    if (typeof options !== 'object' || options === null) {
        return invalidOption('SqliteCacheStore options must be an object');
    }

    const { location, maxCount, maxSize, maxEntrySize, lockTimeout } = options as Record<string, unknown>;
    if (location !== undefined && location !== null && (typeof location !== 'string' || location === '')) {
        return invalidOption("Option location must be a file path or ':memory:'");
    }

    for (const [name, value] of [
        ['maxCount', maxCount],
        ['maxSize', maxSize]
    ] as const) {
        if (value !== undefined && value !== null && !(isCount(value) && (value as number) > 0)) {
            return invalidOption(`Option ${name} must be a positive integer`);
        }
    }

    if (lockTimeout !== undefined && lockTimeout !== null && !isCount(lockTimeout)) {
        return invalidOption('Option lockTimeout must be a non-negative integer (ms)');
    }

    if (maxEntrySize !== undefined && maxEntrySize !== null) {
        if (!isCount(maxEntrySize) || (maxEntrySize as number) <= 0 || (maxEntrySize as number) > largestEntry) {
            return invalidOption(
                `Option maxEntrySize must be a positive integer up to ${largestEntry} (SQLite's limit)`
            );
        }
    }

    return undefined;
}

// Ends a failed transaction. Some errors (a full disk, say) have already rolled it back, and the
// database cannot tell which before Node.js 22.16 (no isTransaction): then there is nothing to end.
function rollback(db: SqliteDatabase): void {
    try {
        db.exec('ROLLBACK');
    } catch {
        // No transaction was active.
    }
}

/** Waits `ms` without returning to the event loop: only in the constructor, which cannot wait otherwise. */
function pauseSynchronously(ms: number): void {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// SQLITE_BUSY (5) and SQLITE_LOCKED (6), with any extended code.
function isBusy(err: unknown): boolean {
    const code = (err as { errcode?: unknown } | null)?.errcode;
    return typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6);
}

interface Statements {
    select: SqliteStatement;
    deleteKey: SqliteStatement;
    deleteVariant: SqliteStatement;
    insert: SqliteStatement;
    purgeExpired: SqliteStatement;
    totals: SqliteStatement;
    oldest: SqliteStatement;
    deleteThrough: SqliteStatement;
}

// Creates the table once per file (several processes may open a new file at once: the creation is
// one transaction, and the first setting waits for the lock synchronously, as only opening does).
function prepareSchema(db: SqliteDatabase, lockTimeout: number): Statements {
    db.exec(`PRAGMA busy_timeout = ${lockTimeout}`);
    // WAL: readers never wait for a writer, and a crash loses no committed entry. ':memory:' stays 'memory'.
    db.exec('PRAGMA journal_mode = WAL');
    // Durable across a crash of the process; a power cut may lose the last entries, which a cache can afford.
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('BEGIN IMMEDIATE');
    try {
        db.exec(`
            CREATE TABLE IF NOT EXISTS ${table} (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                key TEXT NOT NULL,
                vary TEXT,
                method TEXT NOT NULL,
                status_code INTEGER NOT NULL,
                status_message TEXT NOT NULL,
                raw_headers TEXT NOT NULL,
                body BLOB NOT NULL,
                request_time INTEGER NOT NULL,
                response_time INTEGER NOT NULL,
                delete_at INTEGER NOT NULL,
                size INTEGER NOT NULL
            );
            CREATE INDEX IF NOT EXISTS ${table}_key ON ${table} (key, vary);
            CREATE INDEX IF NOT EXISTS ${table}_delete_at ON ${table} (delete_at);
            -- The count and bytes stored, kept by triggers in the writing transaction: checking the bounds
            -- costs one row read however large the store, and every process sees the same totals.
            CREATE TABLE IF NOT EXISTS ${table}_totals (
                one INTEGER PRIMARY KEY CHECK (one = 1),
                count INTEGER NOT NULL,
                bytes INTEGER NOT NULL
            );
            INSERT OR IGNORE INTO ${table}_totals VALUES (1, 0, 0);
            CREATE TRIGGER IF NOT EXISTS ${table}_inserted AFTER INSERT ON ${table} BEGIN
                UPDATE ${table}_totals SET count = count + 1, bytes = bytes + NEW.size;
            END;
            CREATE TRIGGER IF NOT EXISTS ${table}_deleted AFTER DELETE ON ${table} BEGIN
                UPDATE ${table}_totals SET count = count - 1, bytes = bytes - OLD.size;
            END;
        `);
        db.exec('COMMIT');
    } catch (err) {
        rollback(db);
        throw err;
    }

    db.exec(`PRAGMA busy_timeout = ${Math.min(busyTimeoutMs, lockTimeout)}`);
    const columns =
        'method, status_code, status_message, raw_headers, vary, body, request_time, response_time, delete_at';
    return {
        // Newest first: ids only grow (AUTOINCREMENT), in every process writing the file.
        select: db.prepare(`SELECT ${columns} FROM ${table} WHERE key = ? AND delete_at > ? ORDER BY id DESC`),
        deleteKey: db.prepare(`DELETE FROM ${table} WHERE key = ?`),
        deleteVariant: db.prepare(`DELETE FROM ${table} WHERE key = ? AND vary IS ?`),
        insert: db.prepare(
            `INSERT INTO ${table} (key, vary, method, status_code, status_message, raw_headers, body, request_time, response_time, delete_at, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
        ),
        purgeExpired: db.prepare(
            `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE delete_at <= ? LIMIT ?)`
        ),
        totals: db.prepare(`SELECT count, bytes FROM ${table}_totals`),
        oldest: db.prepare(`SELECT id, size FROM ${table} WHERE id > ? ORDER BY id LIMIT ?`),
        deleteThrough: db.prepare(`DELETE FROM ${table} WHERE id <= ?`)
    };
}

interface Row {
    key: string;
    vary: string | null;
    method: string;
    statusCode: number;
    statusMessage: string;
    rawHeaders: string;
    body: Uint8Array;
    requestTime: number;
    responseTime: number;
    deleteAt: number;
    size: number;
}

function toRow(key: string, entry: CachedResponse): Row {
    const rawHeaders = JSON.stringify(entry.rawHeaders);
    const vary = entry.vary === undefined ? null : varyText(entry.vary);
    return {
        key,
        vary,
        method: entry.method,
        statusCode: entry.statusCode,
        statusMessage: entry.statusMessage,
        rawHeaders,
        body: entry.body,
        requestTime: entry.requestTime,
        responseTime: entry.responseTime,
        deleteAt: entry.deleteAt,
        size:
            entry.body.byteLength +
            Buffer.byteLength(rawHeaders) +
            Buffer.byteLength(key) +
            (vary === null ? 0 : Buffer.byteLength(vary))
    };
}

function toCachedResponse(row: Record<string, SqliteValue>): CachedResponse {
    const body = row.body as Uint8Array;
    return {
        method: row.method as string,
        statusCode: Number(row.status_code),
        statusMessage: row.status_message as string,
        rawHeaders: JSON.parse(row.raw_headers as string) as string[],
        vary: row.vary === null ? undefined : varyRecord(row.vary as string),
        body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
        requestTime: Number(row.request_time),
        responseTime: Number(row.response_time),
        deleteAt: Number(row.delete_at)
    };
}
