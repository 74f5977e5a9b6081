import type { Request } from '@hapi/hapi';
import { identityTag } from './etag.js';
import { contentsOf } from './file-bytes.js';
import type { FileSource } from './file-source.js';
import type { FoundFile } from './find-file.js';

/*
 * The entity tag one file response carries, and how it was obtained: from the ETag cache (etag.ts),
 * hashed now from the bytes in memory, or, for a large file not hashed yet, its identity tag while the
 * response hashes what it streams. The choice is recorded on the response's source here, where it is
 * made (`etagOrigin`, `hashWhileStreaming`, `alsoTag`), for the span and `marshal` to read.
 */

/**
 * Files up to this size not hashed yet are read whole, hashed and sent from memory before the first
 * byte (about a millisecond); larger ones are hashed while the first response streams them.
 */
const hashInMemoryLimit = 1024 * 1024;

/**
 * Synchronous unless a large file must be hashed first. A file up to 1 MiB not hashed yet is read
 * once, here, and the same bytes are hashed and sent. A larger one gets its identity tag (etag.ts)
 * at once, and the first response that sends it whole hashes the bytes as they pass; only a request
 * holding a tag that may be a content hash waits for the hash, which alone can answer it.
 */
export function entityTag(
    source: FileSource,
    file: FoundFile,
    request: Request
): string | null | Promise<string | null> {
    const { state, settings } = source;
    source.alsoTag = null;
    const known = state.etags.known(settings.etagMethod, file.path, file.stats);
    if (known !== undefined) {
        source.etagOrigin =
            settings.etagMethod === 'hash' ? 'hit' : settings.etagMethod === 'simple' ? 'computed' : 'off';
        return known !== null && settings.etagMethod === 'hash' ? honourIdentity(source, file, request, known) : known;
    }

    source.etagOrigin = 'computed';
    if (file.stats.size > hashInMemoryLimit && !mayHoldContentHash(request)) {
        source.hashWhileStreaming = file.fd !== null;
        return identityTag(file.stats);
    }

    if (file.contents !== null || (file.fd !== null && file.stats.size <= hashInMemoryLimit)) {
        const contents = contentsOf(state, file);
        return state.etags.tagOf(file.path, file.stats, contents);
    }

    return state.etags
        .tag(settings.etagMethod, file.path, file.stats)
        .then((hash) => (hash === null ? null : honourIdentity(source, file, request, hash)));
}

/**
 * The tag of a large file whose hash is known: the hash, or the identity tag when the request names
 * the file's current one (a response before the hash carried it). That tag goes back (a cache updates
 * or completes only what it stored under the tag it sent) and conditions hold with either.
 */
function honourIdentity(source: FileSource, file: FoundFile, request: Request, hash: string): string {
    if (file.stats.size <= hashInMemoryLimit || !needsTag(request)) {
        // Smaller files never went out with an identity tag, and one of a larger size names other bytes.
        return hash;
    }

    const identity = identityTag(file.stats);
    if (!tagHeaders(request).includes(`"${identity}`)) {
        return hash;
    }

    source.alsoTag = hash;
    return identity;
}

/** Headers that can only be evaluated with the entity tag itself. */
function needsTag(request: Request): boolean {
    const headers = request.headers;
    return (
        headers['if-match'] !== undefined || headers['if-none-match'] !== undefined || headers['if-range'] !== undefined
    );
}

/** The entity-tag headers of a request, joined: enough to look for a tag in any of them. */
function tagHeaders(request: Request): string {
    const headers = request.headers;
    return `${headers['if-match'] ?? ''} ${headers['if-none-match'] ?? ''} ${headers['if-range'] ?? ''}`;
}

/** A SHA-1 tag (40 hex digits, perhaps with hapi's `-gzip` suffix) in any entity-tag header. */
const contentHashTag = /"[0-9a-f]{40}/;

function mayHoldContentHash(request: Request): boolean {
    return needsTag(request) && contentHashTag.test(tagHeaders(request));
}
