import * as Path from 'node:path';
import type { Request, ResponseObject } from '@hapi/hapi';
import { TRACING_PLUGIN } from '../common/tracing-plugin.js';
import type { FileSource } from './file-source.js';
import { isWithin } from './fs.js';
import { activeSpan, type SpanLike } from './open-telemetry.js';
import { requestOf } from './response-object.js';
import {
    ATTR_FILE_PATH,
    ATTR_FILE_SIZE,
    ATTR_STATIC_ENCODING,
    ATTR_STATIC_ETAG,
    ATTR_STATIC_RANGE
} from './span-attributes.js';

/*
 * Traced file serving: every file response (file and directory handlers, h.file()) describes what
 * it served on the server span of its request. All of it lives here; the response path makes one
 * call, wrapping its `prepare` step once when the module loads.
 */

type Prepare = (response: ResponseObject) => ResponseObject | Promise<ResponseObject>;

/**
 * Wraps the `prepare` step of file responses. When the request has a recording server span (the
 * `tracing` plugin's, or the active span of an upstream instrumentation), the outcome is recorded
 * on it once prepare is done; otherwise prepare runs as it is, at the cost of one span lookup.
 */
export function traceFilePreparation(prepare: Prepare): Prepare {
    return function tracedPrepare(response: ResponseObject): ResponseObject | Promise<ResponseObject> {
        const span = recordingSpanOf(requestOf(response));
        if (span === undefined) {
            return prepare(response);
        }

        const prepared = prepare(response);
        if (!(prepared instanceof Promise)) {
            // Prepare answers synchronously unless it must hash the file (or fails).
            describeFile(span, response);
            return prepared;
        }

        return prepared.then(
            (done) => {
                describeFile(span, response);
                return done;
            },
            (err: unknown) => {
                describeMissingFile(span, response);
                throw err;
            }
        );
    };
}

function recordingSpanOf(request: Request): SpanLike | undefined {
    const plugins = request.plugins as Record<string, { span?: SpanLike } | undefined>;
    const span = plugins[TRACING_PLUGIN]?.span ?? activeSpan();
    return span?.isRecording() === true ? span : undefined;
}

/** What a prepared file response sends: its file, size, encoding, ETag origin and range. */
function describeFile(span: SpanLike, response: ResponseObject): void {
    const source = response.source as FileSource;
    const file = source.file;
    if (file === null) {
        return;
    }

    // A file found plainly under the root is known by that path, one reached through a symlink by its real path.
    const confineDir = source.confineDir;
    const root =
        confineDir === null ? null : isWithin(file.path, confineDir) ? confineDir : source.state.realRoot(confineDir);
    span.setAttribute(ATTR_FILE_PATH, root === null ? file.path : Path.relative(root, file.path));
    span.setAttribute(ATTR_FILE_SIZE, file.stats.size);
    span.setAttribute(ATTR_STATIC_ENCODING, file.encoding ?? 'identity');
    // Recorded where the ETag was obtained; a response without one (an error page with a status) has none.
    span.setAttribute(ATTR_STATIC_ETAG, response.headers.etag === undefined ? 'off' : source.etagOrigin);
    if (source.multipart !== null) {
        const ranges = source.multipart.ranges.map((range) => `${range.from}-${range.to}`);
        span.setAttribute(ATTR_STATIC_RANGE, `bytes=${ranges.join(',')}`);
    } else if (response.statusCode === 206) {
        const contentRange = String(response.headers['content-range']);
        // `bytes first-last/length` → `bytes=first-last`
        span.setAttribute(ATTR_STATIC_RANGE, `bytes=${contentRange.slice(6, contentRange.indexOf('/'))}`);
    }
}

/** A response that failed in prepare (404, 403, 412, 416...): the path asked for, when inside the root. */
function describeMissingFile(span: SpanLike, response: ResponseObject): void {
    const source = response.source as FileSource;
    const confineDir = source.confineDir;
    if (confineDir === null) {
        span.setAttribute(ATTR_FILE_PATH, source.path);
    } else if (isWithin(source.path, confineDir)) {
        span.setAttribute(ATTR_FILE_PATH, Path.relative(confineDir, source.path));
    }
}

/**
 * A directory-handler request that ends in an error before any file response exists (no such
 * file, a hidden name, a directory without index): `file.path` of the path asked for, relative to
 * the root, when it stays inside it. A way out of the root is not described.
 */
export function describeUnservedPath(request: Request, root: string, requested: string): void {
    const span = recordingSpanOf(request);
    if (span === undefined) {
        return;
    }

    const path = Path.join(root, requested);
    if (isWithin(path, root)) {
        span.setAttribute(ATTR_FILE_PATH, Path.relative(root, path));
    }
}
