// Removes from dist/ the declarations no entry point of the package reaches. tsc emits one `.d.ts`
// per module, but a user can only import the entry points of the `exports` map, and TypeScript reads
// only the declarations those import, directly or through others: the rest (the internals'
// declarations, a third of them) would be installed for nothing (README, "Install footprint"). In the
// files that are reached, so is each exported function, constant, interface and type alias that no
// other reached declaration names (nor its own file, past its declaration): a module's helpers for the
// package's other modules, declared beside the type a public one needs; then the imports only those
// used, and the files only those imports reached. Again, until nothing more goes.
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

// Every declaration file the build wrote, by path, as this script leaves it.
const texts = new Map();
for (const entry of readdirSync(join(root, 'dist'), { recursive: true, withFileTypes: true })) {
    const file = join(entry.parentPath, entry.name);
    if (entry.isFile() && file.endsWith('.d.ts')) {
        texts.set(file, readFileSync(file, 'utf8'));
    }
}

const entries = new Set(entryDeclarations(exportMap));

// Relative module specifiers in a declaration file: `from './x.js'`, `import('./x.js')`.
const relativeSpecifier = /(?:\bfrom\s*|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** The declaration files the entry points reach, directly or through others. */
function reachedFiles() {
    const reached = new Set();
    const pending = [...entries];
    while (pending.length > 0) {
        const file = pending.pop();
        // An entry the build did not emit is for publint and attw to report, not for this script.
        if (reached.has(file) || !texts.has(file)) {
            continue;
        }

        reached.add(file);
        for (const [, specifier] of texts.get(file).matchAll(relativeSpecifier)) {
            pending.push(resolve(dirname(file), specifier.replace(/\.js$/, '.d.ts')));
        }
    }

    return reached;
}

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

/** The file's lines; the last one, empty after the file's final newline, is not among them. */
function linesOf(text) {
    return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

/** `file` without its exported declarations that `reached` names nowhere else; how many went. */
function pruneDeclarations(file, reached) {
    const text = texts.get(file);
    const lines = linesOf(text);
    const cut = statementsOf(lines).filter(({ from, to, head }) => {
        const name = head?.match(prunable)?.[1];
        return (
            name !== undefined &&
            mentions(text, name) === mentions(lines.slice(from, to).join('\n'), name) &&
            [...reached].every((other) => other === file || mentions(texts.get(other), name) === 0)
        );
    });
    const dropped = new Set(cut.flatMap(({ from, to }) => Array.from({ length: to - from }, (_, i) => from + i)));
    texts.set(file, `${lines.filter((_, index) => !dropped.has(index)).join('\n')}\n`);
    return cut.length;
}

// An import of named bindings or a namespace, on one line as the compiler writes it.
const importLine = /^import (type )?(?:\{ ?(.*?) ?\}|\* as ([\w$]+)) from (['"][^'"]+['"]);$/;

/** `file` without the imported names it no longer mentions (a line whose names all went goes whole). */
function pruneImports(file) {
    const text = texts.get(file);
    const kept = linesOf(text).flatMap((line) => {
        const found = line.match(importLine);
        if (found === null) {
            return [line];
        }

        const [, typeOnly = '', named, namespace, from] = found;
        const rest = text.replace(line, '');
        if (namespace !== undefined) {
            return mentions(rest, namespace) > 0 ? [line] : [];
        }

        // `A`, `type A`, `A as B`: the local name is the last word.
        const used = named.split(',').filter((binding) => mentions(rest, binding.trim().split(' ').pop()) > 0);
        return used.length === 0
            ? []
            : [`import ${typeOnly}{ ${used.map((binding) => binding.trim()).join(', ')} } from ${from};`];
    });
    texts.set(file, `${kept.join('\n')}\n`);
}

let reached = reachedFiles();
let pruned = 0;
for (let again = true; again; ) {
    const before = [...reached].map((file) => texts.get(file)).join('\0');
    for (const file of reached) {
        if (!entries.has(file)) {
            pruned += pruneDeclarations(file, reached);
        }
    }

    for (const file of reached) {
        pruneImports(file);
    }

    reached = reachedFiles();
    again = [...reached].map((file) => texts.get(file)).join('\0') !== before;
}

let removed = 0;
for (const [file, text] of texts) {
    if (!reached.has(file)) {
        rmSync(file);
        removed++;
    } else if (text !== readFileSync(file, 'utf8')) {
        writeFileSync(file, text);
    }
}

console.log(
    `declarations: ${reached.size} files reached from the entry points, ${removed} others removed; ` +
        `${pruned} exported declarations no other reaches, removed`
);
