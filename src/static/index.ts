/** The `staticFiles` hapi plugin (README, "Static files"): `file` and `directory` handlers and `h.file()`. */
export type { ListingEntry } from './listing.js';
export { staticFiles } from './plugin.js';
export type {
    DirectoryHandlerOptions,
    DirectoryPathFunction,
    DispositionMode,
    EtagMethod,
    FileHandler,
    FileHandlerOptions,
    FileOptions,
    FilePathFunction,
    StaticPluginSettings
} from './types.js';
