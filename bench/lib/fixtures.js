// The files the static and memory benchmarks serve, made afresh in a temporary directory.
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** Text of exactly `bytes` bytes that compresses like a real document (not a run of one letter). */
function text(bytes) {
    const lines = [];
    let length = 0;
    for (let line = 0; length < bytes; line++) {
        const content = `${line.toString().padStart(6, '0')} tracewire serves static files with etags, ranges and encodings ${line * 7919}\n`;
        lines.push(content);
        length += content.length;
    }

    return lines.join('').slice(0, bytes);
}

export async function createFixtures() {
    const directory = await mkdtemp(join(os.tmpdir(), 'tracewire-bench-'));
    const sixtyFourKiB = text(64 * 1024);
    await writeFile(join(directory, 'file-1k.txt'), text(1024));
    await writeFile(join(directory, 'file-64k.txt'), sixtyFourKiB);
    await writeFile(join(directory, 'file-64k.txt.gz'), gzipSync(sixtyFourKiB, { level: 9 }));
    // ASCII on purpose: autocannon decodes every body to a string, and binary bytes would make that
    // decoding, not the server, the limit of the 10 MiB case.
    await writeFile(join(directory, 'file-10m.bin'), Buffer.alloc(10 * 1024 * 1024, sixtyFourKiB));
    // Sparse: 1 GiB to read, nothing on disk.
    await writeFile(join(directory, 'file-1g.bin'), '');
    await truncate(join(directory, 'file-1g.bin'), 1024 ** 3);
    return { directory, remove: () => rm(directory, { recursive: true, force: true }) };
}
