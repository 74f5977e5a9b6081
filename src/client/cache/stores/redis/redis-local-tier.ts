import type { CachedResponse } from '../../../contract/cache-store.js';
import { MemoryCacheStore } from '../memory-store.js';
import { everything } from './redis-keys.js';
import type { ChangeNotices } from './redis-notices.js';

/**
 * The local tier of a `RedisCacheStore` (README "Cache stores"): the variants last read from the
 * server for a resource, held in this process (a bounded `MemoryCacheStore`) and served without a
 * round trip while the change notices are live. A notice drops its resource; a change of liveness
 * (the connection lost, or back) drops everything, since notices sent meanwhile are lost.
 *
 * A read's answer and a notice travel on different connections, so a notice of a change made after
 * the read may arrive before the read's answer: a read remembers the stamp it began at, and its
 * answer is kept only if nothing dropped its resource (or everything) since.
 */
export class LocalTier {
    #held: MemoryCacheStore;
    // Counts the drops; a read's answer is kept only if its resource was not dropped after its stamp.
    #stamp = 0;
    #clearedAt = 0;
    // The reads under way, by resource: how many, and the stamp of the last drop of that resource.
    readonly #reading = new Map<string, { count: number; droppedAt: number }>();

    constructor(
        private readonly bounds: { maxSize: number; maxCount: number },
        private readonly notices: ChangeNotices
    ) {
        this.#held = this.#fresh();
        notices.onChange((id) => (id === everything ? this.clear() : this.drop(id)));
        notices.onLiveChange(() => this.clear());
    }

    /** What is held for `id`, or nothing while the notices are not live. */
    get(id: string): Promise<readonly CachedResponse[]> {
        return this.notices.live ? this.#held.get(id) : Promise.resolve([]);
    }

    /** A read of `id` from the server begins: its stamp, for `keep`. */
    reading(id: string): number {
        const read = this.#reading.get(id);
        if (read === undefined) {
            this.#reading.set(id, { count: 1, droppedAt: 0 });
        } else {
            read.count++;
        }

        return this.#stamp;
    }

    /** The read of `id` begun at `stamp` answered `entries` (or failed: undefined): held if still current. */
    read(id: string, stamp: number, entries: readonly CachedResponse[] | undefined): void {
        const read = this.#reading.get(id)!;
        if (--read.count === 0) {
            this.#reading.delete(id);
        }

        if (entries === undefined || entries.length === 0 || !this.notices.live) {
            return;
        }

        if (stamp < this.#clearedAt || stamp < read.droppedAt) {
            return;
        }

        // Oldest first, so the newest ends first, as the server answered.
        const held = this.#held;
        for (let i = entries.length - 1; i >= 0; i--) {
            void held.set(id, entries[i]!);
        }

        // All or nothing: a list missing a variant (one past the bounds) would answer as a miss what the server has.
        void held.get(id).then((kept) => {
            if (kept.length !== entries.length && held === this.#held) {
                void held.delete(id);
            }
        });
    }

    /** Drops what is held for `id`, and what reads of it under way would bring. */
    drop(id: string): void {
        this.#stamp++;
        void this.#held.delete(id);
        const read = this.#reading.get(id);
        if (read !== undefined) {
            read.droppedAt = this.#stamp;
        }
    }

    /** Drops everything held, and what every read under way would bring. */
    clear(): void {
        this.#stamp++;
        this.#clearedAt = this.#stamp;
        this.#held = this.#fresh();
    }

    #fresh(): MemoryCacheStore {
        // A resource's variants are kept together or not at all: no one variant is declined for its own size.
        return new MemoryCacheStore({ ...this.bounds, maxEntrySize: this.bounds.maxSize });
    }
}
