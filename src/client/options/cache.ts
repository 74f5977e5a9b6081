import { isSafeMethod } from '../../common/safe-methods.js';
import type { CacheStore } from '../contract/cache-store.js';
import type { CacheOptions } from '../contract/types.js';
import { isCount } from './values.js';

/** The grammar of the `cache` option (README "Cache"); what a valid one resolves to is the cache's (cache/settings.ts). */

/** What is wrong with a `cache` option value (worded after `Option cache`), or undefined. */
export function cacheProblem(value: unknown): string | undefined {
    if (typeof value === 'boolean') {
        return undefined;
    }

    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return 'must be true, false or an object of cache settings';
    }

    const { store, shared, methods, coalesce, storeTimeout } = value as CacheOptions;
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

    if (storeTimeout !== undefined && storeTimeout !== null && (!isCount(storeTimeout) || storeTimeout === 0)) {
        return '.storeTimeout must be a positive integer of milliseconds';
    }

    return coalesceProblem(coalesce);
}

// The longest a setting of coalescing may be: a wait, or a pass, beyond it is a mistake.
const longestLockTimeout = 600_000;
const longestPass = 86_400_000;

function coalesceProblem(coalesce: CacheOptions['coalesce']): string | undefined {
    if (coalesce === undefined || coalesce === null || typeof coalesce === 'boolean') {
        return undefined;
    }

    if (typeof coalesce !== 'object' || Array.isArray(coalesce)) {
        return '.coalesce must be true, false or an object ({ lockTimeout, passFor })';
    }

    const { lockTimeout, passFor } = coalesce;
    if (
        lockTimeout !== undefined &&
        lockTimeout !== null &&
        !(isCount(lockTimeout) && lockTimeout > 0 && lockTimeout <= longestLockTimeout)
    ) {
        return `.coalesce.lockTimeout must be a positive integer of ms up to ${longestLockTimeout}`;
    }

    if (passFor !== undefined && passFor !== null && !(isCount(passFor) && passFor <= longestPass)) {
        return `.coalesce.passFor must be a non-negative integer of ms up to ${longestPass}`;
    }

    return undefined;
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
