import type { Lifecycle, RequestRoute, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';
import { globalLoggerProvider } from '../common/exception-record.js';
import type { HapiPlugin } from '../common/hapi-plugin.js';
import { createDirectoryHandler } from './directory.js';
import { errorSpanAnnotator } from './error-span.js';
import { createFileResponse, respondWithFile } from './file.js';
import { assertOption, type FileSettings, normalizeFileOptions } from './file-options.js';
import { resolveFilePath } from './find-file.js';
import { hasContextManager, loadOpenTelemetry } from './open-telemetry.js';
import { StaticState } from './state.js';
import type { DirectoryHandlerOptions, FileHandler, FileOptions, StaticPluginSettings } from './types.js';

const defaultEtagsCacheMaxSize = 1000;

/** The scope of the log records of the error span (error-span.ts). */
const STATIC_LOGGER_SCOPE = 'tracewire/static';

/**
 * Registered by `staticFiles` under @hapi/inert's name, so that plugins declaring
 * `server.dependency('@hapi/inert')` (hapi-swagger, for its UI) find what they need: the `file` and
 * `directory` handlers and `h.file()`. Its version is that of the inert interface provided.
 */
const inertCompanion: HapiPlugin<void> & { version: string } = {
    name: '@hapi/inert',
    version: '7.1.2',
    register() {}
};

/**
 * Registers the static-file plugin on `server` (the plugin object, plugin.ts, loads this module
 * when it is registered): the `file` and `directory` handlers and `h.file()`, settings from the
 * server option `plugins.static`.
 */
export async function registerStaticFiles(server: Server): Promise<void> {
    assertOption(
        !Object.hasOwn(server.registrations, '@hapi/inert'),
        '@hapi/inert is already registered: staticFiles provides the same handlers and h.file(), register one of the two'
    );
    const settings = readSettings(server.settings.plugins?.static);
    const state = new StaticState(settings.etagsCacheMaxSize, (path) => server.mime.path(path));

    server.decorate('handler', 'file', (route: RequestRoute, options: FileHandler) =>
        createFileHandler(state, route, options)
    );
    server.decorate('handler', 'directory', (route: RequestRoute, options: DirectoryHandlerOptions) =>
        createDirectoryHandler(state, route, options)
    );
    server.decorate('toolkit', 'file', function file(this: ResponseToolkit, path: string, options?: FileOptions) {
        return respondWithFile(state, this.request, path, normalizeFileOptions(options, 'h.file()'));
    });

    // Error responses (ours and any handler's) put the matching trace attributes on the active span.
    // Only a registered context manager makes any span active: without one the extension would
    // cost every response of the server about 10 us (a lifecycle step of hapi) for nothing. The
    // SDK is normally started before the server exists; starting the server checks once more.
    await loadOpenTelemetry();
    let annotating = false;
    const annotateWhenTraced = () => {
        if (!annotating && hasContextManager()) {
            annotating = true;
            // The global LoggerProvider is a proxy: one an SDK registers later is still used.
            const logger = globalLoggerProvider()?.getLogger(STATIC_LOGGER_SCOPE);
            server.ext('onPreResponse', errorSpanAnnotator({ logger, onSpans: settings.spanEvents }));
        }
    };
    annotateWhenTraced();
    server.ext('onPreStart', annotateWhenTraced);
    // Registered last: a failure above leaves no companion claiming inert's name.
    await server.register(inertCompanion);
}

function readSettings(settings: StaticPluginSettings | undefined): { etagsCacheMaxSize: number; spanEvents: boolean } {
    const given: unknown = settings ?? {};
    assertOption(
        typeof given === 'object' && given !== null,
        'server option plugins.static must be an object such as { etagsCacheMaxSize: 1000 }'
    );
    const {
        etagsCacheMaxSize = defaultEtagsCacheMaxSize,
        spanEvents = false,
        ...unknown
    } = given as StaticPluginSettings;
    const unknownKeys = Object.keys(unknown);
    assertOption(
        unknownKeys.length === 0,
        `server option plugins.static has unknown key(s) ${unknownKeys.join(', ')}; the keys are etagsCacheMaxSize and spanEvents`
    );
    assertOption(
        Number.isSafeInteger(etagsCacheMaxSize) && etagsCacheMaxSize >= 0,
        `server option plugins.static.etagsCacheMaxSize must be a non-negative integer, got ${String(etagsCacheMaxSize)}`
    );
    assertOption(
        typeof spanEvents === 'boolean',
        `server option plugins.static.spanEvents must be true or false, got ${String(spanEvents)}`
    );
    return { etagsCacheMaxSize, spanEvents };
}

/** The `file` handler: a path, a function of the request returning one (or an Error), or an object of file options. */
function createFileHandler(state: StaticState, route: RequestRoute, handler: FileHandler): Lifecycle.Method {
    const options = typeof handler === 'object' && handler !== null ? handler : { path: handler };
    assertOption(
        typeof options.path === 'function' || (typeof options.path === 'string' && options.path !== ''),
        'file handler needs a path: a non-empty string or a function returning one'
    );
    const { path, ...fileOptions } = options;
    const settings: FileSettings = normalizeFileOptions(fileOptions, 'file handler');

    if (typeof path === 'string') {
        // A fixed path resolves once, when the route is added.
        const resolved = resolveFilePath(route.settings.files!.relativeTo, path, settings.confine);
        return (request): ResponseObject =>
            createFileResponse(state, request, resolved.path, resolved.confineDir, settings);
    }

    return (request): ResponseObject | Error => {
        const resolved = path(request);
        if (resolved instanceof Error) {
            return resolved;
        }

        return respondWithFile(state, request, resolved, settings);
    };
}
