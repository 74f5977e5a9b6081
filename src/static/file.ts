import * as Path from 'node:path';
import type { Readable } from 'node:stream';
import type { Request, ResponseObject } from '@hapi/hapi';
import { forbidden, preconditionFailed } from '../errors/index.js';
import { cachedFileLimit } from './content-cache.js';
import { formatContentDisposition } from './content-disposition.js';
import { identityTag } from './etag.js';
import { FileBody } from './file-body.js';
import { assertOption, type FileSettings } from './file-options.js';
import type { FileSource } from './file-source.js';
import { traceFilePreparation } from './file-span.js';
import { considersVariants, type FoundFile, findFile, releaseFile, resolveFilePath } from './find-file.js';
import { closeFile, fileKeptChanging, openFile, readBytes, statFd } from './fs.js';
import { MultipartBody } from './multipart-body.js';
import { answerRanges, multipartBytes } from './multipart-ranges.js';
import { evaluatePreconditions, hasPreconditions, needsBody } from './preconditions.js';
import { requestedRanges } from './range.js';
import { awaitTurn } from './response-turn.js';
import { hasSameBytes } from './same-file.js';
import type { StaticState } from './state.js';

/*
 * The response path shared by the file and directory handlers: find the file, answer the
 * conditions from its metadata, describe the bytes (type, disposition, encoding, range), then read
 * or stream them. Options are checked in file-options.ts, conditions in preconditions.ts, ranges
 * in range.ts, the lookup on disk in find-file.ts.
 */

/** Files up to this size are read into one Buffer: cheaper than a stream for the many small assets. */
const bufferedFileLimit = 64 * 1024;
/**
 * Files up to this size not hashed yet are read whole, hashed and sent from memory before the first
 * byte (about a millisecond); larger ones are hashed while the first response streams them.
 */
const hashInMemoryLimit = 1024 * 1024;
const emptyBody = Buffer.alloc(0);

/** The file response for a path given to `h.file()` or the `file` handler. */
export function respondWithFile(
    state: StaticState,
    request: Request,
    path: string,
    settings: FileSettings
): ResponseObject {
    assertOption(typeof path === 'string' && path !== '', 'file path must be a non-empty string');
    const relativeTo = request.route.settings.files?.relativeTo ?? '.';
    const resolved = resolveFilePath(relativeTo, path, settings.confine);
    return createFileResponse(state, request, resolved.path, resolved.confineDir, settings);
}

/**
 * Builds the file response. `prepare` finds the file and sets every header, answering 304, 412 or
 * 416 from metadata alone; `marshal` reads the bytes; `close` releases the descriptor whatever
 * happened. `found` is a file the directory handler already located.
 */
export function createFileResponse(
    state: StaticState,
    request: Request,
    path: string,
    confineDir: string | null,
    settings: FileSettings,
    found: FoundFile | null = null
): ResponseObject {
    const source: FileSource = {
        path,
        confineDir,
        settings,
        state,
        file: found,
        offset: 0,
        length: 0,
        hashWhileStreaming: false,
        alsoTag: null,
        etagOrigin: 'off',
        multipart: null
    };
    return request.generateResponse(source, {
        variety: 'file',
        // hapi awaits what prepare returns, so a response returned synchronously is as good as a promise.
        prepare: tracedPrepare as (response: ResponseObject) => Promise<ResponseObject>,
        // hapi awaits what marshal returns, so the Buffer of a small file is returned as it is.
        marshal: marshalFileResponse as (response: ResponseObject) => Promise<Buffer | Readable>,
        close: closeFileResponse
    });
}

/** Prepare, recording what was served on the request's server span when one records (file-span.ts). */
const tracedPrepare = traceFilePreparation(prepareFileResponse);

/**
 * Synchronous unless a file must be hashed: a cached ETag answers most requests without the promise
 * and microtask turns of an async function. Failures still reach hapi as a rejection, as before.
 */
function prepareFileResponse(response: ResponseObject): ResponseObject | Promise<ResponseObject> {
    const source = response.source as FileSource;
    let pending: Promise<void> | undefined;
    try {
        pending = prepareHeaders(response, source);
    } catch (err) {
        releaseFile(source.file);
        return Promise.reject(err);
    }

    if (pending === undefined) {
        return response;
    }

    return pending.then(
        () => response,
        (err: unknown) => {
            releaseFile(source.file);
            throw err;
        }
    );
}

