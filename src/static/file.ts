import type { Stats } from 'node:fs';
import * as Fs from 'node:fs';
import * as Path from 'node:path';
import type { Request, ResponseObject } from '@hapi/hapi';
import * as Mime from 'mime-types';
import {
    forbidden,
    type HttpError,
    isHttpError,
    notFound,
    preconditionFailed,
    rangeNotSatisfiable
} from '../errors/index.js';
import { type DispositionMode, formatContentDisposition } from './content-disposition.js';
import { EtagCache, type EtagMethod } from './etag.js';
import { closeFile, hasEntry, openFile, readBytes, realPath, statFd, statPath } from './fs.js';
import { parseRange } from './range.js';
import type { FileOptions } from './types.js';

/** Files up to this size are read into one Buffer: cheaper than a stream for the many small assets. */
const bufferedFileLimit = 64 * 1024;
/**
 * Chunk size of streamed files. Each chunk costs a thread-pool read and a socket write, so larger is
 * faster (measured on 10 MiB files against inert: 64 KiB 1.0x, 256 KiB 1.3x, 1 MiB 1.55x), but every
 * response in flight holds a chunk or two: with a thousand slow clients 1 MiB would pin gigabytes.
 */
const streamChunkSize = 256 * 1024;
const emptyBody = Buffer.alloc(0);
/** Bounds the caches keyed by configuration-derived strings, should a path function invent many. */
const lookupCacheLimit = 1000;

/** The file options of spec 2.7 with defaults applied and values checked once. */
export interface FileSettings {
    confine: boolean | string;
    filename: string | null;
    mode: DispositionMode;
    lookupCompressed: boolean;
    /** `[encoding, extension]` pairs in the order they were given, which breaks ties between equal q-values. */
    lookupMap: ReadonlyArray<readonly [string, string]>;
    etagMethod: EtagMethod;
    start: number;
    end: number | null;
}

