import * as Fs from 'node:fs';
import * as Path from 'node:path';
import { forbidden, type HttpError, internal, notFound, serverUnavailable } from '../errors/index.js';

/** What a failed file-system call becomes: the HttpError a client receives, with `data.path` (README, "Static files"). */
export interface PathErrorData {
    path: string;
    /** On a 500 only, where it always was: the same error as the HttpError's own `cause`. */
    cause?: Error;
}

/** Codes that mean "nothing servable here", so the client sees a 404 rather than a server fault. */
const missingCodes = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG', 'ELOOP', 'EINVAL']);
/** Codes that mean "it exists but this process may not read it". */
const deniedCodes = new Set(['EACCES', 'EPERM', 'EISDIR']);

/**
 * Maps an error of a file-system call on `path` to the HttpError the client receives. The call's
 * error is its `cause` (own, not enumerable, as ES2022 sets it), so a log of a 404 or a 403 still
 * says which call failed and how; no response shows it.
 */
export function toPathError(err: NodeJS.ErrnoException, path: string): HttpError<PathErrorData> {
    const code = err.code ?? '';
    const made = { cause: err };
    if (missingCodes.has(code)) {
        return notFound(null, { path }, made);
    }

    if (deniedCodes.has(code)) {
        return forbidden(null, { path }, made);
    }

    const data: PathErrorData = { path, cause: err };
    return internal(`Failed to access ${path}: ${err.message}`, data, 500, made) as HttpError<PathErrorData>;
}

/** How long a client told to come back for a file that keeps changing waits: a rewrite takes moments. */
const changingFileRetrySeconds = 1;

/**
 * A file that changed under its response (it kept changing while it was read, or was replaced while
 * its response waited its turn), so no one version of its bytes could be sent: a 503 with
 * `Retry-After` (README, "Static files"), because the condition is passing and no fault of the
 * server's; an error response carries none of the file's validators.
 */
export function fileKeptChanging(path: string, how = 'kept changing while it was read'): HttpError<PathErrorData> {
    const error = serverUnavailable(`File ${path} ${how}`, { path });
    error.output.headers['Retry-After'] = String(changingFileRetrySeconds);
    return error;
}

/*
 * The calls a request makes on its way to the bytes (realpath, open, fstat, stat, short reads,
 * close) are synchronous on purpose: on a local file system they take a few microseconds, well
 * under the cost of a thread-pool round trip, and a request makes up to five of them. Large files
 * stream, hashing streams and listings read asynchronously.
 */

/** Non-blocking, so opening a FIFO returns at once (and is then refused as not a file) instead of waiting for a writer. */
const openFlags = Fs.constants.O_RDONLY | (Fs.constants.O_NONBLOCK ?? 0);

export function openFile(path: string): number {
    try {
        return Fs.openSync(path, openFlags);
    } catch (err) {
        throw toPathError(err as NodeJS.ErrnoException, path);
    }
}

export function statFd(fd: number, path: string): Fs.Stats {
    try {
        return Fs.fstatSync(fd);
    } catch (err) {
        throw toPathError(err as NodeJS.ErrnoException, path);
    }
}

export function statPath(path: string): Fs.Stats {
    try {
        return Fs.statSync(path, statOptions);
    } catch (err) {
        throw toPathError(err as NodeJS.ErrnoException, path);
    }
}

/**
 * False when nothing can be reached at `path` (missing, a dangling link, no permission to look).
 * An `access` call builds no Stats object, whose four Date objects cost more than the call itself
 * on the many requests for files without a pre-compressed variant.
 */
export function hasEntry(path: string): boolean {
    return Fs.existsSync(path);
}

/**
 * Where to open `path`, which lies under the confine directory `root`, once it is known to stay inside
 * the root; null when it leads out. Each component below the root costs one `lstat`: none a symlink
 * means the file is inside whatever the root is now (the root may itself be a symlink, a deploy's
 * `current` swapped to the next release), so `path` itself is opened, and the last `lstat` is the
 * file's `stat`. Resolving the whole real path instead walked every component of the root on every
 * request (a readlink each): with the `stat` after it, most of what a cached small file or a 304 cost.
 * A symlink below the root: the real path of `path` must lie within the root's, both resolved now.
 */