function prepareHeaders(response: ResponseObject, source: FileSource): Promise<void> | undefined {
    const request = requestOf(response);
    const { settings, state } = source;
    const withBody = needsBody(request);
    const file = source.file ?? findFile(state, request, source.path, source.confineDir, settings, withBody);
    source.file = file;
    assertRegularFile(file, source.path);

    if (considersVariants(settings, request)) {
        // Which file is sent depends on accept-encoding, whether or not a variant exists.
        response.vary('accept-encoding');
    }

    // A status set before prepare (an error page sent with `.code(404)`) is not the resource itself:
    // no validators, no 304 and no ranges for it.
    const isResource = response.statusCode === 200;
    const etag = isResource ? entityTag(source, file, request) : null;
    return etag instanceof Promise
        ? etag.then((tag) => answerConditions(response, source, file, tag))
        : answerConditions(response, source, file, etag);
}

/** Answers 304 or 412 from metadata when the conditions allow; otherwise goes on to describe the body. */
function answerConditions(
    response: ResponseObject,
    source: FileSource,
    file: FoundFile,
    etag: string | null
): Promise<void> | undefined {
    const request = requestOf(response);
    const { settings, state } = source;
    const isResource = response.statusCode === 200;
    if (isResource && hasPreconditions(request)) {
        const outcome = evaluatePreconditions(request, etag, file.stats.mtimeMs, source.alsoTag);
        if (outcome === 'precondition-failed') {
            throw preconditionFailed(null, { path: source.path });
        }

        if (outcome === 'not-modified') {
            setValidators(response, state, file, etag);
            setContentType(response, state, source.path);
            response.code(304);
            releaseFile(file);
            return undefined;
        }
    }

    if (file.fd === null && file.contents === null && request.method !== 'head') {
        // The conditions did not spare the body after all: open the file and describe what is sent.
        const opened = findFile(state, request, source.path, source.confineDir, settings, true);
        source.file = opened;
        assertRegularFile(opened, source.path);
        const tag = isResource ? entityTag(source, opened, request) : null;
        if (tag instanceof Promise) {
            return tag.then((known) => describeBody(response, source, opened, known));
        }

        describeBody(response, source, opened, tag);
        return undefined;
    }

    describeBody(response, source, file, etag);
    return undefined;
}

/** Sets the validators, length, type, disposition, encoding and range of the bytes to send. */
function describeBody(response: ResponseObject, source: FileSource, file: FoundFile, etag: string | null): void {
    const request = requestOf(response);
    const { settings, state } = source;
    const isResource = response.statusCode === 200;
    if (isResource) {
        setValidators(response, state, file, etag);
    }

    const size = file.stats.size;
    const first = Math.min(settings.start, size);
    const last = settings.end === null ? size - 1 : Math.min(settings.end, size - 1);
    source.offset = first;
    source.length = Math.max(last - first + 1, 0);

    setContentType(response, state, source.path);

    if (settings.mode) {
        response.header(
            'content-disposition',
            formatContentDisposition(settings.mode, settings.filename ?? Path.basename(source.path))
        );
    }

    if (file.encoding !== null) {
        // Marks the body as already encoded so hapi does not compress it a second time.
        response.compressed(file.encoding);
    }

    if (isResource && request.route.settings.response?.ranges !== false) {
        applyRange(response, source, etag);
    }

    response.bytes(source.length);
}

/** The type of the file's extension, unless the handler chose one (`h.file(...).type(...)`). */
function setContentType(response: ResponseObject, state: StaticState, path: string): void {
    if (!response.headers['content-type']) {
        response.type(state.contentType(path));
    }
}

function assertRegularFile(file: FoundFile, path: string): void {
    if (!file.stats.isFile()) {
        // A directory (or device, socket) is never sent as a file.
        releaseFile(file);
        throw forbidden(null, { path });
    }
}

/**
 * Synchronous unless a large file must be hashed first. A file up to 1 MiB not hashed yet is read
 * once, here, and the same bytes are hashed and sent. A larger one gets its identity tag (etag.ts)
 * at once, and the first response that sends it whole hashes the bytes as they pass; only a request
 * holding a tag that may be a content hash waits for the hash, which alone can answer it.
 */
