// The shape of the source tree, checked (docs/architecture.md): every import runs one way between the
// client's folders, as each folder's README.md allows ("May import:"); the instrumentation reaches the
// client through its public entry only; no module imports another in a cycle, type-only imports
// included; no source file over 500 lines, no class over 300; every source file named in its folder's
// README.md, so the map of the tree keeps up with the tree.
// `node scripts/check-architecture.mjs` prints the problems and fails; test/common/architecture.test.ts runs it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const maxFileLines = 500;
const maxClassLines = 300;

// The parts of the package and what each may import, outside the client's own folders (which say it
// in their README.md). `src/common` and `src/errors` are the floor every part stands on.
const partRules = {
    'src/common': [],
    // The package's root entry re-exports the parts.
    'src/index.ts': ['src/common', 'src/errors', 'src/client', 'src/static'],
    'src/errors': ['src/common'],
    'src/client': ['src/common', 'src/errors'],
    'src/static': ['src/common', 'src/errors'],
    instrumentation: ['src/common', 'src/errors', 'src/client', 'src/static'],
    // tracewire/testing stands in for the network under the client's transport seam (src/testing/README.md).
    'src/testing': ['src/common', 'src/errors', 'src/client']
};

// The parts that may reach another only through that part's public entry: the instrumentation is a
// subscriber of the client's public contract, as any vendor's could be (docs/observability.md,
// "Tracing channels"), so nothing it reads of the client is internal.
const entryOnlyRules = {
    instrumentation: { 'src/client': 'src/client/index.ts' }
};

/** Every .ts module under `dir` (declaration files included: they can be part of a cycle too). */
function modulesUnder(dir) {
    return readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
        .map((entry) => join(entry.parentPath, entry.name));
}

