import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Scratch projects the way a user makes them: a package.json, `npm install` of the packed tarball
 * and of the packages a real service has (msw, nock, the OpenTelemetry SDK, TypeScript...). They
 * live under ~/.cache/tracewire-consumer (TRACEWIRE_CONSUMER_CACHE), node_modules kept between runs,
 * so a run after the first installs only the new tarball and what changed.
 */

const here = fileURLToPath(new URL('.', import.meta.url));
export const repo = join(here, '..', '..');
export const cacheRoot = process.env.TRACEWIRE_CONSUMER_CACHE ?? join(homedir(), '.cache', 'tracewire-consumer');
/** Where global-setup.ts packs the package (`npm pack` of the built repository). */
export const tarball = join(cacheRoot, 'tracewire.tgz');

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The project `test/consumer/projects/<name>` made ready in the cache: its package.json (plus the
 * tarball as `tracewire` when `withTracewire`), the files of `test/consumer/apps/<apps>`, installed.
 * Returns its directory.
 */
export function scratchProject(name: string, options: { apps?: string; withTracewire?: boolean } = {}): string {
    const dir = join(cacheRoot, name);
    mkdirSync(dir, { recursive: true });
    const pkg = JSON.parse(readFileSync(join(here, 'projects', name, 'package.json'), 'utf8'));
    if (options.withTracewire !== false) {
        pkg.dependencies = { ...pkg.dependencies, tracewire: `file:${tarball}` };
        // A file: dependency is not fetched again when the version is unchanged: remove it first.
        rmSync(join(dir, 'node_modules', 'tracewire'), { recursive: true, force: true });
    }

    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 4)}\n`);
    if (options.apps !== undefined) {
        cpSync(join(here, 'apps', options.apps), dir, { recursive: true });
    }

    run(npm, ['install', '--no-audit', '--no-fund', '--no-package-lock', '--prefer-offline', '--loglevel=error'], dir);
    return dir;
}

/** Runs a command in `cwd`; its output, or an error carrying both streams. */
export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
    try {
        return execFileSync(command, args, {
            cwd,
            encoding: 'utf8',
            env: { ...process.env, NODE_OPTIONS: '', ...env },
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout: 300_000
        });
    } catch (err) {
        const { stdout, stderr } = err as { stdout?: string; stderr?: string };
        throw new Error(`${command} ${args.join(' ')} failed in ${cwd}\n${stdout ?? ''}\n${stderr ?? ''}`);
    }
}

/** Runs `node args...` in `cwd` with the Node running the tests and parses the last line it prints as JSON. */
export function runNode<T>(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): T {
    const out = run(process.execPath, args, cwd, env).trim().split('\n');
    return JSON.parse(out[out.length - 1]!) as T;
}

/** Packs the built repository into `tarball`. */
export function pack(): void {
    mkdirSync(cacheRoot, { recursive: true });
    if (!existsSync(join(repo, 'dist', 'src', 'index.js'))) {
        throw new Error('dist/ is missing: run `npm run test:consumer`, which builds first');
    }

    const name = run(npm, ['pack', '--pack-destination', cacheRoot, '--loglevel=error'], repo)
        .trim()
        .split('\n')
        .pop()!;
    rmSync(tarball, { force: true });
    cpSync(join(cacheRoot, name), tarball);
    rmSync(join(cacheRoot, name));
}
