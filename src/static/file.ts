import type { Readable } from 'node:stream';
import type { Request, ResponseObject } from '@hapi/hapi';
import { marshalFileResponse } from './file-marshal.js';
import { assertOption, type FileSettings } from './file-options.js';
import { prepareFileResponse } from './file-prepare.js';
import type { FileSource } from './file-source.js';
import { traceFilePreparation } from './file-span.js';
import { type FoundFile, releaseFile, resolveFilePath } from './find-file.js';
import type { StaticState } from './state.js';

/*
 * The file response, the one response path of the file and directory handlers and `h.file()`: a
 * hapi response whose source (file-source.ts) goes through three steps. `prepare` (file-prepare.ts)
 * finds the file and decides every header, answering 304, 412 or 416 from metadata alone; `marshal`
 * (file-marshal.ts) reads or streams the bytes; `close`, here, releases the descriptor whatever
 * happened. Options are checked in file-options.ts, the lookup on disk is find-file.ts.
 */

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

/** Builds the file response; `found` is a file the directory handler already located. */
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
    return request.generateResponse(source, fileVariety);
}

/** Prepare, recording what was served on the request's server span when one records (file-span.ts). */
const tracedPrepare = traceFilePreparation(prepareFileResponse);

function closeFileResponse(response: ResponseObject): void {
    releaseFile((response.source as FileSource).file);
}

/** The steps of every file response, one object for all of them (hapi copies what it needs). */
const fileVariety = {
    variety: 'file',
    // hapi awaits what prepare returns, so a response returned synchronously is as good as a promise.
    prepare: tracedPrepare as (response: ResponseObject) => Promise<ResponseObject>,
    // hapi awaits what marshal returns, so the Buffer of a small file is returned as it is.
    marshal: marshalFileResponse as (response: ResponseObject) => Promise<Buffer | Readable>,
    close: closeFileResponse
} as const;
