import { execFile, execFileSync } from 'node:child_process';
import {
    existsSync,
    mkdirSync,
    mkdtempSync,
    readdirSync,
    readFileSync,
    rmSync,
    symlinkSync,
    writeFileSync
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/*
 * Every `ts` block of the README and of docs/*.md type-checks as a user would paste it: into a TypeScript project of
 * their own (an ES module package, `module: nodenext`, `strict`, `skipLibCheck: false`, README
 * "TypeScript") that has tracewire installed, with @hapi/hapi, @opentelemetry/api, @types/node and
 * ioredis (the application's Redis client of the "Cache stores" block) beside it. The project is a scratch directory whose `node_modules` links `tracewire` to this
 * repository, so `tracewire`, `tracewire/static`... resolve through the package's `exports` to the
 * built declarations (`npm test` builds first), and links the others to this repository's copies
 * (hapi's declarations find `joi` from there, as a hapi user's project with `skipLibCheck: false` has
 * it). No registry is needed. What one block imports (the hapi typings `tracewire/static` adds) must not
 * make another one pass: a block shares its program only with blocks whose imports bring the very same
 * files (programsOf), so each is checked against exactly what it would be checked against alone.
 */

const repo = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * What the code around a block supplies in a user's program: the README's blocks are excerpts, and name
 * a few things they do not define (a token, a file, the user type of their API). Each is declared here,
 * per document and section, with the narrowest type that the surrounding code would give it (`err` is
 * what a `catch` gives: unknown), and prepended to the block; strictness is never relaxed for them. A
 * name declared for a block that no longer uses it fails the test, as would a redeclaration. The blocks
 * of docs/ are whole programs, imports included: they need none.
 */
const preludes: Record<string, Record<string, Record<string, string>>> = {
    'README.md': {
        Client: {
            token: 'declare const token: string;',
            User: 'interface User { name: string }',
            fs: "import * as fs from 'node:fs';",
            file: 'declare const file: string;'
        },
        Errors: {
            id: 'declare const id: string;',
            err: 'declare const err: unknown;'
        },
        'Problem details': {
            server: "declare const server: import('@hapi/hapi').Server;",
            account: 'declare const account: string;',
            err: 'declare const err: unknown;'
        }
    }
};

/** The documents whose blocks are checked: the README and every page of docs/. */
const documents = [
    'README.md',
    ...readdirSync(join(repo, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => `docs/${name}`)
];

/** The settings of the consumer tests' TypeScript projects (test/consumer/apps/types/tsconfig.json). */
const compilerOptions = {
    module: 'nodenext',
    target: 'es2023',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node']
};

interface Block {
    /** The document the block is in, from the repository's root (`README.md`, `docs/client.md`). */
    readonly file: string;
    /** The heading of the section the block is in. */
    readonly section: string;
    /** The document's line of the block's first line of code. */
    readonly line: number;
    readonly code: string;
    /** The file it is compiled as, in the scratch project. */
    readonly name: string;
}

/** The fenced `ts` blocks of the Markdown document `file`, each with its section and line. */
function tsBlocks(file: string): Block[] {
    const markdown = readFileSync(join(repo, file), 'utf8');
    const blocks: Block[] = [];
    const lines = markdown.split('\n');
    let section = '';
    for (let index = 0; index < lines.length; index++) {
        const line = lines[index]!;
        const heading = /^#{1,6} (.+)$/.exec(line);
        if (heading !== null) {
            section = heading[1]!;
            continue;
        }

        const fence = /^```(\S*)/.exec(line);
        if (fence === null) {
            continue;
        }

        const end = lines.indexOf('```', index + 1);
        if (end === -1) {
            throw new Error(`${file}:${index + 1}: a code block that is never closed`);
        }

        if (['ts', 'typescript', 'mts', 'tsx'].includes(fence[1]!)) {
            const slug = `${file}-${section}`.toLowerCase().replace(/[^a-z0-9]+/g, '-');
            const name = `${slug}-${blocks.filter((block) => block.section === section).length + 1}`;
            blocks.push({ file, section, line: index + 2, code: lines.slice(index + 1, end).join('\n'), name });
        }

        index = end;
    }

    return blocks;
}

/** A scratch consumer project; `link` maps a package name to the directory its `node_modules` entry links to. */
function consumerProject(link: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'tracewire-readme-'));
    for (const [name, target] of Object.entries(link)) {
        mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true });
        symlinkSync(target, join(dir, 'node_modules', name), 'dir');
    }

    writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: 'readme-consumer', private: true, type: 'module' })
    );
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: [] }));
    return dir;
}

