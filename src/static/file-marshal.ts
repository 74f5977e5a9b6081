import type { Readable } from 'node:stream';
import type { Request, ResponseObject } from '@hapi/hapi';
import { cachedFileLimit } from './content-cache.js';
import { FileBody } from './file-body.js';
import { contentsOf, emptyBody, readPartsUnchanged, readUnchanged, reopen } from './file-bytes.js';
import type { FileSource } from './file-source.js';
import { type FoundFile, releaseFile } from './find-file.js';
import { MultipartBody } from './multipart-body.js';
import { multipartBytes } from './multipart-ranges.js';
import { requestOf } from './response-object.js';
import { awaitTurn } from './response-turn.js';

/*
 * The `marshal` step of the file response (file.ts): the bytes `prepare` described (file-prepare.ts),
 * read whole when they are few (from memory for a small file, kept for the next request), else
 * streamed from the descriptor once the response's turn on its connection comes. Whatever is read
 * is of the one version of the file the headers describe (file-bytes.ts, file-body.ts).
 */

/** Files up to this size are read into one Buffer: cheaper than a stream for the many small assets. */
const bufferedFileLimit = 64 * 1024;

/** Synchronous: hapi awaits what marshal returns, and a Buffer needs no promise of an async function. */
export function marshalFileResponse(response: ResponseObject): Buffer | Readable | Promise<Buffer | Readable> {
    const source = response.source as FileSource;
    const { state } = source;
    const file = source.file!;
    if (file.fd === null && file.contents === null) {
        // HEAD: hapi only asks for the length, which is already set.
        return emptyBody;
    }

    if (source.multipart !== null) {
        return multipartBody(source, file, requestOf(response));
    }

    if (file.contents !== null || file.stats.size <= cachedFileLimit) {
        // Small files are read whole (once, kept for the next request) and sliced for a range.
        try {
            // The headers are set: a file changed since they were is a 503 now, not read afresh.
            const contents = contentsOf(state, file, 1);
            // The whole file (no range, no start/end) is sent as it is, without a view to allocate.
            return source.offset === 0 && source.length === contents.length
                ? contents
                : contents.subarray(source.offset, source.offset + source.length);
        } finally {
            releaseFile(file);
        }
    }

    if (source.length <= bufferedFileLimit) {
        try {
            return readUnchanged(file, source.offset, source.length);
        } finally {
            releaseFile(file);
        }
    }

    const request = requestOf(response);
    return inTurn(request, source, file, (opened) => streamFile(source, opened, request));
}

/**
 * A streamed body made once its response's turn on the connection comes: queued behind another
 * response (pipelining, response-turn.ts), it holds no descriptor until then, and the file is
 * opened again and checked when the turn comes.
 */
function inTurn(
    request: Request,
    source: FileSource,
    file: FoundFile,
    stream: (opened: FoundFile) => Readable
): Readable | Promise<Readable | Buffer> {
    const turn = awaitTurn(request.raw.req, request.raw.res);
    if (turn === null) {
        return stream(file);
    }

    releaseFile(file);
    return turn.then((connected) => (connected ? stream(reopen(file, source.path)) : emptyBody));
}

/** The body of a streamed response, which then owns the file's descriptor. */
function streamFile(source: FileSource, file: FoundFile, request: Request): FileBody {
    const { state } = source;
    const { path, stats } = file;
    const hashes = source.hashWhileStreaming && source.offset === 0 && source.length === stats.size;
    const body = new FileBody({
        fd: file.fd!,
        path,
        stats,
        offset: source.offset,
        length: source.length,
        sink: request.raw.res,
        // The first response of a large file hashes the bytes it sends; the next ones carry the tag.
        onHashed: hashes ? (tag) => state.etags.remember(path, stats, tag) : null
    });
    // The body now owns the descriptor and closes it when it ends or is destroyed.
    file.fd = null;
    return body;
}

/**
 * The parts of a multipart response, read as a single range is: from memory for a small file, at
 * once when they are small (a thread-pool round trip per part would cost more than the reads), else
 * streamed from the descriptor.
 */
function multipartBody(
    source: FileSource,
    file: FoundFile,
    request: Request
): Buffer | Readable | Promise<Readable | Buffer> {
    const multipart = source.multipart!;
    if (file.contents !== null || file.stats.size <= cachedFileLimit) {
        try {
            const contents = contentsOf(source.state, file, 1);
            return multipartBytes(multipart, (offset, length) => contents.subarray(offset, offset + length));
        } finally {
            releaseFile(file);
        }
    }

    if (multipart.length <= bufferedFileLimit) {
        try {
            return readPartsUnchanged(file, multipart);
        } finally {
            releaseFile(file);
        }
    }

    return inTurn(request, source, file, (opened) => {
        const body = new MultipartBody({
            fd: opened.fd!,
            path: opened.path,
            stats: opened.stats,
            multipart,
            sink: request.raw.res
        });
        // The body now owns the descriptor and closes it when it ends or is destroyed.
        opened.fd = null;
        return body;
    });
}
