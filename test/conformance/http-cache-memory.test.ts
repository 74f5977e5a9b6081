import { describe } from 'vitest';
import { MemoryCacheStore } from '../../src/client/cache/stores/memory-store.js';
import { conformanceRun } from './http-cache/run.js';

/*
 * Each run spends its 10-15 s waiting on the suite's own pauses: a file's runs go at once, each with its own copy
 * of the suite (harness.ts, runSuite), so they hold one of Vitest's workers for about as long as one run. Two
 * runs to a file, a store's private and shared: four in one process lost the shared Redis run 18 of its 268
 * passes in whole-suite runs (2 of 2), though never alone.
 */
describe.concurrent('the HTTP caching suite on MemoryCacheStore, the runs at once', () => {
    conformanceRun('private', 'MemoryCacheStore', () => new MemoryCacheStore());
    conformanceRun('shared', 'MemoryCacheStore', () => new MemoryCacheStore());
});
