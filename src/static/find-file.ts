import type { Stats } from 'node:fs';
import * as Path from 'node:path';
import type { Request } from '@hapi/hapi';
import { BoundedMemo } from '../common/bounded-memo.js';
import { forbidden, isHttpError, notFound } from '../errors/index.js';
import type { FileSettings } from './file-options.js';
import { closeFile, confinedPath, hasEntry, isWithin, openFile, statFd, statPath } from './fs.js';
import { headerOf } from './request-headers.js';
import type { StaticState } from './state.js';

/** A file found on disk: where it really is, its stats and, when a body will be sent, its open descriptor. */
export interface FoundFile {
    path: string;
    stats: Stats;
    fd: number | null;
    /**
     * The file's bytes when they are already in memory: from the content cache (then `fd` is null,
     * no descriptor was opened) or read once for the ETag and the body alike.
     */
    contents: Buffer | null;
    /** The content encoding of a pre-compressed variant, null for the file itself. */
    encoding: string | null;
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

    if (considersVariants(settings, request)) {
        const candidates = negotiateEncoding(headerOf(request, 'accept-encoding'), settings.lookupMap);
        for (let index = 0; index < candidates.length; ++index) {
            const [encoding, extension] = candidates[index]!;
            const variant = findVariant(state, `${path}${extension}`, path, confineDir, encoding, withBody);
            if (variant) {
                return variant;
            }
        }
    }

    return inspect(state, path, path, confineDir, null, withBody);
}

/**
 * A pre-compressed variant stands in for the whole file only: a slice of it (start/end) would be a
 * slice of the compressed bytes, corrupt content labelled with the encoding. A server created with
 * `compression: false` is never sent an encoded body, as with inert.
 */
export function considersVariants(settings: FileSettings, request: Request): boolean {
    return (
        settings.lookupCompressed &&
        settings.start === 0 &&
        settings.end === null &&
        request.server.settings.compression !== false
    );
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

    return findOptionalFile(() => inspect(state, variantPath, path, confineDir, encoding, withBody));
}

/**
 * What `find` finds when it is a regular file; null when there is nothing (a 404) or something that
 * is not a file (a directory by that name). For lookups that may miss: variants, index files.
 */
export function findOptionalFile(find: () => FoundFile): FoundFile | null {
    let found: FoundFile;
    try {
        found = find();
    } catch (err) {
        if (isHttpError(err, 404)) {
            return null;
        }

        throw err;
    }

    if (found.stats.isFile()) {
        return found;
    }

    releaseFile(found);
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
    /** The file's stats when resolving its real path gave them. */
    let known: Stats | null = null;
    try {
        if (confineDir !== null) {
            const confined = confinedPath(confineDir, path);
            if (confined === null) {
                throw forbidden(null, { path: reportedPath });
            }

            // The file read is the file checked: through a symlink below the root, its real path is opened.
            target = confined.path;
            known = confined.stats;
        }

        if (!withBody) {
            return { path: target, stats: known ?? statPath(target), fd: null, contents: null, encoding };
        }

        // A small file read before costs one stat instead of open, fstat, read and close.
        if (state.contents.has(target)) {
            const stats = known ?? statPath(target);
            const contents = state.contents.get(target, stats);
            if (contents !== null) {
                return { path: target, stats, fd: null, contents, encoding };
            }
        }

        const fd = openFile(target);
        try {
            return { path: target, stats: statFd(fd, target), fd, contents: null, encoding };
        } catch (err) {
            closeFile(fd);
            throw err;
        }
    } catch (err) {
        throw withReportedPath(err, reportedPath);
    }
}

/** Errors name the path the user asked for, not the real path behind a symlink (the README's static-files section). */
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

/** Bounds the parsed headers remembered; clients send few distinct accept-encoding values. */
const parsedHeaders = new BoundedMemo<string, ReadonlyMap<string, number>>(100);

/**
 * The encodings of `lookupMap` the client accepts, best first by q-value; equal q-values keep the
 * order of `lookupMap`. A `*` in `accept-encoding` covers encodings not named. The q-values of each
 * header value are parsed once: splitting and lower-casing it was most of the plugin's own time when
 * it served a `.gz` twin.
 */
export function negotiateEncoding(
    header: string | undefined,
    lookupMap: ReadonlyArray<readonly [string, string]>
): ReadonlyArray<readonly [string, string]> {
    if (!header) {
        return [];
    }

    const weights = parsedHeaders.getOrDerive(header, parseAcceptEncoding);

    const wildcard = weights.get('*') ?? 0;
    if (lookupMap.length === 1) {
        // The usual map, { gzip: '.gz' }: no candidates to sort.
        const pair = lookupMap[0]!;
        return (weights.get(pair[0]) ?? wildcard) > 0 ? lookupMap : [];
    }

    return lookupMap
        .map((pair) => ({ pair, q: weights.get(pair[0]) ?? wildcard }))
        .filter((candidate) => candidate.q > 0)
        .sort((a, b) => b.q - a.q)
        .map((candidate) => candidate.pair);
}

/** The q-value of each encoding named in an accept-encoding header (1 when none is given). */
function parseAcceptEncoding(header: string): Map<string, number> {
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

    return weights;
}
