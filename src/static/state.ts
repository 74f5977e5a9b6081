import { BoundedMemo } from '../common/bounded-memo.js';
import { ContentCache } from './content-cache.js';
import { EtagCache } from './etag.js';
import { realPath } from './fs.js';

/** Bounds the caches keyed by configuration-derived strings, should a path function invent many. */
const lookupCacheLimit = 1000;
/** Content types are kept per file path: as many as the ETag cache's default bound. */
const contentTypeLimit = 1000;

/**
 * What the server's MIME database (hapi's `server.mime`, which honours the server's `mime` option)
 * says of a path: its type, and the charset the database names for it.
 */
export type MimeLookup = (path: string) => { type?: string; charset?: string };

/** Per-server state of the plugin: the ETag cache and lookups that stay valid for the server's life. */
export class StaticState {
    readonly etags: EtagCache;
    /** Small files' bytes, validated by a stat on every use. */
    readonly contents = new ContentCache();
    /** A confine root's real path is resolved once: the root itself may be a symlink. */
    readonly #realRoots = new BoundedMemo<string, string>(lookupCacheLimit);
    readonly #contentTypes = new BoundedMemo<string, string>(contentTypeLimit);
    readonly #httpDates = new BoundedMemo<number, string>(lookupCacheLimit);

    constructor(
        etagsCacheMaxSize: number,
        private readonly mime: MimeLookup
    ) {
        this.etags = new EtagCache(etagsCacheMaxSize);
    }

    /** Throws the mapped error when the root does not exist: it may be created later, so misses are not kept. */
    realRoot(root: string): string {
        return this.#realRoots.getOrDerive(root, realPath);
    }

    /** An HTTP date (`last-modified`) for a modification time; formatting a Date costs more than a lookup. */
    httpDate(mtimeMs: number): string {
        return this.#httpDates.getOrDerive(mtimeMs, formatHttpDate);
    }

    /**
     * The content type of a file name by its extension, from the server's MIME database (as
     * @hapi/inert does), with the charset the database names or, for text types, UTF-8. Kept by
     * path: the lookups of the ETag and content caches have already hashed the path string, where
     * finding the extension (`Path.extname`) cost a cached 304 more than the lookup.
     */
    contentType(path: string): string {
        // get, then set: a closure over `path` for getOrDerive would be allocated on every request.
        return this.#contentTypes.get(path) ?? this.#contentTypes.set(path, this.#lookUp(path));
    }

    #lookUp(path: string): string {
        const { type, charset } = this.mime(path);
        if (type === undefined || type === '') {
            return 'application/octet-stream';
        }

        const withCharset = charset ?? (type.startsWith('text/') ? 'UTF-8' : undefined);
        return withCharset === undefined ? type : `${type}; charset=${withCharset.toLowerCase()}`;
    }
}

/** Rounded as Node rounds `stats.mtime`, which a fraction past .9995 s carries into the next second. */
function formatHttpDate(mtimeMs: number): string {
    return new Date(Math.round(mtimeMs)).toUTCString();
}
