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
export const https = process.getBuiltinModule('node:https');
export const net = process.getBuiltinModule('node:net');
export const tls = process.getBuiltinModule('node:tls');
export const zlib = process.getBuiltinModule('node:zlib');

/**
 * `require()` from the package, for what loads on first use rather than with the package: the proxy
 * packages (client/wire/proxy-packages.ts) and eventemitter3 (client/pipeline/emitter.ts).
 */
export const requirePackage = process.getBuiltinModule('node:module').createRequire(import.meta.url);
