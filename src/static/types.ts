import type { ReqRef, ReqRefDefaults, Request, ResponseObject } from '@hapi/hapi';
import type { DispositionMode } from './content-disposition.js';
import type { EtagMethod } from './etag.js';

export type { DispositionMode, EtagMethod };

/** Options of a file response (README, "Static files"): `h.file(path, options)` and the `file` handler's object form. */
export interface FileOptions {
    /**
     * Serve relative to this directory and refuse (403) any path whose real location is outside it.
     * `true` (default) uses the route's `files.relativeTo`; `false` turns the check off.
     */
    confine?: boolean | string | undefined;
    /** File name for the `content-disposition` header; defaults to the base name of the path. */
    filename?: string | undefined;
    /** Whether and how a `content-disposition` header is sent (default false: none). */
    mode?: DispositionMode | undefined;
    /** Send a pre-compressed sibling (`file.gz`) when the client accepts its encoding (default false). */
    lookupCompressed?: boolean | undefined;
    /** Content encoding to file extension of pre-compressed siblings (default `{ gzip: '.gz' }`). */
    lookupMap?: Record<string, string> | undefined;
    /** `hash` (default): SHA-1 of the contents; `simple`: hex size and mtime; false: no ETag. */
    etagMethod?: EtagMethod | undefined;
    /** Offset of the first byte sent (default 0). */
    start?: number | undefined;
    /** Offset of the last byte sent, inclusive (default: end of file). */
    end?: number | undefined;
}

/** Returns the path to serve, or an Error to send instead. */
export type FilePathFunction = (request: Request) => string | Error;

/** The object form of the `file` handler: the 2.7 options plus the path. */
export interface FileHandlerOptions extends FileOptions {
    path: string | FilePathFunction;
}

/** The `file` route handler (README, "Static files"): a path, a function returning one, or the object form. */
export type FileHandler = string | FilePathFunction | FileHandlerOptions;

/** Returns the directory root(s) to serve from, or an Error to send instead (README, "Static files"). */
export type DirectoryPathFunction = (request: Request) => string | string[] | Error;

/** Options of the `directory` route handler (README, "Static files"). */
export interface DirectoryHandlerOptions {
    /** Directory root, several roots (first hit wins) or a function returning them. */
    path: string | string[] | DirectoryPathFunction;
    /** Index file name(s) of a directory; `true` (default) means `index.html`, falsy turns it off. */
    index?: boolean | string | string[] | undefined;
    /** List a directory that has no index file (default false). */
    listing?: boolean | undefined;
    /** Serve and list names starting with a dot (default false: they are 404). */
    showHidden?: boolean | undefined;
    /** Redirect `/dir` to `/dir/` (default false; off when the router strips trailing slashes). */
    redirectToSlash?: boolean | undefined;
    lookupCompressed?: boolean | undefined;
    lookupMap?: Record<string, string> | undefined;
    etagMethod?: EtagMethod | undefined;
    /** Extension tried when the requested file is missing, e.g. `html` serves `/about` from `about.html`. */
    defaultExtension?: string | undefined;
}

/** Server option `plugins.static`. */
export interface StaticPluginSettings {
    /** How many file hashes the ETag cache keeps (default 1000; 0 keeps none). */
    etagsCacheMaxSize?: number | undefined;
    /**
     * Also put a 5xx's exception on the active span as an `exception` event, beside its
     * `http.server.request.exception` log record (docs/observability.md, "Events as logs"). Default false.
     */
    spanEvents?: boolean | undefined;
}

declare module '@hapi/hapi' {
    interface HandlerDecorations {
        /** Serves one file (tracewire `staticFiles`). */
        file?: FileHandler | undefined;
        /** Serves files from a directory (tracewire `staticFiles`). */
        directory?: DirectoryHandlerOptions | undefined;
    }

    // The type parameter must match hapi's declaration for the interfaces to merge.
    interface ResponseToolkit<Refs extends ReqRef = ReqRefDefaults> {
        /** Replies with a file (tracewire `staticFiles`); chain `.code()`, `.header()`, `.type()` as usual. */
        file(path: string, options?: FileOptions): ResponseObject;
    }

    interface PluginSpecificConfiguration {
        /** Settings of the tracewire `staticFiles` plugin. */
        static?: StaticPluginSettings | undefined;
    }
}