/** Per-server state of the plugin: the ETag cache and lookups that stay valid for the server's life. */
export class StaticState {
    readonly etags: EtagCache;
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

/** A file found on disk: where it really is, its stats and, when a body will be sent, its open descriptor. */
export interface FoundFile {
    path: string;
    stats: Stats;
    fd: number | null;
    /** The content encoding of a pre-compressed variant, null for the file itself. */
    encoding: string | null;
}

/** What a file response carries from `prepare` to `marshal` and `close`; it is the response's `source`. */
export interface FileSource {
    /** The absolute path requested (a pre-compressed variant may be what is sent). */
    readonly path: string;
    readonly confineDir: string | null;
    readonly settings: FileSettings;
    readonly state: StaticState;
    file: FoundFile | null;
    /** Offset and length of the bytes sent, fixed by `prepare`. */
    offset: number;
    length: number;
}

/** Checks the 2.7 options at the boundary, naming the offending one; `where` says which API received them. */
export function normalizeFileOptions(options: FileOptions | undefined, where: string): FileSettings {
    const given = options ?? {};
    assertOption(typeof given === 'object', `${where} options must be an object`);
    const {
        confine = true,
        filename,
        mode = false,
        lookupCompressed = false,
        lookupMap = { gzip: '.gz' },
        etagMethod = 'hash',
        start = 0,
        end
    } = given;
    assertOption(
        typeof confine === 'boolean' || (typeof confine === 'string' && confine !== ''),
        `${where} option "confine" must be a boolean or a directory path`
    );
    assertOption(
        filename === undefined || (typeof filename === 'string' && filename !== ''),
        `${where} option "filename" must be a non-empty string`
    );
    assertOption(
        mode === false || mode === 'attachment' || mode === 'inline',
        `${where} option "mode" must be false, "attachment" or "inline"`
    );
    assertOption(typeof lookupCompressed === 'boolean', `${where} option "lookupCompressed" must be a boolean`);
    assertOption(
        etagMethod === 'hash' || etagMethod === 'simple' || etagMethod === false,
        `${where} option "etagMethod" must be "hash", "simple" or false`
    );
    assertOption(Number.isSafeInteger(start) && start >= 0, `${where} option "start" must be a non-negative integer`);
    assertOption(
        end === undefined || (Number.isSafeInteger(end) && end >= start),
        `${where} option "end" must be an integer no smaller than "start"`
    );
    return {
        confine,
        filename: filename ?? null,
        mode,
        lookupCompressed,
        lookupMap: normalizeLookupMap(lookupMap, where),
        etagMethod,
        start,
        end: end ?? null
    };
}

export function normalizeLookupMap(lookupMap: unknown, where: string): Array<[string, string]> {
    assertOption(
        typeof lookupMap === 'object' && lookupMap !== null && !Array.isArray(lookupMap),
        `${where} option "lookupMap" must be an object mapping encodings to file extensions`
    );
    const pairs = Object.entries(lookupMap as Record<string, unknown>);
    for (const [encoding, extension] of pairs) {
        assertOption(
            typeof extension === 'string' && extension !== '',
            `${where} option "lookupMap.${encoding}" must be a non-empty file extension`
        );
    }

    return pairs.map(([encoding, extension]) => [encoding.toLowerCase(), extension as string]);
}

export function assertOption(condition: boolean, message: string): asserts condition {
    if (!condition) {
        throw new TypeError(`static: ${message}`);
    }
}

/**
 * Where a requested path lives and which directory confines it: relative paths resolve against the
 * confine directory when there is one, else against the route's `files.relativeTo`.
 */
export function resolveFilePath(
    relativeTo: string,
    path: string,
    confine: boolean | string
): { path: string; confineDir: string | null } {
    const confineDir =
        confine === false ? null : confine === true ? Path.resolve(relativeTo) : Path.resolve(relativeTo, confine);
    return { path: Path.resolve(confineDir ?? relativeTo, path), confineDir };
}

/** True when `path` is `root` or inside it; both must be absolute and normalized. */
export function isWithin(path: string, root: string): boolean {
    if (path === root) {
        return true;
    }

    return path.startsWith(root.endsWith(Path.sep) ? root : root + Path.sep);
}

/**
 * Only HEAD and conditional GETs can end without a body; for them a `stat` is enough at first, so a
 * 304 costs no open descriptor.
 */
export function needsBody(request: Request): boolean {
    if (request.method === 'head') {
        return false;
    }

    return request.method !== 'get' || !hasValidators(request);
}

function hasValidators(request: Request): boolean {
    const headers = request.headers;
    return (
        headers['if-none-match'] !== undefined ||
        headers['if-modified-since'] !== undefined ||
        headers['if-match'] !== undefined ||
        headers['if-unmodified-since'] !== undefined
    );
}

/**
 * Finds what to send for `path`: the best pre-compressed variant the client accepts when
 * `lookupCompressed` is on, else the file itself. With a confine directory the check holds for the
 * real path, so a symlink inside the root that points outside it is refused.
 */
export function findFile(
    state: StaticState,
    request: Request,
    path: string,
    confineDir: string | null,
    settings: FileSettings,
    withBody: boolean
): FoundFile {
    if (path.includes('\0')) {
        throw notFound(null, { path });
    }

    if (confineDir !== null && !isWithin(path, confineDir)) {
        throw forbidden(null, { path });
    }

    if (settings.lookupCompressed) {
        for (const [encoding, extension] of negotiateEncoding(
            headerOf(request, 'accept-encoding'),
            settings.lookupMap
        )) {
            const variant = findVariant(state, `${path}${extension}`, path, confineDir, encoding, withBody);
            if (variant) {
                return variant;
            }
        }
    }

    return inspect(state, path, path, confineDir, null, withBody);
}

/** A pre-compressed variant when one exists as a regular file; a missing one is no error. */
function findVariant(
    state: StaticState,
    variantPath: string,
    path: string,
    confineDir: string | null,
    encoding: string,
    withBody: boolean
): FoundFile | null {
    // Most files have no variant: a stat that returns undefined spares building and catching a 404.
    if (!hasEntry(variantPath)) {
        return null;
    }

    let variant: FoundFile;
    try {
        variant = inspect(state, variantPath, path, confineDir, encoding, withBody);
    } catch (err) {
        if (isHttpError(err, 404)) {
            return null;
        }

        throw err;
    }

    if (variant.stats.isFile()) {
        return variant;
    }

    releaseFile(variant);
    return null;
}

function inspect(
    state: StaticState,
    path: string,
    reportedPath: string,
    confineDir: string | null,
    encoding: string | null,
    withBody: boolean
): FoundFile {
    let target = path;
    try {
        if (confineDir !== null) {
            const realRoot = state.realRoot(confineDir);
            const real = realPath(path);
            if (!isWithin(real, realRoot)) {
                throw forbidden(null, { path: reportedPath });
            }

            // Opening the resolved path means the file read is the file checked.
            target = real;
        }

        if (!withBody) {
            return { path: target, stats: statPath(target), fd: null, encoding };
        }

        const fd = openFile(target);
        try {
            return { path: target, stats: statFd(fd, target), fd, encoding };
        } catch (err) {
            closeFile(fd);
            throw err;
        }
    } catch (err) {
        throw withReportedPath(err, reportedPath);
    }
}

/** Errors name the path the user asked for, not the real path behind a symlink (spec 7.6). */
function withReportedPath(err: unknown, path: string): unknown {
    if (isHttpError<{ path?: string }>(err) && err.data !== null && typeof err.data === 'object') {
        err.data.path = path;
    }

    return err;
}

export function releaseFile(file: FoundFile | null): void {
    if (file?.fd != null) {
        closeFile(file.fd);
        file.fd = null;
    }
}

/**
 * The encodings of `lookupMap` the client accepts, best first by q-value; equal q-values keep the
 * order of `lookupMap`. A `*` in `accept-encoding` covers encodings not named.
 */
export function negotiateEncoding(
    header: string | undefined,
    lookupMap: ReadonlyArray<readonly [string, string]>
): Array<readonly [string, string]> {
    if (!header) {
        return [];
    }

    const weights = new Map<string, number>();
    for (const part of header.split(',')) {
        const [name = '', ...params] = part.split(';');
        let q = 1;
        for (const param of params) {
            const [key, value] = param.split('=');
            if (key?.trim().toLowerCase() === 'q') {
                q = Number(value);
                q = Number.isNaN(q) ? 0 : q;
            }
        }

        weights.set(name.trim().toLowerCase(), q);
    }

    const wildcard = weights.get('*') ?? 0;
    return lookupMap
        .map((pair) => ({ pair, q: weights.get(pair[0]) ?? wildcard }))
        .filter((candidate) => candidate.q > 0)
        .sort((a, b) => b.q - a.q)
        .map((candidate) => candidate.pair);
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
    const source: FileSource = { path, confineDir, settings, state, file: found, offset: 0, length: 0 };
    return request.generateResponse(source, {
        variety: 'file',
        // hapi awaits what prepare returns, so a response returned synchronously is as good as a promise.
        prepare: prepareFileResponse as (response: ResponseObject) => Promise<ResponseObject>,
        marshal: marshalFileResponse,
        close: closeFileResponse
    });
}

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

