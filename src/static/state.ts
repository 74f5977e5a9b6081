import * as Path from 'node:path';
import * as Mime from 'mime-types';
import { ContentCache } from './content-cache.js';
import { EtagCache } from './etag.js';
import { realPath } from './fs.js';

/** Bounds the caches keyed by configuration-derived strings, should a path function invent many. */
const lookupCacheLimit = 1000;

/** Per-server state of the plugin: the ETag cache and lookups that stay valid for the server's life. */
export class StaticState {
    readonly etags: EtagCache;
    /** Small files' bytes, validated by a stat on every use. */
    readonly contents = new ContentCache();
    /** A confine root's real path is resolved once: the root itself may be a symlink. */
    readonly #realRoots = new Map<string, string>();
    readonly #contentTypes = new Map<string, string>();
    readonly #httpDates = new Map<number, string>();

    constructor(etagsCacheMaxSize: number) {
        this.etags = new EtagCache(etagsCacheMaxSize);
    }

    /** Throws the mapped error when the root does not exist: it may be created later, so misses are not kept. */
    realRoot(root: string): string {
        let resolved = this.#realRoots.get(root);
        if (resolved === undefined) {
            if (this.#realRoots.size >= lookupCacheLimit) {
                this.#realRoots.clear();
            }

            resolved = realPath(root);
            this.#realRoots.set(root, resolved);
        }

        return resolved;
    }

    /** An HTTP date (`last-modified`) for a modification time; formatting a Date costs more than a lookup. */
    httpDate(mtimeMs: number): string {
        let date = this.#httpDates.get(mtimeMs);
        if (date === undefined) {
            if (this.#httpDates.size >= lookupCacheLimit) {
                this.#httpDates.clear();
            }

            // Rounded as Node rounds `stats.mtime`, which a fraction past .9995 s carries into the next second.
            date = new Date(Math.round(mtimeMs)).toUTCString();
            this.#httpDates.set(mtimeMs, date);
        }

        return date;
    }

    /** The content type of a file name by its extension, with a charset for text types. */
    contentType(path: string): string {
        const extension = Path.extname(path);
        let type = this.#contentTypes.get(extension);
        if (type === undefined) {
            if (this.#contentTypes.size >= lookupCacheLimit) {
                this.#contentTypes.clear();
            }

            type = Mime.contentType(extension || Path.basename(path)) || 'application/octet-stream';
            this.#contentTypes.set(extension, type);
        }

        return type;
    }
}
