/**
 * A memo of derived values with a fixed bound. Full means cleared, not evicted one by one: its keys
 * come from configuration or from request headers, where a working set far below the bound is the rule
 * and a flood of distinct keys (a hostile client, a path function that invents names) must cost memory
 * once, never grow without end. Clearing is O(1) amortised and keeps `get` a plain `Map` lookup.
 */
export class BoundedMemo<K, V> {
    readonly #entries = new Map<K, V>();

    constructor(readonly limit: number) {}

    get(key: K): V | undefined {
        return this.#entries.get(key);
    }

    set(key: K, value: V): V {
        if (this.#entries.size >= this.limit) {
            this.#entries.clear();
        }

        this.#entries.set(key, value);
        return value;
    }

    /** The memoised value of `key`, computed by `derive` on a miss; a `derive` that throws stores nothing. */
    getOrDerive(key: K, derive: (key: K) => V): V {
        const known = this.#entries.get(key);
        return known !== undefined ? known : this.set(key, derive(key));
    }

    get size(): number {
        return this.#entries.size;
    }
}
