import { configDefaults, defineConfig } from 'vitest/config';

// SqliteCacheStore runs only where node:sqlite exists (Node.js 22.13+): on an older line its one test
// checks the refusal, and its coverage is measured on the newer lines.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

export default defineConfig({
    test: {
        include: ['test/**/*.test.ts'],
        // The consumer tests install the packed package with npm: `npm run test:consumer`.
        exclude: [...configDefaults.exclude, 'test/consumer/**'],
        testTimeout: 20_000,
        hookTimeout: 20_000,
        // expect.poll waits for servers and exporters; a loaded 2-core machine can take seconds.
        expect: { poll: { timeout: 10_000 } },
        // Two cores: more workers only add contention between servers started by the tests.
        maxWorkers: 2,
        coverage: {
            provider: 'v8',
            include: ['src/**/*.ts', 'instrumentation/**/*.ts'],
            exclude: hasNodeSqlite ? [] : ['src/client/cache/stores/sqlite-store.ts'],
            reporter: ['text-summary', 'text'],
            thresholds: {
                'src/errors/**': { lines: 95, branches: 95 },
                'src/client/**': { lines: 95, branches: 95 },
                'src/static/**': { lines: 95, branches: 95 }
            }
        }
    }
});
