import type { CacheLayer } from './layer.js';

/**
 * The cache layer (layer.ts and the rules it applies: most of the cache's code) loads with the first
 * request that has a `cache` option, not with the client: a process that never caches does not hold
 * it (0.4 MB of heap, which every full garbage collection walks; README "Import footprint"). Its
 * loading is asynchronous, as the layer's first step, the store's lookup, already is.
 */
let layerClass: typeof CacheLayer | undefined;
let loading: Promise<typeof CacheLayer> | undefined;

/** The layer's class once its module is loaded; undefined before. */
export function loadedCacheLayer(): typeof CacheLayer | undefined {
    return layerClass;
}

/** Loads the layer's module (once per process) and resolves with its class. */
export function loadCacheLayer(): Promise<typeof CacheLayer> {
    loading ??= import('./layer.js').then((module) => {
        layerClass = module.CacheLayer;
        return layerClass;
    });
    return loading;
}
