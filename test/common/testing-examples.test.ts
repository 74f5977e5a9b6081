import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * docs/testing.md's node:test example, run as a user runs it (`node --test`, importing `tracewire` and
 * `tracewire/testing` through the package's self-reference, from `dist/`: `npm test` builds first).
 * Its vitest twin, examples/testing/weather.test.js, is one of `npm test`'s own files.
 */
it('the node:test example passes', async () => {
    const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--test', '--test-reporter=spec', 'examples/testing/weather.node-test.js'],
        { cwd: root, timeout: 30_000 }
    );
    expect(stdout).toMatch(/ℹ pass 3\n/);
    expect(stdout).toMatch(/ℹ fail 0\n/);
});