export function confinedPath(root: string, path: string): { path: string; stats: Fs.Stats | null } | null {
    if (path === root) {
        // The root itself (a directory route's `/`): inside by definition, whatever it links to.
        return { path, stats: null };
    }

    const plainlyUnder =
        Path.sep === '/' &&
        path.length > root.length &&
        path.startsWith(root) &&
        (root.endsWith('/') || path[root.length] === '/');
    if (plainlyUnder) {
        let stats: Fs.Stats | null = null;
        let end = root.endsWith('/') ? root.length - 1 : root.length;
        while (end < path.length) {
            const start = end + 1;
            const next = path.indexOf('/', start);
            end = next === -1 ? path.length : next;
            if (isEmptyOrDots(path, start, end)) {
                stats = null;
                break;
            }

            try {
                // The whole path for its last component: slice(0, length) is the string itself.
                stats = Fs.lstatSync(path.slice(0, end), statOptions);
            } catch (err) {
                throw toPathError(err as NodeJS.ErrnoException, path);
            }

            if (stats.isSymbolicLink()) {
                stats = null;
                break;
            }
        }

        if (stats !== null) {
            return { path, stats };
        }
    }

    const real = realPath(path);
    return isWithin(real, realPath(root)) ? { path: real, stats: null } : null;
}

/** True when the component of `path` from `start` to `end` is empty, `.` or `..` (compared in place, no substring). */
function isEmptyOrDots(path: string, start: number, end: number): boolean {
    const length = end - start;
    return (
        length === 0 ||
        (length <= 2 && path.charCodeAt(start) === dot && (length === 1 || path.charCodeAt(start + 1) === dot))
    );
}

const dot = 0x2e;

/** Node's default options of `lstatSync` and `statSync`, passed so that no call allocates them. */
const statOptions = { bigint: false, throwIfNoEntry: true } as const;

/** True when `path` is `root` or inside it; both must be absolute and normalized. */
export function isWithin(path: string, root: string): boolean {
    if (path === root) {
        return true;
    }

    // Compared in place: concatenating the separator allocated a string on every request.
    return (
        path.length > root.length &&
        path.startsWith(root) &&
        (root.endsWith(Path.sep) || path.charCodeAt(root.length) === Path.sep.charCodeAt(0))
    );
}

/** The path with every symlink resolved, so a confine check sees where a file really is. */
export function realPath(path: string): string {
    try {
        return Fs.realpathSync.native(path);
    } catch (err) {
        throw toPathError(err as NodeJS.ErrnoException, path);
    }
}

/** Nothing useful can be done when closing a read-only descriptor fails. */
export function closeFile(fd: number): void {
    try {
        Fs.closeSync(fd);
    } catch {}
}

/** Reads `length` bytes at `position`, looping over short reads; null when the file shrank meanwhile. */
export function readBytes(fd: number, path: string, position: number, length: number): Buffer | null {
    const buffer = Buffer.allocUnsafe(length);
    let offset = 0;
    while (offset < length) {
        let bytesRead: number;
        try {
            bytesRead = Fs.readSync(fd, buffer, offset, length - offset, position + offset);
        } catch (err) {
            throw toPathError(err as NodeJS.ErrnoException, path);
        }

        if (bytesRead === 0) {
            return null;
        }

        offset += bytesRead;
    }

    return buffer;
}

export interface DirectoryEntry {
    name: string;
    isDirectory: boolean;
    size: number;
    mtime: Date;
}

/** Lists a directory with the size and modification time of each entry; entries that vanish meanwhile are left out. */
export async function readDirectory(path: string): Promise<DirectoryEntry[]> {
    const names = await new Promise<string[]>((resolve, reject) => {
        Fs.readdir(path, (err, found) => (err ? reject(toPathError(err, path)) : resolve(found)));
    });

    const entries = await Promise.all(
        names.map(
            (name) =>
                new Promise<DirectoryEntry | null>((resolve) => {
                    Fs.stat(`${path}/${name}`, (err, stats) =>
                        resolve(
                            err
                                ? null
                                : { name, isDirectory: stats.isDirectory(), size: stats.size, mtime: stats.mtime }
                        )
                    );
                })
        )
    );
    return entries.filter((entry): entry is DirectoryEntry => entry !== null);
}
