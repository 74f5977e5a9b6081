import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import * as Fs from 'node:fs';
import { toPathError } from './fs.js';
import { type FileIdentity, hasSameBytes, identityKey, identityOf, isSameFile } from './same-file.js';

/** How the ETag of a file is made (README, "Static files"): a content hash, size and mtime, or none. */
export type EtagMethod = 'hash' | 'simple' | false;

/** Hashing reads the whole file; large chunks keep the number of reads (and callbacks) low. */
const hashChunkSize = 256 * 1024;

/** A remembered tag and the identity of the file it was hashed from. */
interface KnownTag {
    readonly identity: FileIdentity;
    readonly tag: string;
}

/**
 * The SHA-1 tags of file contents by path, most recently used last. Each tag holds only while the
 * file is the same file it was hashed from (same-file.ts), so a changed file gets a new tag without
 * anyone invalidating the cache. Keyed by the path alone: building a key string from the path and
 * the stats on every request was a measurable share of a cached 304.
 */
export class EtagCache {
    readonly #maxSize: number;
    readonly #tags = new Map<string, KnownTag>();
    /** Requests arriving while a file is hashed share the one read of it. */
    readonly #pending = new Map<string, Promise<string | null>>();
    /** The path at the young end already, which a run of requests for one file need not move again. */
    #youngest: string | null = null;

    constructor(maxSize: number) {
        this.#maxSize = maxSize;
    }

    get size(): number {
        return this.#tags.size;
    }

    /** The ETag of the file at `path` per `method`, or null when `method` is false. */
    tag(method: EtagMethod, path: string, stats: Stats): Promise<string | null> {
        const known = this.known(method, path, stats);
        return known === undefined ? this.#hash(path, stats) : Promise.resolve(known);
    }

    /**
     * The ETag when it is known without reading the file, else undefined. Most requests hit the
     * cache, and answering them synchronously spares a promise and a turn of the microtask queue.
     */
    known(method: EtagMethod, path: string, stats: Stats): string | null | undefined {
        if (method === 'simple') {
            return simpleTag(stats);
        }

        if (method === false) {
            return null;
        }

        const known = this.#tags.get(path);
        if (known === undefined || !isSameFile(known.identity, stats)) {
            return undefined;
        }

        if (path !== this.#youngest) {
            // Re-inserting moves the entry to the young end of the Map's insertion order.
            this.#tags.delete(path);
            this.#tags.set(path, known);
            this.#youngest = path;
        }

        return known.tag;
    }

    /** The tag of contents already in memory: hashed here, remembered, no read of the file. */
    tagOf(path: string, stats: Stats, contents: Buffer): string {
        const tag = createHash('sha1').update(contents).digest('hex');
        this.remember(path, stats, tag);
        return tag;
    }

    /** Remembers a tag computed from the file described by `stats` (or from the bytes of a response as they were streamed). */
    remember(path: string, stats: Stats, tag: string): void {
        if (this.#maxSize === 0) {
            return;
        }

        // Deleting first puts a replaced tag at the young end too.
        this.#tags.delete(path);
        this.#tags.set(path, { identity: identityOf(stats), tag });
        this.#youngest = path;
        if (this.#tags.size > this.#maxSize) {
            const oldest = this.#tags.keys().next().value as string;
            this.#tags.delete(oldest);
        }
    }

    /** Null when the file at `path` is not (or stops being) the one `stats` describes: no tag for other bytes. */
    #hash(path: string, stats: Stats): Promise<string | null> {
        const key = keyOf(path, stats);
        const pending = this.#pending.get(key);
        if (pending) {
            return pending;
        }

        const hashing = hashFile(path, stats).then(
            (tag) => {
                this.#pending.delete(key);
                if (tag !== null) {
                    this.remember(path, stats, tag);
                }

                return tag;
            },
            (err: unknown) => {
                this.#pending.delete(key);
                throw err;
            }
        );
        this.#pending.set(key, hashing);
        return hashing;
    }
}

/** A file's identity for sharing one hash: the fields of same-file.ts. */
function keyOf(path: string, stats: Stats): string {
    return `${path}\0${identityKey(stats)}`;
}

/**
 * The tag of a large file before its contents are hashed (README, "Static files"): strong, because it
 * changes with any change of the file (same-file.ts), and honoured beside the hash afterwards. It names
 * the inode, so servers of a distributed deployment give one file different identity tags.
 */
export function identityTag(stats: FileIdentity): string {
    return identityKey(stats);
}

/** Size and modification time in hex: cheap, and stable as long as one server serves the file. */
export function simpleTag(stats: Stats): string {
    return `${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}`;
}

/**
 * The SHA-1 of the contents, so every server of a distributed deployment gives a file the same tag.
 * Read through one descriptor that must describe the file of `stats` before and after the read:
 * null when it does not (the file was replaced or written meanwhile).
 */
function hashFile(path: string, stats: Stats): Promise<string | null> {
    return new Promise((resolve, reject) => {
        const hash = createHash('sha1');
        const stream = Fs.createReadStream(path, { highWaterMark: hashChunkSize });
        let fd: number | null = null;
        stream.on('open', (opened: number) => {
            fd = opened;
        });
        stream.on('data', (chunk) => hash.update(chunk));
        stream.on('error', (err: NodeJS.ErrnoException) => reject(toPathError(err, path)));
        stream.on('end', () => {
            const now = fd === null ? null : fstatOrNull(fd);
            stream.destroy();
            resolve(now !== null && hasSameBytes(stats, now) ? hash.digest('hex') : null);
        });
    });
}

function fstatOrNull(fd: number): Stats | null {
    try {
        return Fs.fstatSync(fd);
    } catch {
        return null;
    }
}
