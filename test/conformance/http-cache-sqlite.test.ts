import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';
import { SqliteCacheStore } from '../../src/client/cache/stores/sqlite-store.js';
import { conformanceRun } from './http-cache/run.js';

// node:sqlite exists unflagged from Node.js 22.13 on; elsewhere the store refuses (test/client/cache/sqlite-store.test.ts).
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

/** A run on a SqliteCacheStore in a scratch directory of its own, removed with it. */
function sqliteRun(mode: 'private' | 'shared'): void {
    const dir = hasNodeSqlite ? mkdtempSync(join(tmpdir(), 'tracewire-cache-tests-')) : '';
    conformanceRun(
        mode,
        'SqliteCacheStore',
        () => new SqliteCacheStore({ location: join(dir, 'cache.db') }),
        (store) => {
            (store as SqliteCacheStore).close();
            rmSync(dir, { recursive: true, force: true });
        },
        { skip: !hasNodeSqlite }
    );
}

// The two runs at once, as in http-cache-memory.test.ts.
describe.concurrent('the HTTP caching suite on SQLite, the runs at once', () => {
    sqliteRun('private');
    sqliteRun('shared');
});