    if (settings.lookupCompressed) {
        // Which file is sent depends on accept-encoding, whether or not a variant exists.
        response.vary('accept-encoding');
    }

    // A status set before prepare (an error page sent with `.code(404)`) is not the resource itself:
    // no validators, no 304 and no ranges for it.
    const isResource = response.statusCode === 200;
    const etag = isResource ? entityTag(state, settings, file) : null;
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
        const outcome = evaluatePreconditions(request, etag, file.stats.mtimeMs);
        if (outcome === 'precondition-failed') {
            throw preconditionFailed(null, { path: source.path });
        }

        if (outcome === 'not-modified') {
            setValidators(response, state, file, etag);
            response.code(304);
            releaseFile(file);
            return undefined;
        }
    }

    if (file.fd === null && request.method !== 'head') {
        // The conditions did not spare the body after all: open the file and describe what is sent.
        const opened = findFile(state, request, source.path, source.confineDir, settings, true);
        source.file = opened;
        assertRegularFile(opened, source.path);
        const tag = isResource ? entityTag(state, settings, opened) : null;
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

    if (!response.headers['content-type']) {
        response.type(state.contentType(source.path));
    }

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

function assertRegularFile(file: FoundFile, path: string): void {
    if (!file.stats.isFile()) {
        // A directory (or device, socket) is never sent as a file.
        releaseFile(file);
        throw forbidden(null, { path });
    }
}

/** Synchronous when the tag is known: only a file not hashed yet costs an await. */
function entityTag(
    state: StaticState,
    settings: FileSettings,
    file: FoundFile
): string | null | Promise<string | null> {
    const known = state.etags.known(settings.etagMethod, file.path, file.stats);
    return known === undefined ? state.etags.tag(settings.etagMethod, file.path, file.stats) : known;
}

function setValidators(response: ResponseObject, state: StaticState, file: FoundFile, etag: string | null): void {
    if (etag !== null) {
        // A pre-compressed variant has its own tag; hapi suffixes the tag of a body it compresses itself.
        response.etag(etag, { weak: false, vary: file.encoding === null });
    }

    response.header('last-modified', state.httpDate(file.stats.mtimeMs));
}

function hasPreconditions(request: Request): boolean {
    return (request.method === 'get' || request.method === 'head') && hasValidators(request);
}

type PreconditionOutcome = 'send' | 'not-modified' | 'precondition-failed';

/** RFC 9110 13.2.2: if-match, else if-unmodified-since; then if-none-match, else if-modified-since. */
function evaluatePreconditions(request: Request, etag: string | null, mtimeMs: number): PreconditionOutcome {
    const tag = etag === null ? null : `"${etag}"`;
    // HTTP dates have whole seconds: compare the file's time at that precision.
    const modified = Math.floor(mtimeMs / 1000) * 1000;

    const ifMatch = headerOf(request, 'if-match');
    if (ifMatch !== undefined) {
        if (!matchesTag(ifMatch, tag, false)) {
            return 'precondition-failed';
        }
    } else {
        const ifUnmodifiedSince = Date.parse(headerOf(request, 'if-unmodified-since') ?? '');
        if (modified > ifUnmodifiedSince) {
            return 'precondition-failed';
        }
    }

    const ifNoneMatch = headerOf(request, 'if-none-match');
    if (ifNoneMatch !== undefined) {
        return matchesTag(ifNoneMatch, tag, true) ? 'not-modified' : 'send';
    }

    const ifModifiedSince = Date.parse(headerOf(request, 'if-modified-since') ?? '');
    return modified <= ifModifiedSince ? 'not-modified' : 'send';
}

/** Compares a list of entity tags with ours; the weak comparison ignores `W/` (RFC 9110 8.8.3.2). */
function matchesTag(header: string, tag: string | null, weak: boolean): boolean {
    if (header.trim() === '*') {
        return true;
    }

    if (tag === null) {
        return false;
    }

    for (let candidate of header.split(',')) {
        candidate = candidate.trim();
        if (weak && candidate.startsWith('W/')) {
            candidate = candidate.slice(2);
        }

        if (candidate === tag) {
            return true;
        }
    }

    return false;
}

/**
 * Honours a single range of a GET (206, or 416 when it cannot be met); an `if-range` that no longer
 * matches the file means the client's partial copy is stale and it gets the whole file.
 */
function applyRange(response: ResponseObject, source: FileSource, etag: string | null): void {
    const request = requestOf(response);
    if (source.length === 0) {
        return;
    }

    response.header('accept-ranges', 'bytes');
    const header = headerOf(request, 'range');
    if (request.method !== 'get' || header === undefined) {
        return;
    }

    const ifRange = headerOf(request, 'if-range');
    if (ifRange !== undefined && !ifRangeMatches(ifRange, etag, source.file!.stats.mtimeMs)) {
        return;
    }

    const range = parseRange(header, source.length);
    if (range === 'unsatisfiable') {
        const error: HttpError = rangeNotSatisfiable(null, { path: source.path });
        error.output.headers['content-range'] = `bytes */${source.length}`;
        throw error;
    }

    if (range === null) {
        return;
    }

    response.code(206);
    response.header('content-range', `bytes ${range.from}-${range.to}/${source.length}`);
    source.offset += range.from;
    source.length = range.to - range.from + 1;
}

/** `if-range` holds a strong entity tag or an HTTP date; only an exact match allows a partial response. */
function ifRangeMatches(ifRange: string, etag: string | null, mtimeMs: number): boolean {
    const value = ifRange.trim();
    if (value.startsWith('"') || value.startsWith('W/')) {
        return etag !== null && value === `"${etag}"`;
    }

    return Date.parse(value) === Math.floor(mtimeMs / 1000) * 1000;
}

async function marshalFileResponse(response: ResponseObject): Promise<Buffer | Fs.ReadStream> {
    const source = response.source as FileSource;
    const file = source.file!;
    if (file.fd === null) {
        // HEAD: hapi only asks for the length, which is already set.
        return emptyBody;
    }

    if (source.length <= bufferedFileLimit) {
        try {
            return source.length === 0 ? Buffer.alloc(0) : readBytes(file.fd, file.path, source.offset, source.length);
        } finally {
            releaseFile(file);
        }
    }

    const stream = Fs.createReadStream(file.path, {
        fd: file.fd,
        start: source.offset,
        end: source.offset + source.length - 1,
        highWaterMark: streamChunkSize
    });
    // The stream now owns the descriptor and closes it when it ends or is destroyed.
    file.fd = null;
    return stream;
}

function closeFileResponse(response: ResponseObject): void {
    releaseFile((response.source as FileSource).file);
}

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

/** A request header as a string; Node joins repeated ones, so anything else means absent. */
export function headerOf(request: Request, name: string): string | undefined {
    const value: unknown = request.headers[name];
    return typeof value === 'string' ? value : undefined;
}

/** hapi's response objects carry their request; its type declarations leave the property out. */
function requestOf(response: ResponseObject): Request {
    return (response as ResponseObject & { request: Request }).request;
}
