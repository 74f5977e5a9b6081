// Removes from dist/ the declarations no entry point of the package reaches. tsc emits one `.d.ts`
// per module, but a user can only import the entry points of the `exports` map, and TypeScript reads
// only the declarations those import, directly or through others: the rest (the internals'
// declarations, a third of them) would be installed for nothing (README, "Install footprint").
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { exports: exportMap } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The declaration files the `exports` map names (its `types` conditions). */
function entryDeclarations(target, found = []) {
    if (typeof target === 'string') {
        if (target.endsWith('.d.ts')) {
            found.push(resolve(root, target));
        }
    } else if (typeof target === 'object' && target !== null) {
        for (const value of Object.values(target)) {
            entryDeclarations(value, found);
        }
    }

    return found;
}

// Relative module specifiers in a declaration file: `from './x.js'`, `import('./x.js')`.
const relativeSpecifier = /(?:\bfrom\s*|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

const reached = new Set();
const pending = entryDeclarations(exportMap);
while (pending.length > 0) {
    const file = pending.pop();
    if (reached.has(file)) {
        continue;
    }

    // An entry the build did not emit is for publint and attw to report, not for this script.
    let text;
    try {
        text = readFileSync(file, 'utf8');
    } catch {
        continue;
    }

    reached.add(file);
    for (const [, specifier] of text.matchAll(relativeSpecifier)) {
        pending.push(resolve(dirname(file), specifier.replace(/\.js$/, '.d.ts')));
    }
}

let removed = 0;
for (const entry of readdirSync(join(root, 'dist'), { recursive: true, withFileTypes: true })) {
    const file = join(entry.parentPath, entry.name);
    if (entry.isFile() && file.endsWith('.d.ts') && !reached.has(file)) {
        rmSync(file);
        removed++;
    }
}

console.log(`declarations: ${reached.size} reached from the entry points, ${removed} others removed`);