/** The diagnostics of `tsc` on `source` alone, as `line: TSxxxx message` with the line in `source`. */
async function typecheck(dir: string, name: string, source: string): Promise<string[]> {
    return (await typecheckTogether(dir, name, new Map([[name, source]]))).get(name)!;
}

/**
 * The diagnostics of one `tsc` program of the sources `sources` (file name without `.ts` to code), for each
 * source as `line: TSxxxx message` with the line in that source. A diagnostic of no source (a declaration file,
 * the options) is given to each of them.
 */
async function typecheckTogether(
    dir: string,
    program: string,
    sources: ReadonlyMap<string, string>
): Promise<Map<string, string[]>> {
    for (const [name, source] of sources) {
        writeFileSync(join(dir, `${name}.ts`), source);
    }

    writeFileSync(
        join(dir, `tsconfig.${program}.json`),
        JSON.stringify({ extends: './tsconfig.json', files: [...sources.keys()].map((name) => `${name}.ts`) })
    );
    const output = await promisify(execFile)(
        process.execPath,
        [tsc, '-p', `tsconfig.${program}.json`, '--pretty', 'false'],
        {
            cwd: dir
        }
    ).then(
        ({ stdout }) => stdout,
        (err: { stdout?: string; message: string }) => err.stdout || err.message
    );
    const diagnostics = new Map([...sources.keys()].map((name) => [name, [] as string[]]));
    for (const line of output.split('\n').filter((line) => line.trim() !== '')) {
        const own = /^(.+)\.ts\((\d+),\d+\): error (TS\d+: .*)$/.exec(line);
        const of = own === null ? undefined : diagnostics.get(own[1]!);
        if (of !== undefined) {
            of.push(`${own![2]}: ${own![3]}`);
        } else {
            for (const list of diagnostics.values()) {
                list.push(line);
            }
        }
    }

    return diagnostics;
}

/**
 * The blocks grouped into programs: blocks that import the same modules share one, since their programs alone
 * would hold the very same files and one module's code does not reach another's. A block whose own program
 * could differ in ways its imports do not show (a script, whose names are global; a `declare global` or
 * `declare module`; a `require` or a triple-slash reference) gets a program of its own. Node.js's built-in
 * modules are always there (`types: ['node']`).
 */
function programsOf(sources: ReadonlyMap<string, string>): Map<string, string>[] {
    const programs = new Map<string, Map<string, string>>();
    for (const [name, source] of sources) {
        const module = /^\s*(import|export)\b/m.test(source);
        const alone = !module || /\bdeclare\s+(global|module)\b|\brequire\s*\(|\/\/\/\s*<reference/.test(source);
        const imports = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\1/g)]
            .map((match) => match[2]!)
            .filter((specifier) => !specifier.startsWith('node:'));
        const key = alone ? `alone:${name}` : [...new Set(imports)].sort().join(' ');
        programs.set(key, (programs.get(key) ?? new Map()).set(name, source));
    }

    return [...programs.values()];
}

