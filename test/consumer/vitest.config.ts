import { defineConfig } from 'vitest/config';

// `npm run test:consumer` (.ci/run runs it once): the packed package installed in scratch projects.
export default defineConfig({
    test: {
        include: ['test/consumer/**/*.consumer.test.ts'],
        globalSetup: ['test/consumer/global-setup.ts'],
        // npm installs and child processes: generous on a loaded machine, a first run fills the npm cache.
        testTimeout: 600_000,
        hookTimeout: 600_000,
        // One at a time: each test file installs with npm, which does not share a cache well in parallel.
        fileParallelism: false
    }
});
