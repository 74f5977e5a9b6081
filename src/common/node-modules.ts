/**
 * Node's built-in modules as `require()` returns them: the module objects, the ones test mocks (msw,
 * nock) and APM agents patch at run time.
 *
 * Taken with `process.getBuiltinModule()` rather than an ES `import`: importing a built-in as an ES
 * module makes Node build its namespace, which reads every export. For `node:http` that runs the
 * getters of `WebSocket`, `MessageEvent` and `CloseEvent`, which load Node's bundled undici, http2
 * and worker support: about 2 MB of heap (walked by every full garbage collection of the process
 * from then on) and tens of milliseconds of start-up, in a process that may never use any of it;
 * `node:tls`'s namespace is another 0.2 MB (README, "Import footprint").
 */
export const http = process.getBuiltinModule('node:http');
export const net = process.getBuiltinModule('node:net');

export const zlib = process.getBuiltinModule('node:zlib');

/*
 * Loaded with their first use, not with the package: `node:https` and `node:tls` bring `node:crypto`,
 * 0.55 MB of heap together, and a process that only speaks plain HTTP needs none of them. Every full
 * garbage collection walks that heap: a client downloading large bodies runs one every few dozen
 * requests (docs/performance.md).
 */
let httpsModule: typeof import('node:https') | undefined;
let tlsModule: typeof import('node:tls') | undefined;

/** `node:https`, the module object (loaded with the first call). */
export function https(): typeof import('node:https') {
    httpsModule ??= process.getBuiltinModule('node:https');
    return httpsModule;
}

/** `node:tls`, the module object (loaded with the first call). */
export function tls(): typeof import('node:tls') {
    tlsModule ??= process.getBuiltinModule('node:tls');
    return tlsModule;
}

/**
 * `require()` from the package, for what loads on first use rather than with the package: the proxy
 * packages (client/wire/proxy-packages.ts) and eventemitter3 (client/pipeline/emitter.ts).
 */
export const requirePackage = process.getBuiltinModule('node:module').createRequire(import.meta.url);
