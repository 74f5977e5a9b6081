import type { LookupFunction } from 'node:net';

/**
 * A `lookup` option that resolves every name to 127.0.0.1 after `delay` ms: a slow DNS, on loopback.
 * `calls` counts the lookups made.
 */
export function slowLookup(delay: number): LookupFunction & { calls: number } {
    const lookup = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        lookup.calls++;
        setTimeout(() => {
            if (options.all) {
                callback(null, [{ address: '127.0.0.1', family: 4 }]);
            } else {
                callback(null, '127.0.0.1', 4);
            }
        }, delay);
    }) as unknown as LookupFunction & { calls: number };
    lookup.calls = 0;
    return lookup;
}

export function wait(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
