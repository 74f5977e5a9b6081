import { MemoryCacheStore } from './memory-store.js';
import { isSafeMethod } from './safe-methods.js';
import type { CacheStore } from './store.js';

/** The `cache` option as an object (README "Cache"); an absent field keeps its default. */
export interface CacheOptions {
    /** Where responses are kept. Default: a `MemoryCacheStore` with its default bounds. */
    store?: CacheStore | null | undefined;
    /** Shared-cache semantics (`s-maxage`, `private`, `Authorization`: RFC 9111 3.5). Default false: a private cache. */
    shared?: boolean | null | undefined;
    /** The methods answered from and stored in the cache: safe methods only. Default `['GET', 'HEAD']`. */
    methods?: readonly string[] | null | undefined;
}

/** The cache a request runs with, resolved from the option. */
export interface CacheSettings {
    readonly store: CacheStore;
    readonly shared: boolean;
    readonly methods: ReadonlySet<string>;
}

const defaultMethods: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** What is wrong with a `cache` option value (worded after `Option cache`), or undefined. */
export function cacheProblem(value: unknown): string | undefined {
    if (typeof value === 'boolean') {
        return undefined;
    }

    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return 'must be true, false or an object of cache settings';
    }

    const { store, shared, methods } = value as CacheOptions;
    if (store !== undefined && store !== null && !isStore(store)) {
        return '.store must be a CacheStore (an object with get, set and delete methods)';
    }

    if (shared !== undefined && shared !== null && typeof shared !== 'boolean') {
        return `.shared must be a boolean, got ${typeof shared}`;
    }

    if (methods !== undefined && methods !== null) {
        if (!Array.isArray(methods) || methods.length === 0) {
            return '.methods must be a non-empty array of safe method names';
        }

        for (const method of methods) {
            if (typeof method !== 'string' || !isSafeMethod(method.toUpperCase())) {
                return `.methods must list safe methods only (GET, HEAD, OPTIONS, TRACE), got ${JSON.stringify(method)}`;
            }
        }
    }

    return undefined;
}

/**
 * The `cache` option as `defaults()` keeps it: a store of its own when none is given, so two
 * clients made with `cache: true` never answer each other's calls.
 */
export function ownCache(value: boolean | CacheOptions): boolean | CacheOptions {
    if (value === true) {
        return { store: new MemoryCacheStore() };
    }

    return typeof value === 'object' && (value.store === undefined || value.store === null)
        ? { ...value, store: new MemoryCacheStore() }
        : value;
}

// Resolved once per option object: the same settings for every request of a client.
const resolved = new WeakMap<CacheOptions, CacheSettings>();
let processCache: CacheSettings | undefined;

/** The settings of a `cache` option that is not false; `true` given per request uses one store for the process. */
export function cacheSettingsOf(value: true | CacheOptions): CacheSettings {
    if (value === true) {
        processCache ??= settingsOf({});
        return processCache;
    }

    let settings = resolved.get(value);
    if (settings === undefined) {
        settings = settingsOf(value);
        resolved.set(value, settings);
    }

    return settings;
}

function settingsOf(options: CacheOptions): CacheSettings {
    return {
        store: options.store ?? new MemoryCacheStore(),
        shared: options.shared ?? false,
        methods: options.methods ? new Set(options.methods.map((method) => method.toUpperCase())) : defaultMethods
    };
}

function isStore(value: unknown): value is CacheStore {
    const store = value as Partial<CacheStore>;
    return (
        typeof value === 'object' &&
        typeof store.get === 'function' &&
        typeof store.set === 'function' &&
        typeof store.delete === 'function'
    );
}
