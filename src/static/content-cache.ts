import type { Stats } from 'node:fs';
import { type FileIdentity, identityOf, isSameFile } from './same-file.js';

/*
 * Small files' bytes, kept so that a request for a file already read costs a `stat` instead of
 * `open`, `fstat`, `pread` and `close` (profile of the 1 KiB benchmark: those four calls were a
 * third of the server's time per request).
 *
 * Every hit is validated against a fresh `stat` of the file's real path: device, inode, size,
 * modification and change times must all be those of the read. Any write, truncation, rename over
 * the file, chmod or touch changes the change time, so a file changed on disk is read afresh on the
 * very next request. File systems with coarse clocks could give two writes within one tick the same
 * times, so a file changed within the last `settleMs` is never kept: its bytes are read each time
 * until it has been still for that long.
 */

/** Only files this small are kept (the size up to which responses are read into one Buffer anyway). */
export const cachedFileLimit = 64 * 1024;
/** Bounds the memory held: 1000 files and 16 MiB, whichever is reached first. */
const maxEntries = 1000;
const maxBytes = 16 * 1024 * 1024;
/** Two seconds covers the coarsest common file-system clocks (FAT, ext3: 1–2 s). */
const settleMs = 2000;

interface CachedContents {
    readonly identity: FileIdentity;
    readonly bytes: Buffer;
}

/** The bytes of small files by real path, the oldest kept first (and evicted first). */
export class ContentCache {
    readonly #entries = new Map<string, CachedContents>();
    #bytes = 0;

    get size(): number {
        return this.#entries.size;
    }

    /** The kept bytes of the file at `realPath` when `stats` (just taken) shows it unchanged, else null. */
    get(realPath: string, stats: Stats): Buffer | null {
        const entry = this.#entries.get(realPath);
        if (entry === undefined) {
            return null;
        }

        if (!isSameFile(entry.identity, stats) || !stats.isFile()) {
            this.#delete(realPath, entry);
            return null;
        }

        return entry.bytes;
    }

    /** Whether a file at `realPath` is likely to be kept: the lookup is worth a `stat` only then. */
    has(realPath: string): boolean {
        return this.#entries.has(realPath);
    }

    /** Keeps the bytes just read from the file described by `stats`, if it is small and settled. */
    set(realPath: string, stats: Stats, bytes: Buffer): void {
        if (
            bytes.length !== stats.size ||
            stats.size > cachedFileLimit ||
            Date.now() - Math.max(stats.mtimeMs, stats.ctimeMs) < settleMs
        ) {
            return;
        }

        const previous = this.#entries.get(realPath);
        if (previous !== undefined) {
            this.#delete(realPath, previous);
        }

        this.#entries.set(realPath, { identity: identityOf(stats), bytes });
        this.#bytes += bytes.length;
        for (const [oldestPath, oldest] of this.#entries) {
            if (this.#entries.size <= maxEntries && this.#bytes <= maxBytes) {
                break;
            }

            this.#delete(oldestPath, oldest);
        }
    }

    #delete(realPath: string, entry: CachedContents): void {
        this.#entries.delete(realPath);
        this.#bytes -= entry.bytes.length;
    }
}
