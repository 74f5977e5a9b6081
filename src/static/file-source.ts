import type { FileSettings } from './file-options.js';
import type { FoundFile } from './find-file.js';
import type { MultipartRanges } from './multipart-ranges.js';
import type { StaticState } from './state.js';

/**
 * How the ETag of a response was obtained, decided where it is obtained (`entityTag`, file-etag.ts):
 * `hit` (a hash from the cache), `computed` (hashed for this response or while it streams, or made
 * from size and mtime), `off` (no ETag).
 */
export type EtagOrigin = 'hit' | 'computed' | 'off';

/** What a file response carries from `prepare` to `marshal` and `close`; it is the response's `source`. */
export interface FileSource {
    /** The absolute path requested (a pre-compressed variant may be what is sent). */
    readonly path: string;
    readonly confineDir: string | null;
    readonly settings: FileSettings;
    readonly state: StaticState;
    file: FoundFile | null;
    /** Offset and length of the bytes sent, fixed by `prepare` (for a multipart body, its length). */
    offset: number;
    length: number;
    /** The file is large and not hashed yet: this response carries its identity tag and hashes what it sends. */
    hashWhileStreaming: boolean;
    /** Another strong tag of the same bytes that conditions are evaluated with, beside the one sent (file-etag.ts). */
    alsoTag: string | null;
    etagOrigin: EtagOrigin;
    /** The parts sent when several ranges are (multipart-ranges.ts), else null. */
    multipart: MultipartRanges | null;
}
