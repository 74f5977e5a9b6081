import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the repository's scripts, without declarations
import { architectureProblems } from '../../scripts/check-architecture.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/**
 * docs/architecture.md, "The folders": the shape of the source
 * tree, as scripts/check-architecture.mjs reads it (each client folder's README.md says what it may
 * import).
 */
describe('the shape of the source tree', () => {
    it('imports run one way between the client folders, no module is in a cycle, no file or class is too long', () => {
        expect(architectureProblems(repo)).toEqual([]);
    });
});