const importPattern =
    /(?:^|[\s;])(?:import|export)\s(?:[^'"`;]*?\sfrom\s*)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The repository-relative modules `file` imports (relative specifiers only: packages are not ours). */
function importsOf(root, file, text) {
    const found = new Set();
    for (const match of text.matchAll(importPattern)) {
        const specifier = match[1] ?? match[2];
        if (specifier.startsWith('.')) {
            const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
            found.add(relative(root, target));
        }
    }

    return found;
}

/** The part of the package a module belongs to (`src/client`, `instrumentation`, ...). */
function partOf(path) {
    const [top, second] = path.split(sep);
    return top === 'src' ? `${top}/${second}` : top;
}

/** The client folder of a module (`flow`, `wire`, ...), or `.` for the client's entry files. */
function clientFolderOf(path) {
    const rest = path.split(sep).slice(2);
    return rest.length === 1 ? '.' : rest[0];
}

/** Each client folder's allowed imports, from the `May import:` line of its README.md. */
function clientFolderRules(root, problems) {
    const rules = new Map();
    const clientDir = join(root, 'src', 'client');
    for (const entry of readdirSync(clientDir, { withFileTypes: true })) {
        if (!entry.isDirectory()) {
            continue;
        }

        let readme;
        try {
            readme = readFileSync(join(clientDir, entry.name, 'README.md'), 'utf8');
        } catch {
            problems.push(`src/client/${entry.name}/ has no README.md saying what it owns and what it may import`);
            continue;
        }

        const line = /^May import:(.*)$/m.exec(readme);
        if (line === null) {
            problems.push(`src/client/${entry.name}/README.md has no "May import:" line`);
            continue;
        }

        const allowed = line[1]
            .replace(/\(.*?\)|\.$/g, '')
            .split(',')
            .map((name) => name.trim().replace(/`/g, ''));
        rules.set(entry.name, new Set(allowed.filter((name) => name !== '' && name !== 'nothing')));
    }

    return rules;
}

/**
 * The source files no README.md names: each folder's README.md names every `.ts` file of the folder
 * itself, as a whole name (`hop.ts`, not the end of `wire/hop.ts` or of `load-hop.ts`).
 */
function unnamedFiles(root, files) {
    const problems = [];
    const byFolder = new Map();
    for (const file of files) {
        const folder = dirname(file);
        byFolder.set(folder, [...(byFolder.get(folder) ?? []), file]);
    }

    for (const [folder, inFolder] of byFolder) {
        const where = relative(root, folder);
        let readme;
        try {
            readme = readFileSync(join(folder, 'README.md'), 'utf8');
        } catch {
            problems.push(`${where}/ has no README.md naming its files`);
            continue;
        }

        for (const file of inFolder) {
            const name = file.slice(folder.length + 1);
            const escaped = name.replace(/[.*+?^$()|[\]{}\\]/g, '\\$&');
            if (!new RegExp(`(?<![\\w./-])${escaped}(?![\\w-])`).test(readme)) {
                problems.push(`${where}/${name} is not named in ${where}/README.md`);
            }
        }
    }

    return problems;
}

/** Strongly connected components of more than one module, or a module importing itself (Tarjan). */
function cyclesOf(graph) {
    let index = 0;
    const stack = [];
    const state = new Map();
    const cycles = [];
    const visit = (node) => {
        const mine = { index, low: index, onStack: true };
        index++;
        state.set(node, mine);
        stack.push(node);
        for (const next of graph.get(node) ?? []) {
            if (!graph.has(next)) {
                continue;
            }

            const seen = state.get(next);
            if (seen === undefined) {
                visit(next);
                mine.low = Math.min(mine.low, state.get(next).low);
            } else if (seen.onStack) {
                mine.low = Math.min(mine.low, seen.index);
            }
        }

        if (mine.low === mine.index) {
            const component = [];
            let member;
            do {
                member = stack.pop();
                state.get(member).onStack = false;
                component.push(member);
            } while (member !== node);
            if (component.length > 1 || graph.get(node).has(node)) {
                cycles.push(component.sort());
            }
        }
    };
    for (const node of graph.keys()) {
        if (!state.has(node)) {
            visit(node);
        }
    }

    return cycles;
}

/** The classes of a module longer than the limit: from `class X` at the start of a line to its closing `}` there. */
function longClasses(text) {
    const long = [];
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
        const declared = /^(?:export\s+)?(?:abstract\s+)?class\s+(\w+)/.exec(lines[i]);
        if (declared === null) {
            continue;
        }

        const end = lines.findIndex((line, at) => at > i && line === '}');
        if (end !== -1 && end - i + 1 > maxClassLines) {
            long.push(`${declared[1]} (${end - i + 1} lines)`);
        }
    }

    return long;
}

/** Every problem of the tree at `root`, as sentences; empty when it has the shape it should. */
export function architectureProblems(root) {
    const problems = [];
    const graph = new Map();
    const files = [...modulesUnder(join(root, 'src')), ...modulesUnder(join(root, 'instrumentation'))];
    const clientRules = clientFolderRules(root, problems);
    problems.push(...unnamedFiles(root, files));
    for (const file of files) {
        const path = relative(root, file);
        const text = readFileSync(file, 'utf8');
        const imports = importsOf(root, file, text);
        graph.set(path, imports);

        const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
        if (lines > maxFileLines) {
            problems.push(`${path} has ${lines} lines (at most ${maxFileLines})`);
        }

        for (const long of longClasses(text)) {
            problems.push(`${path}: class ${long} (at most ${maxClassLines})`);
        }

        const part = partOf(path);
        for (const target of imports) {
            const targetPart = partOf(target);
            if (targetPart !== part && !partRules[part]?.includes(targetPart)) {
                problems.push(`${path} imports ${target}: ${part} may not import ${targetPart}`);
                continue;
            }

            const entry = entryOnlyRules[part]?.[targetPart];
            if (entry !== undefined && target.split(sep).join('/') !== entry) {
                problems.push(`${path} imports ${target}: ${part} may import ${targetPart} only through ${entry}`);
                continue;
            }

            if (part !== 'src/client' || targetPart !== 'src/client') {
                continue;
            }

            const from = clientFolderOf(path);
            const to = clientFolderOf(target);
            if (from === to || from === '.') {
                continue;
            }

            if (to === '.') {
                problems.push(`${path} imports ${target}: only the client's entry files import the entry files`);
            } else if (!clientRules.get(from)?.has(to)) {
                problems.push(`${path} imports ${target}: src/client/${from}/README.md does not allow ${to}`);
            }
        }
    }

    // The folders' own rules must form a strict order: a folder allowed to import one that may import it back is a cycle waiting.
    const folderGraph = new Map([...clientRules].map(([name, allowed]) => [name, allowed]));
    for (const cycle of cyclesOf(folderGraph)) {
        problems.push(`the client's folders allow each other in a cycle: ${cycle.join(', ')}`);
    }

    for (const cycle of cyclesOf(graph)) {
        problems.push(`import cycle: ${cycle.join(' <-> ')}`);
    }

    // In a stable order, whatever order the file system lists the modules in.
    return problems.sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
    const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
    const problems = architectureProblems(root);
    for (const problem of problems) {
        console.error(problem);
    }

    if (problems.length > 0) {
        process.exitCode = 1;
    } else {
        console.log('architecture: imports one way, no cycle, no long file or class, every file named in its README');
    }
}
