import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const folder = join(repo, 'instrumentation');

// Every relative module a file names: `import`, `import type`, `export ... from` and `import()`.
const relativeImport = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.[^'"]+)['"]/g;

function importsOf(file: string): string[] {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(relativeImport)].map((match) => resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')));
}

/** The import cycles among `files`, each as the path that closes it. */
function cyclesAmong(files: readonly string[]): string[][] {
    const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => files.includes(target))]));
    const cycles: string[][] = [];
    const done = new Set<string>();
    const visit = (file: string, path: string[]): void => {
        const at = path.indexOf(file);
        if (at !== -1) {
            cycles.push([...path.slice(at), file]);
            return;
        }

        if (done.has(file)) {
            return;
        }

        for (const target of graph.get(file) ?? []) {
            visit(target, [...path, file]);
        }

        done.add(file);
    };
    for (const file of files) {
        visit(file, []);
    }

    return cycles;
}

describe('the instrumentation modules', () => {
    it('import one another without a cycle, type-only imports included', () => {
        const files = readdirSync(folder)
            .filter((name) => name.endsWith('.ts'))
            .map((name) => join(folder, name));
        const named = cyclesAmong(files).map((cycle) => cycle.map((file) => relative(repo, file)).join(' → '));
        expect(named).toEqual([]);
    });

    it('would be caught in a cycle made of type-only imports', () => {
        const dir = mkdtempSync(join(tmpdir(), 'tracewire-cycles-'));
        try {
            const a = join(dir, 'a.ts');
            const b = join(dir, 'b.ts');
            writeFileSync(a, "import type { B } from './b.js';\nexport interface A { b: B }\n");
            writeFileSync(b, "import {\n    type A\n} from './a.js';\nexport type B = A[];\n");
            expect(cyclesAmong([a, b])).toEqual([[a, b, a]]);
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });
});
