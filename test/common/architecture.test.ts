import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the repository's scripts, without declarations
import { architectureProblems } from '../../scripts/check-architecture.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/** A scratch tree of `files` (path → text), handed to `check`, then removed. */
function withTree(files: Record<string, string>, check: (root: string) => void): void {
    const root = mkdtempSync(join(tmpdir(), 'tracewire-architecture-'));
    try {
        for (const [path, text] of Object.entries(files)) {
            mkdirSync(dirname(join(root, path)), { recursive: true });
            writeFileSync(join(root, path), text);
        }

        check(root);
    } finally {
        rmSync(root, { recursive: true, force: true });
    }
}

/**
 * docs/architecture.md, "The folders": the shape of the source tree, as scripts/check-architecture.mjs
 * reads it (each client folder's README.md says what it may import).
 */
describe('the shape of the source tree', () => {
    it('imports run one way between the client folders, no module is in a cycle, no file or class is too long, every file is named in its README', () => {
        expect(architectureProblems(repo)).toEqual([]);
    });

    it('would name a folder importing one above it, a cycle of type-only imports and a part importing another it may not', () => {
        withTree(
            {
                'src/client/top/README.md': 'Owns the top: `a.ts`, `types.ts`.\n\nMay import: bottom.\n',
                'src/client/bottom/README.md': 'Owns the bottom: `b.ts`.\n\nMay import: nothing.\n',
                'src/errors/README.md': '- `e.ts`: an error.\n',
                'instrumentation/README.md': '- `x.ts`, `y.ts`: a cycle.\n',
                'src/client/top/a.ts': "import { b } from '../bottom/b.js';\nexport const a = b;\n",
                'src/client/bottom/b.ts': "import type { A } from '../top/types.js';\nexport const b: A = 1;\n",
                'src/client/top/types.ts': 'export type A = number;\n',
                'src/errors/e.ts': "import { a } from '../client/top/a.js';\nexport const e = a;\n",
                'instrumentation/x.ts': "import type { Y } from './y.js';\nexport interface X { y: Y }\n",
                'instrumentation/y.ts': "import {\n    type X\n} from './x.js';\nexport type Y = X[];\n"
            },
            (root) => {
                expect(architectureProblems(root)).toEqual([
                    'import cycle: instrumentation/x.ts <-> instrumentation/y.ts',
                    'src/client/bottom/b.ts imports src/client/top/types.ts: src/client/bottom/README.md does not allow top',
                    'src/errors/e.ts imports src/client/top/a.ts: src/errors may not import src/client'
                ]);
            }
        );
    });

    it("would name a source file its folder's README.md does not name, and a folder of sources without a README.md", () => {
        withTree(
            {
                'src/client/wire/README.md':
                    '# wire\n\n- `hop.ts`: one attempt.\n- `http2/session.ts` is named from here, not in its folder.\n\nMay import: nothing.\n',
                'src/client/wire/hop.ts': 'export const hop = 1;\n',
                // Named only as part of longer names: `load-hop.ts`, `wire/hop-timings.ts`.
                'src/client/wire/load-hop.ts': 'export const loadHop = 1;\n',
                'src/client/wire/hop-timings.ts': 'export const timings = 1;\n',
                'src/client/wire/http2/session.ts': 'export const session = 1;\n',
                'src/common/README.md': 'The floor: `node-modules.ts`, `safe-methods.ts`.\n',
                'src/common/safe-methods.ts': 'export const safe = 1;\n',
                'instrumentation/index.ts': 'export {};\n',
                'src/common/sub/README.md': 'Nothing named.\n'
            },
            (root) => {
                expect(architectureProblems(root)).toEqual([
                    'instrumentation/ has no README.md naming its files',
                    'src/client/wire/hop-timings.ts is not named in src/client/wire/README.md',
                    'src/client/wire/http2/ has no README.md naming its files',
                    'src/client/wire/load-hop.ts is not named in src/client/wire/README.md'
                ]);
            }
        );
    });

    it('would name the instrumentation importing the client anywhere but its public entry, types included', () => {
        withTree(
            {
                'src/client/index.ts': "export { a } from './top/a.js';\nexport type { B } from './top/b.js';\n",
                'src/client/README.md': 'The entry: `index.ts`.\n',
                'src/client/top/README.md': 'Owns the top: `a.ts`, `b.ts`.\n\nMay import: nothing.\n',
                'instrumentation/README.md': '`public.ts`, `value.ts`, `type.ts`.\n',
                'src/client/top/a.ts': 'export const a = 1;\n',
                'src/client/top/b.ts': 'export type B = number;\n',
                'instrumentation/public.ts':
                    "import { a, type B } from '../src/client/index.js';\nexport const p: B = a;\n",
                'instrumentation/value.ts': "import { a } from '../src/client/top/a.js';\nexport const v = a;\n",
                'instrumentation/type.ts': "import type { B } from '../src/client/top/b.js';\nexport type T = B;\n"
            },
            (root) => {
                expect(architectureProblems(root)).toEqual([
                    'instrumentation/type.ts imports src/client/top/b.ts: instrumentation may import src/client only through src/client/index.ts',
                    'instrumentation/value.ts imports src/client/top/a.ts: instrumentation may import src/client only through src/client/index.ts'
                ]);
            }
        );
    });
});
