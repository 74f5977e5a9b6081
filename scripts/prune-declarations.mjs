// Removes from dist/ the declarations no entry point of the package reaches. tsc emits one `.d.ts`
// per module, but a user can only import the entry points of the `exports` map, and TypeScript reads
// only the declarations those import, directly or through others: the rest (the internals'
// declarations, a third of them) would be installed for nothing (README, "Install footprint"). In the
// files that are reached, so is each exported function, constant, interface and type alias that no
// other reached declaration names (nor its own file, past its declaration): a module's helpers for the
// package's other modules, declared beside the type a public one needs.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

const entries = new Set(entryDeclarations(exportMap));
const texts = new Map([...reached].map((file) => [file, readFileSync(file, 'utf8')]));

/** How many times `name` occurs in `text` as a whole word. */
function mentions(text, name) {
    return text.match(new RegExp(`(?<![\\w$])${name.replaceAll('$', '\\$')}(?![\\w$])`, 'g'))?.length ?? 0;
}

// A top-level statement of an emitted declaration file starts at the line's start (its body is indented, its
// closing brace at the line's start too), its doc comment on the lines just before it.
const statementStart = /^(?:export |import |declare |interface |type |\/\/)/;
const prunable = /^export (?:declare )?(?:function|const|let|interface|type) ([\w$]+)/;

/** The file's top-level statements, each with the doc comment before it, as line ranges. */
function statementsOf(lines) {
    const statements = [];
    let current;
    let inDoc = false;
    for (let index = 0; index < lines.length; index++) {
        const line = lines[index];
        if (inDoc) {
            inDoc = !line.trimEnd().endsWith('*/');
        } else if (line.startsWith('/**')) {
            current = { from: index, to: index + 1, head: undefined };
            statements.push(current);
            inDoc = !line.trimEnd().endsWith('*/');
        } else if (statementStart.test(line) && (current === undefined || current.head !== undefined)) {
            current = { from: index, to: index + 1, head: line };
            statements.push(current);
        } else if (current !== undefined && current.head === undefined && statementStart.test(line)) {
            current.head = line;
        }

        if (current !== undefined) {
            current.to = index + 1;
        }
    }

    return statements;
}

// A declaration removed may leave another one named by it alone unnamed: again until nothing goes.
let pruned = 0;
for (let again = true; again; ) {
    again = false;
    for (const [file, text] of texts) {
        if (entries.has(file)) {
            continue;
        }

        // The last line, empty after the file's final newline, belongs to no statement.
        const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
        const cut = statementsOf(lines).filter(({ from, to, head }) => {
            const name = head?.match(prunable)?.[1];
            if (name === undefined) {
                return false;
            }

            const own = lines.slice(from, to).join('\n');
            return (
                mentions(text, name) === mentions(own, name) &&
                [...texts].every(([other, otherText]) => other === file || mentions(otherText, name) === 0)
            );
        });
        if (cut.length === 0) {
            continue;
        }

        const dropped = new Set(cut.flatMap(({ from, to }) => Array.from({ length: to - from }, (_, i) => from + i)));
        texts.set(file, `${lines.filter((_, index) => !dropped.has(index)).join('\n')}\n`);
        pruned += cut.length;
        again = true;
    }
}

for (const [file, text] of texts) {
    if (text !== readFileSync(file, 'utf8')) {
        writeFileSync(file, text);
    }
}

console.log(
    `declarations: ${reached.size} reached from the entry points, ${removed} others removed; ${pruned} exported declarations no other reaches, removed`
);
