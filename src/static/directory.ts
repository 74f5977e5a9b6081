import * as Path from 'node:path';
import type { Lifecycle, Request, RequestRoute, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import { forbidden, isHttpError, notFound } from '../errors/index.js';
import { createFileResponse } from './file.js';
import { assertOption, type FileSettings, normalizeFileOptions } from './file-options.js';
import { describeUnservedPath } from './file-span.js';
import { type FoundFile, findFile, findOptionalFile, releaseFile } from './find-file.js';
import { isWithin, readDirectory } from './fs.js';
import { listingResponse } from './listing.js';
import { needsBody } from './preconditions.js';
import { sameOriginPath } from './same-origin-path.js';
import type { StaticState } from './state.js';
import type { DirectoryHandlerOptions, DirectoryPathFunction } from './types.js';

/** The 2.8 options with defaults applied and values checked once, when the route is added. */
interface DirectorySettings {
    roots: string[] | DirectoryPathFunction;
    index: string[];
    listing: boolean;
    showHidden: boolean;
    redirectToSlash: boolean;
    defaultExtension: string | null;
    file: FileSettings;
}

const where = 'directory handler';

/** The route's last path parameter selects the resource: `{p}`, `{p?}`, `{p*}` or `{p*3}`. */
const lastParameterPattern = /\{(\w+)(?:\?|\*\d*)?\}$/;

/** Builds the `directory` handler of a route (README, "Static files"). */
export function createDirectoryHandler(
    state: StaticState,
    route: RequestRoute,
    options: DirectoryHandlerOptions
): Lifecycle.Method {
    assertOption(typeof options === 'object' && options !== null, `${where} options must be an object`);
    const parameter = lastParameterPattern.exec(route.path)?.[1];
    assertOption(
        parameter !== undefined,
        `${where} route path must end with a path parameter such as {path*}, got ${route.path}`
    );
    // hapi always fills in the route's files settings (default relativeTo: '.').
    const relativeTo = route.settings.files!.relativeTo;
    const settings = normalizeDirectoryOptions(options, relativeTo);

    return (request: Request, h: ResponseToolkit) => {
        const roots =
            typeof settings.roots === 'function' ? rootsOf(settings.roots(request), relativeTo) : settings.roots;
        if (roots instanceof Error) {
            // README, "Static files": an error from the path function goes to the client as it is.
            return roots;
        }

        const requested = String(request.params[parameter] ?? '');
        if (requested.includes('\0')) {
            return notFound(null, {});
        }

        return serveFromRoots(state, request, h, settings, roots, requested, 0, undefined);
    };
}

/**
 * Tries the roots in order from `index`. Synchronous unless a listing is read: hapi awaits what a
 * handler returns, and a file found at once spares the promises of an async function.
 */
function serveFromRoots(
    state: StaticState,
    request: Request,
    h: ResponseToolkit,
    settings: DirectorySettings,
    roots: string[],
    requested: string,
    index: number,
    lastError: unknown
): ResponseObject | Promise<ResponseObject> {
    for (let current = index; current < roots.length; ++current) {
        const root = roots[current]!;
        let served: ResponseObject | Promise<ResponseObject>;
        try {
            served = serveFromRoot(state, request, h, settings, root, requested);
        } catch (err) {
            lastError = missOrThrow(request, root, requested, err);
            continue;
        }

        if (served instanceof Promise) {
            return served.catch((err: unknown) =>
                serveFromRoots(
                    state,
                    request,
                    h,
                    settings,
                    roots,
                    requested,
                    current + 1,
                    missOrThrow(request, root, requested, err)
                )
            );
        }

        return served;
    }

    if (roots.length > 0) {
        describeUnservedPath(request, roots[0]!, requested);
    }

    // No root at all (a path function returned []) serves nothing: a miss, as for a missing file.
    throw lastError ?? notFound(null, {});
}

/** Several roots: a miss in one means try the next (the miss is returned); any other failure is the answer. */
function missOrThrow(request: Request, root: string, requested: string, err: unknown): unknown {
    if (!isHttpError(err, 404)) {
        describeUnservedPath(request, root, requested);
        throw err;
    }

    return err;
}

function normalizeDirectoryOptions(options: DirectoryHandlerOptions, relativeTo: string): DirectorySettings {
    const { path, index = true, listing = false, showHidden = false, redirectToSlash = false } = options;
    assertOption(
        typeof path === 'function' || typeof path === 'string' || (Array.isArray(path) && path.length > 0),
        `${where} option "path" must be a string, a non-empty array of strings or a function`
    );
    const roots = typeof path === 'function' ? path : rootsOf(path, relativeTo);
    assertOption(!(roots instanceof Error), `${where} option "path" must hold directory paths`);
    assertOption(
        typeof index === 'boolean' ||
            typeof index === 'string' ||
            (Array.isArray(index) && index.every((name) => typeof name === 'string' && name !== '')) ||
            !index,
        `${where} option "index" must be a boolean, a file name or an array of file names`
    );
    assertOption(typeof listing === 'boolean', `${where} option "listing" must be a boolean`);
    assertOption(typeof showHidden === 'boolean', `${where} option "showHidden" must be a boolean`);
    assertOption(typeof redirectToSlash === 'boolean', `${where} option "redirectToSlash" must be a boolean`);
    const { defaultExtension } = options;
    assertOption(
        defaultExtension === undefined || (typeof defaultExtension === 'string' && defaultExtension !== ''),
        `${where} option "defaultExtension" must be a non-empty string`
    );

    const file = normalizeFileOptions(
        {
            lookupCompressed: options.lookupCompressed,
            lookupMap: options.lookupMap,
            etagMethod: options.etagMethod
        },
        where
    );
    return {
        roots,
        index: index === true ? ['index.html'] : typeof index === 'string' ? [index] : index || [],
        listing,
        showHidden,
        redirectToSlash,
        defaultExtension:
            defaultExtension === undefined
                ? null
                : defaultExtension.startsWith('.')
                  ? defaultExtension
                  : `.${defaultExtension}`,
        file
    };
}

/** Roots resolved against the route's `files.relativeTo`; an Error passes through to the client. */
function rootsOf(path: string | string[] | Error, relativeTo: string): string[] | Error {
    if (path instanceof Error) {
        return path;
    }

    const list = Array.isArray(path) ? path : [path];
    if (!list.every((root) => typeof root === 'string' && root !== '')) {
        return new TypeError(`static: ${where} path function must return a path, an array of paths or an Error`);
    }

    return list.map((root) => Path.resolve(relativeTo, root));
}

/** Any segment starting with a dot (`.git/config`, `a/.env`) hides the resource unless `showHidden`; a backslash counts as a separator too. */
function isHidden(requested: string): boolean {
    return requested.split(/[/\\]/).some((segment) => segment.startsWith('.'));
}

/**
 * A plain request path (segments that are neither empty nor start with a dot, no backslash):
 * joining it to the root needs no normalisation and can neither leave the root nor be hidden.
 */
const plainRequestPath = /^[^./\\][^/\\]*(?:\/[^./\\][^/\\]*)*$/;

/** True when `requested` is a plain request path, which joins its root by a separator alone. */
function isPlain(requested: string): boolean {
    return Path.sep === '/' && plainRequestPath.test(requested);
}

/** The path of `requested` under `root`, without a trailing slash; `Path.join` only when it must normalise. */
function joinUnder(root: string, requested: string, plain: boolean): string {
    if (plain) {
        return root === '/' ? `/${requested}` : `${root}/${requested}`;
    }

    // join (not resolve) so an absolute-looking request stays under the root; no trailing slash in errors.
    const joined = Path.join(root, requested);
    return joined.length > 1 && joined.endsWith(Path.sep) ? joined.slice(0, -1) : joined;
}

/**
 * Serves `requested` from one root: the file itself (or with `defaultExtension`), else for a
 * directory its index file, its listing, or a redirect to the slashed path. Synchronous except
 * for a listing.
 */
function serveFromRoot(
    state: StaticState,
    request: Request,
    h: ResponseToolkit,
    settings: DirectorySettings,
    root: string,
    requested: string
): ResponseObject | Promise<ResponseObject> {
    const plain = isPlain(requested);
    const path = joinUnder(root, requested, plain);
    if (!plain) {
        if (!isWithin(path, root)) {
            // README, "Static files": a way out of the root (`..%2f`, a sibling sharing the root's name prefix) is 403.
            throw forbidden(null, { path });
        }

        // Judged on the path once `..` is resolved: `..` itself is a way out (above), not a hidden name.
        if (!settings.showHidden && isHidden(Path.relative(root, path))) {
            throw notFound(null, {});
        }
    }

    const withBody = needsBody(request);
    let found: FoundFile;
    let foundPath = path;
    if (settings.defaultExtension === null) {
        found = findFile(state, request, path, root, settings.file, withBody);
    } else {
        [found, foundPath] = findWithDefaultExtension(state, request, settings, root, path, withBody);
    }

    if (!found.stats.isDirectory()) {
        return createFileResponse(state, request, foundPath, root, settings.file, found);
    }

    releaseFile(found);
    if (foundPath !== path) {
        // `defaultExtension` names a file: a directory by that name is refused under the name tried, as inert does.
        throw forbidden(null, { path: foundPath });
    }

    const pathname = request.url.pathname;
    if (
        settings.redirectToSlash &&
        !pathname.endsWith('/') &&
        request.server.settings.router?.stripTrailingSlash !== true
    ) {
        // The location echoes the request path: one a browser could read as another host is no redirect.
        const location = sameOriginPath(pathname);
        if (location === null) {
            throw notFound(null, { path });
        }

        return h.redirect(`${location}/${request.url.search}`);
    }

    if (settings.index.length === 0 && !settings.listing) {
        throw forbidden(null, { path });
    }

    for (const name of settings.index) {
        const indexPath = Path.join(path, name);
        const index = findOptionalFile(() => findFile(state, request, indexPath, root, settings.file, withBody));
        if (index !== null) {
            return createFileResponse(state, request, indexPath, root, settings.file, index);
        }
    }

    if (!settings.listing) {
        throw forbidden(null, { path });
    }

    return listDirectory(request, h, settings, path, requested, pathname);
}

/** The listing of a directory without index file, when `listing` is on. */
async function listDirectory(
    request: Request,
    h: ResponseToolkit,
    settings: DirectorySettings,
    path: string,
    requested: string,
    pathname: string
): Promise<ResponseObject> {
    const entries = await readDirectory(path);
    const visible = settings.showHidden ? entries : entries.filter((entry) => !entry.name.startsWith('.'));
    // The listing's links are built on the request path, so they face the same rule as a redirect.
    const base = sameOriginPath(pathname);
    if (base === null) {
        throw notFound(null, { path });
    }

    return listingResponse(request, h, base, requested.replace(/\/+$/, ''), visible);
}

/** The requested path, or when it is missing the same path plus `defaultExtension`; and which it was. */
function findWithDefaultExtension(
    state: StaticState,
    request: Request,
    settings: DirectorySettings,
    root: string,
    path: string,
    withBody: boolean
): [FoundFile, string] {
    try {
        return [findFile(state, request, path, root, settings.file, withBody), path];
    } catch (err) {
        if (!isHttpError(err, 404)) {
            throw err;
        }
    }

    const extended = `${path}${settings.defaultExtension}`;
    return [findFile(state, request, extended, root, settings.file, withBody), extended];
}
