import { configDefaults, defineConfig } from 'vitest/config';

// SqliteCacheStore runs only where node:sqlite exists (Node.js 22.13+): on an older line its one test
// checks the refusal, and its coverage is measured on the newer lines.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

/**
 * The runs of the HTTP caching suite: each waits 10-15 s on the suite's own pauses, and sending its 350 tests at
 * once, it reads the Age and freshness of responses a second or two apart, so a run beside busy files loses passes
 * (a Redis run lost 1 to 18 of its 268). They run first and alone, each file in a worker, before anything else.
 */
const cachingSuite = ['test/conformance/http-cache-*.test.ts'];

/**
 * Files whose tests hold for a whole process, run each in a process of its own (Vitest's isolation): those that
 * register OpenTelemetry's instrumentation-http, which patches `node:http` for the process and for good, and one
 * that counts the process's timers to the unit across a request (a timer another file left may fire meanwhile).
 */
const wholeProcess = [
    'test/instrumentation/http-instrumentation.test.ts',
    'test/instrumentation/process-wide.test.ts',
    'test/instrumentation/request-scope.test.ts',
    'test/fault/stale-connection.test.ts'
];

export default defineConfig({
    test: {
        // The consumer tests install the packed package with npm: `npm run test:consumer`.
        exclude: [...configDefaults.exclude, 'test/consumer/**'],
        testTimeout: 20_000,
        hookTimeout: 20_000,
        // expect.poll waits for servers and exporters; a loaded 2-core machine can take seconds.
        expect: { poll: { timeout: 10_000 } },
        // Four on two cores: most files spend their time waiting (on servers, timers), and a worker that keeps
        // its modules from file to file spends little else (docs/development.md, "The suite's time").
        maxWorkers: 4,
        projects: [
            { extends: true, test: { name: 'caching-suite', include: cachingSuite, sequence: { groupOrder: 0 } } },
            {
                extends: true,
                test: {
                    name: 'whole-process',
                    include: wholeProcess,
                    sequence: { groupOrder: 1 }
                }
            },
            {
                extends: true,
                test: {
                    name: 'shared',
                    // The testing examples of docs/testing.md are a user's tests: run as they are.
                    include: ['test/**/*.test.ts', 'examples/**/*.test.js'],
                    exclude: [...configDefaults.exclude, 'test/consumer/**', ...cachingSuite, ...wholeProcess],
                    // Each file imports the package's modules, in a worker that already has them: not once a file.
                    isolate: false,
                    // Each file leaves no OpenTelemetry registered globally for the next (test/setup/otel-globals.ts).
                    setupFiles: ['test/setup/otel-globals.ts'],
                    sequence: { groupOrder: 1 }
                }
            }
        ],
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
