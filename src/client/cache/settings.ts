import type { CacheStore } from '../contract/cache-store.js';
import type { CacheOptions } from '../contract/types.js';
import type { CoalesceSettings } from './fills.js';
import { storeTimeout } from './guarded-store.js';
import { MemoryCacheStore } from './stores/memory-store.js';

/** The cache a request runs with, resolved from the option. */
export interface CacheSettings {
    readonly store: CacheStore;
    readonly shared: boolean;
    readonly methods: ReadonlySet<string>;
    /** Request coalescing's settings; undefined when it is off. */
    readonly coalesce: CoalesceSettings | undefined;
    /** The cache's bound on a store call, in ms. */
    readonly storeTimeout: number;
}

const defaultMethods: ReadonlySet<string> = new Set(['GET', 'HEAD']);

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
        methods: options.methods ? new Set(options.methods.map((method) => method.toUpperCase())) : defaultMethods,
        coalesce: coalesceSettingsOf(options.coalesce),
        storeTimeout: options.storeTimeout ?? storeTimeout
    };
}

// Request coalescing's defaults (docs/cache.md "Request coalescing"): nginx's proxy_cache_lock_timeout for the wait.
const coalesceDefaults: CoalesceSettings = { lockTimeout: 5_000, passFor: 30_000 };

/** The `coalesce` setting resolved: undefined when it is off. */
function coalesceSettingsOf(value: CacheOptions['coalesce']): CoalesceSettings | undefined {
    if (value === false) {
        return undefined;
    }

    if (typeof value !== 'object' || value === null) {
        return coalesceDefaults;
    }

    return {
        lockTimeout: value.lockTimeout ?? coalesceDefaults.lockTimeout,
        passFor: value.passFor ?? coalesceDefaults.passFor
    };
}
