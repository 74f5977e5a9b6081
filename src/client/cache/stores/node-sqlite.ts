import { clientFailure } from '../../contract/errors.js';

/**
 * Loading `node:sqlite` for `SqliteCacheStore` (README "Cache stores"): on first use only, so that
 * importing tracewire works and prints nothing on a runtime without it (Node.js 20), or where it is
 * still experimental and warns when loaded (Node.js 22).
 */

// The part of node:sqlite the store uses, declared here: the project builds against the types of its
// lowest Node.js line, which has no node:sqlite. All of it exists from Node.js 22.13 on (isOpen and
// isTransaction, later additions, are not used).
export interface SqliteDatabase {
    exec(sql: string): void;
    prepare(sql: string): SqliteStatement;
    close(): void;
}

export type SqliteValue = null | number | bigint | string | Uint8Array;

export interface SqliteStatement {
    run(...parameters: SqliteValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
    get(...parameters: SqliteValue[]): Record<string, SqliteValue> | undefined;
    all(...parameters: SqliteValue[]): Record<string, SqliteValue>[];
}

interface NodeSqlite {
    DatabaseSync: new (location: string) => SqliteDatabase;
}

let nodeSqlite: NodeSqlite | undefined;

/** Opens `location` with node:sqlite, or throws a 500 HttpError naming the runtime and what it needs. */
export function openSqlite(location: string): SqliteDatabase {
    nodeSqlite ??= loadNodeSqlite();
    return new nodeSqlite.DatabaseSync(location);
}

function loadNodeSqlite(): NodeSqlite {
    // Node.js 22 warns once per process that SQLite is experimental. The filter drops that one
    // warning, only while the module loads, and lets every other warning through.
    const emitWarning = process.emitWarning;
    process.emitWarning = function withoutSqliteWarning(this: unknown, warning: unknown, ...rest: unknown[]): void {
        if (!(rest[0] === 'ExperimentalWarning' && typeof warning === 'string' && warning.startsWith('SQLite '))) {
            Reflect.apply(emitWarning, this, [warning, ...rest]);
        }
    } as typeof process.emitWarning;
    let loaded: object | undefined;
    try {
        // undefined where the runtime has no such module (Node.js 20, or 22.5-22.12 without the flag).
        loaded = process.getBuiltinModule('node:sqlite');
    } finally {
        process.emitWarning = emitWarning;
    }

    if (loaded === undefined) {
        throw clientFailure(
            `SqliteCacheStore needs node:sqlite, which Node.js ${process.version} does not provide: use Node.js 22.13 or later (22.5 to 22.12 with --experimental-sqlite), or MemoryCacheStore`
        );
    }

    return loaded as NodeSqlite;
}
