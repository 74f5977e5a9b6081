import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// SqliteCacheStore runs only where node:sqlite exists (Node.js 22.13+): on an older line its one test
// checks the refusal, and its coverage is measured on the newer lines.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

/**
 * The runs of the HTTP caching suite (test/conformance/http-cache*.test.ts) wait 10-15 s on the suite's own
 * pauses; each file runs its runs at once. Until it has durations cached (a fresh clone), Vitest starts the
 * largest files first: they came last, and ran alone at the end. They start first, and wait while the other
 * files compute; the rest keep Vitest's order.
 */
class WaitingRunsFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
        const sorted = await super.sort(files);
        const waits = (file: TestSpecification) =>
            /[\\/]conformance[\\/]http-cache[^\\/]*\.test\.ts$/.test(file.moduleId);
        return [...sorted.filter(waits), ...sorted.filter((file) => !waits(file))];
    }
}

export default defineConfig({
    test: {
        // The testing examples of docs/testing.md are a user's tests: run as they are.
        include: ['test/**/*.test.ts', 'examples/**/*.test.js'],
        // The consumer tests install the packed package with npm: `npm run test:consumer`.
        exclude: [...configDefaults.exclude, 'test/consumer/**'],
        testTimeout: 20_000,
        hookTimeout: 20_000,
        // expect.poll waits for servers and exporters; a loaded 2-core machine can take seconds.
        expect: { poll: { timeout: 10_000 } },
        // Three on two cores: most files spend their time waiting (on servers, the suites' pauses, timers), and
        // with two workers the suite used 105% of the two cores; four left the timing-sensitive tests too little
        // CPU on a loaded machine (phase bounds, deadlines, Redis conformance runs failed at load 18), and on an
        // idle one too, though 10-20 s faster a run (docs/development.md, "The suite's time").
        maxWorkers: 3,
        sequence: { sequencer: WaitingRunsFirst },
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
