import * as Path from 'node:path';
import type { ResponseObject } from '@hapi/hapi';
import { forbidden, preconditionFailed } from '../errors/index.js';
import { formatContentDisposition } from './content-disposition.js';
import { entityTag } from './file-etag.js';
import type { FileSource } from './file-source.js';
import { considersVariants, type FoundFile, findFile, releaseFile } from './find-file.js';
import { answerRanges } from './multipart-ranges.js';
import { evaluatePreconditions, hasPreconditions, needsBody } from './preconditions.js';
import { requestedRanges } from './range.js';
import { contentTypeOf, requestOf } from './response-object.js';
import type { StaticState } from './state.js';

/*
 * The `prepare` step of the file response (file.ts): find the file and decide every header before a
 * byte is read. What metadata alone can answer ends here: 304 and 412 (preconditions.ts), 416
 * (range.ts); otherwise the validators, length, type, disposition, encoding and range of the bytes
 * `marshal` will send (file-marshal.ts), recorded on the response's source (file-source.ts).
 */

/**
 * Synchronous unless a file must be hashed: a cached ETag answers most requests without the promise
 * and microtask turns of an async function. A failure reaches hapi as a rejection, the file released.
 */
export function prepareFileResponse(response: ResponseObject): ResponseObject | Promise<ResponseObject> {
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

function setValidators(response: ResponseObject, state: StaticState, file: FoundFile, etag: string | null): void {
    if (etag !== null) {
        // A pre-compressed variant has its own tag; hapi suffixes the tag of a body it compresses itself.
        response.etag(etag, file.encoding === null ? strongVaryingTag : strongTag);
    }

    response.header('last-modified', state.httpDate(file.stats.mtimeMs));
}

/** The options of `response.etag()`, made once (hapi only reads them). */
const strongVaryingTag = { weak: false, vary: true } as const;
const strongTag = { weak: false, vary: false } as const;

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