describe('the README and docs/ as a user pastes them', () => {
    const blocks = documents.flatMap(tsBlocks);
    let dir: string;

    beforeAll(() => {
        // `npm test` builds before it runs the tests (pretest); run alone in a fresh clone, the declarations are built here.
        if (!existsSync(join(repo, 'dist', 'src', 'index.d.ts'))) {
            execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repo, stdio: 'inherit' });
            execFileSync(process.execPath, ['scripts/prune-declarations.mjs'], { cwd: repo, stdio: 'inherit' });
        }

        const modules = join(repo, 'node_modules');
        dir = consumerProject({
            tracewire: repo,
            '@hapi/hapi': join(modules, '@hapi', 'hapi'),
            '@opentelemetry/api': join(modules, '@opentelemetry', 'api'),
            '@types/node': join(modules, '@types', 'node'),
            ioredis: join(modules, 'ioredis')
        });
    }, 120_000);

    afterAll(() => {
        if (dir !== undefined) {
            rmSync(dir, { recursive: true, force: true });
        }
    });

    it('finds the ts blocks, among them those of the client, cache, static files, errors and problem details sections', () => {
        expect(blocks.filter((block) => block.file === 'README.md').map((block) => block.section)).toEqual(
            expect.arrayContaining(['Client', 'Cache', 'Static files (hapi)', 'Errors', 'Problem details'])
        );
    });

    it("finds the ts blocks of docs/, among them those of the client's, the cache's and problem details' pages", () => {
        expect(new Set(blocks.map((block) => block.file))).toEqual(
            new Set([
                'README.md',
                'docs/cache.md',
                'docs/client.md',
                'docs/migrating-from-wreck.md',
                'docs/problem-details.md'
            ])
        );
        expect(blocks.filter((block) => block.file === 'docs/client.md').map((block) => block.section)).toEqual(
            expect.arrayContaining([
                'The event pipeline',
                'Failures',
                'Progress',
                'Retries',
                'Timings',
                'Proxies',
                'HTTP/2'
            ])
        );
    });

    it('declares for each block only names the block uses', () => {
        for (const [file, sections] of Object.entries(preludes)) {
            for (const [section, names] of Object.entries(sections)) {
                const code = blocks
                    .filter((block) => block.file === file && block.section === section)
                    .map((block) => block.code)
                    .join('\n');
                for (const name of Object.keys(names)) {
                    expect(new RegExp(`\\b${name}\\b`).test(code), `${name} in ${file}, section ${section}`).toBe(true);
                }
            }
        }
    });

    it('type-checks every block with strict and skipLibCheck false, each with only what its own imports bring', async () => {
        const preludeOf = (block: Block) => Object.values(preludes[block.file]?.[block.section] ?? {});
        const sources = new Map(blocks.map((block) => [block.name, [...preludeOf(block), block.code].join('\n')]));
        const programs = programsOf(sources);
        const diagnostics = new Map<string, string[]>();
        await Promise.all(
            programs.map(async (program, index) => {
                for (const [name, of] of await typecheckTogether(dir, `program-${index + 1}`, program)) {
                    diagnostics.set(name, of);
                }
            })
        );
        const results = blocks.map((block) => {
            const prelude = preludeOf(block);
            // Diagnostics at the document's lines, so a failure points at the line to fix.
            return diagnostics.get(block.name)!.map((diagnostic) =>
                diagnostic.replace(/^(\d+):/, (_, line: string) => {
                    const inBlock = Number(line) - prelude.length;
                    return inBlock > 0
                        ? `${block.file}:${block.line + inBlock - 1}:`
                        : `prelude of ${block.file}, ${block.section}:`;
                })
            );
        });
        expect(results.flat()).toStrictEqual([]);
    }, 120_000);

    it('resolves tracewire to its real declarations: a wrong call is an error, and the root brings no hapi typings', async () => {
        const wrongCall = "import { client } from 'tracewire';\nawait client.get(42);\n";
        // The root entry type-checks without hapi (README, "TypeScript"), so only `tracewire/static` adds h.file().
        const rootOnly = [
            "import Hapi from '@hapi/hapi';",
            "import { staticFiles } from 'tracewire';",
            'const server = Hapi.server();',
            'await server.register(staticFiles);',
            "server.route({ method: 'GET', path: '/', handler: (request, h) => h.file('a.txt') });"
        ].join('\n');
        const withStatic = rootOnly.replace("from 'tracewire';", "from 'tracewire/static';");
        const [wrong, root, statics] = await Promise.all([
            typecheck(dir, 'control-wrong-call', wrongCall),
            typecheck(dir, 'control-root-only', rootOnly),
            typecheck(dir, 'control-static', withStatic)
        ]);
        expect(wrong).toStrictEqual([expect.stringMatching(/^2: TS2345: /)]);
        expect(root).toStrictEqual([expect.stringMatching(/^5: TS2339: Property 'file' does not exist/)]);
        expect(statics).toStrictEqual([]);
    }, 120_000);
});
