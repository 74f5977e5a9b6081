/*
 * How the package declares its hapi plugins and the hapi values its functions take, in the
 * `.d.ts` files of the entry points a user without `@hapi/hapi` imports (the root, with
 * `staticFiles`, and `tracewire/instrumentation`, with `tracing`): structurally, so that those
 * declarations name nothing of `@hapi/hapi` and type-check without it (README, "TypeScript").
 * hapi's own types accept them: `server.register()` takes a `HapiPlugin`, and hapi's `Request`
 * is a `HapiRequest`.
 */

/** A hapi plugin: what `server.register()` needs of one (a subset of hapi's `Plugin<Options>`). */
export interface HapiPlugin<Options> {
    readonly name: string;
    readonly once?: boolean;
    /** Called by hapi with its `Server`. */
    register(server: object, options: Options): void | Promise<void>;
}

/** A hapi request, as far as the functions taking one need to say. */
export interface HapiRequest {
    readonly plugins: object;
}
