/*
 * The attributes file responses put on the server span of their request (file-span.ts). A module
 * of their own, free of hapi types: `tracewire/instrumentation` exports the names.
 */

/** `file.path` and `file.size` of the conventions (incubating, so copied rather than imported). */
export const ATTR_FILE_PATH = 'file.path';
export const ATTR_FILE_SIZE = 'file.size';
/** The content encoding of the bytes sent: `identity`, or that of a pre-compressed variant (`gzip`, `br`...). */
export const ATTR_STATIC_ENCODING = 'tracewire.static.encoding';
/** `hit` (a hash from the cache), `computed` (hashed for this response, or made from size and mtime), `off` (no ETag). */
export const ATTR_STATIC_ETAG = 'tracewire.static.etag';
/** The byte ranges of a 206, as `bytes=first-last` (several: `bytes=0-99,500-599`). */
export const ATTR_STATIC_RANGE = 'tracewire.static.range';
