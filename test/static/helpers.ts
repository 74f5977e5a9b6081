import * as Fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as Hapi from '@hapi/hapi';
import { staticFiles } from '../../src/static/index.js';

/** Bytes of a file bigger than the buffered-read limit, so it is streamed. */
export const largeText = 'The quick brown fox jumps over the lazy dog.\n'.repeat(3000);

/** Odd names every listing and link must survive. */
export const oddNames = [
    'with space.txt',
    'hash#name.txt',
    'q?mark.txt',
    'per%cent.txt',
    'ünïcødé ☃.txt',
    '<script>alert(1)<\\script>.txt',
    'quote"and\'apostrophe.txt'
];

/**
 * A temporary tree the tests serve from. `root` holds the served files, `outside` a file that must
 * never be reachable from `root`, `rootLink` is a symlink to `root`.
 */
export interface Fixture {
    base: string;
    root: string;
    outside: string;
    rootLink: string;
    remove(): void;
}

export function createFixture(): Fixture {
    const base = Fs.realpathSync(Fs.mkdtempSync(join(tmpdir(), 'tracewire-static-')));
    const root = join(base, 'root');
    const outside = join(base, 'outside');
    const files: Record<string, string | Buffer> = {
        'hello.txt': 'Hello, world!\n',
        'page.html': '<h1>page</h1>\n',
        'data.json': '{"a":1}',
        'image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
        'no-extension': 'plain bytes',
        'large.txt': largeText,
        'large.txt.gz': gzipSync(largeText),
        'large.txt.br': 'pretend brotli',
        'only-br.txt': 'identity',
        'only-br.txt.br': 'brotli bytes',
        'gz-dir.txt': 'identity beside a directory named like its variant',
        'empty.txt': '',
        'about.html': '<h1>about</h1>',
        '.env': 'SECRET=1',
        '.git/config': '[core]',
        'a/.env': 'SECRET=2',
        'a/visible.txt': 'visible',
        'a/.hidden/file.txt': 'hidden inside',
        'dir/index.html': '<h1>dir index</h1>',
        'dir/other.html': '<h1>other</h1>',
        'dir/custom.htm': '<h1>custom index</h1>',
        'nested/deep/file.txt': 'deep',
        'listed/b.txt': 'bbb',
        'listed/a.txt': 'a',
        'listed/.secret': 'hidden',
        'listed/sub/x.txt': 'x',
        'listed/another/y.txt': 'y',
        'index-is-dir/index.html/inner.txt': 'inner',
        'second/only-in-second.txt': 'second root'
    };
    for (const name of oddNames) {
        files[`odd/${name}`] = `content of ${name}`;
    }

    for (const [name, content] of Object.entries(files)) {
        const path = join(root, name);
        Fs.mkdirSync(join(path, '..'), { recursive: true });
        Fs.writeFileSync(path, content);
    }

    Fs.mkdirSync(join(root, 'gz-dir.txt.gz'));
    Fs.mkdirSync(join(outside), { recursive: true });
    Fs.writeFileSync(join(outside, 'secret.txt'), 'outside secret');
    Fs.symlinkSync(join(root, 'hello.txt'), join(root, 'link-inside.txt'));
    Fs.symlinkSync(join(outside, 'secret.txt'), join(root, 'link-outside.txt'));
    Fs.symlinkSync(outside, join(root, 'dir-link-outside'));
    const rootLink = join(base, 'root-link');
    Fs.symlinkSync(root, rootLink);
    return { base, root, outside, rootLink, remove: () => Fs.rmSync(base, { recursive: true, force: true }) };
}

export async function createServer(options: Hapi.ServerOptions = {}): Promise<Hapi.Server> {
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false, ...options });
    await server.register(staticFiles);
    return server;
}

/** Open descriptors of this process. */
export function countOpenFds(): number {
    return Fs.readdirSync('/proc/self/fd').length;
}

/** Waits until the open descriptor count is back to `baseline` (closing is asynchronous), or returns the last count. */
export async function settledFdCount(baseline: number, timeoutMs = 2000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let count = countOpenFds();
    while (count > baseline && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        count = countOpenFds();
    }

    return count;
}

/**
 * Resolves once the clock is past the file's change and modification times by a margin. A change of a
 * file is told by these times (src/static/same-file.ts), and kernels before 6.13 stamp them from a clock
 * that ticks every 4 to 10 ms: a write a few ms after the previous one can get the very same times, and
 * then looks like no change at all. 20 ms covers the coarsest tick (HZ=100), whatever the kernel.
 */
export async function pastTimestamps(path: string): Promise<void> {
    const { mtimeMs, ctimeMs } = Fs.statSync(path);
    while (Date.now() <= Math.max(mtimeMs, ctimeMs) + 20) {
        await new Promise((resolve) => setTimeout(resolve, 5));
    }
}