function entityTag(source: FileSource, file: FoundFile, request: Request): string | null | Promise<string | null> {
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

/** Reads of a small file in `prepare` that keep meeting a file written meanwhile give up after this many. */
const readAttempts = 3;

/**
 * The whole of a small open file, read once and offered to the content cache. The bytes count only
 * when the descriptor shows the same bytes after the read as before it (same-file.ts): a file written
 * meanwhile is read again with its new stats (which the headers then describe), and one that never
 * holds still is a 503 to retry (`fileKeptChanging`), never a mix of two versions under a validator
 * of either.
 */
function contentsOf(state: StaticState, file: FoundFile, attempts = readAttempts): Buffer {
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

function setValidators(response: ResponseObject, state: StaticState, file: FoundFile, etag: string | null): void {
    if (etag !== null) {
        // A pre-compressed variant has its own tag; hapi suffixes the tag of a body it compresses itself.
        response.etag(etag, { weak: false, vary: file.encoding === null });
    }

    response.header('last-modified', state.httpDate(file.stats.mtimeMs));
}

/**
 * Honours the ranges of a GET with a 206: one range as it is, several as a multipart body. Which
 * ranges count is decided in range.ts, how several are sent (or the whole instead) in multipart-ranges.ts.
 */
function applyRange(response: ResponseObject, source: FileSource, etag: string | null): void {
    response.header('accept-ranges', 'bytes');
    if (source.length === 0) {
        // No byte of an empty body can be asked for: it is sent whole, as a 200.
        return;
    }

    const file = source.file!;
    const ranges = requestedRanges(
        requestOf(response),
        source.length,
        etag,
        file.stats.mtimeMs,
        source.path,
        source.alsoTag
    );
    const answer =
        ranges === null
            ? null
            : answerRanges(ranges, { size: source.length, offset: source.offset, type: contentTypeOf(response) });
    if (answer === null) {
        return;
    }

    response.code(206);
    if ('parts' in answer) {
        varyAsTheWhole(response, source.length);
        response.type(answer.contentType);
        source.multipart = answer;
        source.length = answer.length;
        return;
    }

    response.header('content-range', `bytes ${answer.from}-${answer.to}/${source.length}`);
    source.offset += answer.from;
    source.length = answer.to - answer.from + 1;
}

/**
 * hapi adds `vary: accept-encoding` to a response it could compress: a 200 of a text file, never a
 * multipart body. The 206 varies as the 200 would (RFC 9110 15.3.7), so no cache hands its identity
 * bytes out as the parts of a representation it holds compressed.
 */
function varyAsTheWhole(response: ResponseObject, length: number): void {
    const { server } = requestOf(response);
    const compression = server.settings.compression;
    const type = response.headers['content-type'];
    if (
        typeof compression === 'object' &&
        length >= (compression.minBytes ?? 0) &&
        typeof type === 'string' &&
        server.mime.type(type).compressible
    ) {
        response.vary('accept-encoding');
    }
}

/** The content type a 200 would send (hapi adds the charset of text types to the header when it sends it). */
function contentTypeOf(response: ResponseObject): string | null {
    return (response as ResponseObject & { contentType: string | null }).contentType;
}

/** Synchronous: hapi awaits what marshal returns, and a Buffer needs no promise of an async function. */
function marshalFileResponse(response: ResponseObject): Buffer | Readable | Promise<Buffer | Readable> {
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
            // Each part read as it is, the file checked once after the last: what matters is that all the bytes are of one version.
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

/**
 * The file its headers describe, opened again when its response's turn came: a file changed or
 * replaced meanwhile (another inode at the path) is a 503 to retry, since those headers describe
 * other bytes; a file gone is a 404.
 */
function reopen(file: FoundFile, requested: string): FoundFile {
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

/** A slice of a large file, read whole; a file changed since its headers were set is a 503 to retry. */
function readUnchanged(file: FoundFile, offset: number, length: number): Buffer {
    const bytes = readBytes(file.fd!, file.path, offset, length);
    if (bytes === null || !hasSameBytes(file.stats, statFd(file.fd!, file.path))) {
        throw fileKeptChanging(file.path);
    }

    return bytes;
}

function closeFileResponse(response: ResponseObject): void {
    releaseFile((response.source as FileSource).file);
}

/** hapi's response objects carry their request; its type declarations leave the property out. */
function requestOf(response: ResponseObject): Request {
    return (response as ResponseObject & { request: Request }).request;
}
