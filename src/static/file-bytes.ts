import type { FoundFile } from './find-file.js';
import { closeFile, fileKeptChanging, openFile, readBytes, statFd } from './fs.js';
import { type MultipartRanges, multipartBytes } from './multipart-ranges.js';
import { hasSameBytes } from './same-file.js';
import type { StaticState } from './state.js';

/*
 * The bytes of a found file, read synchronously, that count only when they are of the one version its
 * stats (and so the response's headers) describe: the descriptor must show the same bytes after the
 * read as before it (same-file.ts). A file that changed meanwhile is a 503 to retry
 * (`fileKeptChanging`), never a mix of two versions under a validator of either.
 */

/** The body of a response that sends no byte: a HEAD, an empty file, a client gone before its turn. */
export const emptyBody = Buffer.alloc(0);

/** Reads of a small file in `prepare` that keep meeting a file written meanwhile give up after this many. */
const readAttempts = 3;

/**
 * The whole of a small open file, read once and offered to the content cache. A file written
 * meanwhile is read again with its new stats (which the headers then describe), up to `attempts`
 * reads; once the headers are set, `marshal` allows one, since new stats would no longer match them.
 */
export function contentsOf(state: StaticState, file: FoundFile, attempts = readAttempts): Buffer {
    for (let attempt = 1; file.contents === null; ++attempt) {
        const size = file.stats.size;
        const contents = size === 0 ? emptyBody : readBytes(file.fd!, file.path, 0, size);
        const now = statFd(file.fd!, file.path);
        if (contents !== null && hasSameBytes(file.stats, now)) {
            file.contents = contents;
            state.contents.set(file.path, file.stats, contents);
        } else if (attempt >= attempts) {
            throw fileKeptChanging(file.path);
        } else {
            file.stats = now;
        }
    }

    return file.contents;
}

/** A slice of a large file, read whole; a file changed since its headers were set is a 503 to retry. */
export function readUnchanged(file: FoundFile, offset: number, length: number): Buffer {
    const bytes = readBytes(file.fd!, file.path, offset, length);
    if (bytes === null || !hasSameBytes(file.stats, statFd(file.fd!, file.path))) {
        throw fileKeptChanging(file.path);
    }

    return bytes;
}

/**
 * The multipart body of a large file, read at once: each part read as it is, the file checked once
 * after the last, since what matters is that all the bytes are of one version.
 */
export function readPartsUnchanged(file: FoundFile, multipart: MultipartRanges): Buffer {
    const body = multipartBytes(multipart, (offset, length) => {
        const bytes = readBytes(file.fd!, file.path, offset, length);
        if (bytes === null) {
            throw fileKeptChanging(file.path);
        }

        return bytes;
    });
    if (!hasSameBytes(file.stats, statFd(file.fd!, file.path))) {
        throw fileKeptChanging(file.path);
    }

    return body;
}

/**
 * The file its headers describe, opened again when its response's turn came: a file changed or
 * replaced meanwhile (another inode at the path) is a 503 to retry, since those headers describe
 * other bytes; a file gone is a 404.
 */
export function reopen(file: FoundFile, requested: string): FoundFile {
    const fd = openFile(file.path);
    try {
        if (!hasSameBytes(file.stats, statFd(fd, file.path))) {
            throw fileKeptChanging(requested, 'changed while its response waited its turn');
        }
    } catch (err) {
        closeFile(fd);
        throw err;
    }

    file.fd = fd;
    return file;
}
