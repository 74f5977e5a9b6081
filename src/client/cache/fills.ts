import {
    type CachedResponse,
    type CacheStore,
    type FillLock,
    type FillLocks,
    hasFillLocks
} from '../contract/cache-store.js';
import type { RequestUri } from '../contract/types.js';
import type { GuardedStore } from './guarded-store.js';

/**
 * The fills under way for one store (docs/cache.md "Request coalescing"): of the calls that would fetch
 * the same request at once, one leads (fetches and stores), the others wait for it, then look the store
 * up again. In this process that is a map of pending fills; with a store that offers `FillLocks`
 * (`RedisCacheStore`), the lead also takes the store's lock, so the instances sharing it wait for one
 * another too, as nginx's `proxy_cache_lock`. A wait never outlasts `lockTimeout`, nor a lock: then the
 * waiters go to the origin themselves. An answer that could not be shared marks the request pass for
 * `passFor` (hit-for-pass): the next calls go on without waiting.
 */

/** What coalescing is set to (the `cache` option's `coalesce`, resolved). */
export interface CoalesceSettings {
    readonly lockTimeout: number;
    readonly passFor: number;
}

/**
 * How a fill ended: its answer stored and usable by the waiters (`shared`); an answer they may not
 * share (`pass`: hit-for-pass); no answer stored (`failed`: the fetch failed, was cut, or its store failed).
 */
export type FillOutcome = 'shared' | 'pass' | 'failed';

/** A call's part in the fill of its request. */
export interface FillTurn {
    /** This call fetches for the waiters of this process (and, holding the store's lock, of the others): it ends it. */
    readonly lead: FillLead | undefined;
    /** The call waited for another's fetch: it looks the store up again, and waits no more. */
    readonly waited: boolean;
    /** The hop that fetched, when that call runs in this process and reports its hops. */
    readonly fetcher: RequestUri | undefined;
    /** The request is marked pass (hit-for-pass): the call goes alone, and a reusable answer it stores lifts the mark. */
    readonly passed: boolean;
    /** What the fetch waited for stored, when it ran in this process: it answers the call without a lookup. */
    readonly shared: CachedResponse | undefined;
    /**
     * The call took the store's lock after its lookup: another instance's fill may have landed in
     * between (its lock released just before this one was taken), so it looks the store up once more
     * before it fetches.
     */
    readonly recheck: boolean;
}

/** What a lead knows of the hop it fetches with. */
export interface FetchingHop {
    readonly eventUri: RequestUri | undefined;
}

const passed: FillTurn = {
    lead: undefined,
    waited: false,
    fetcher: undefined,
    passed: true,
    shared: undefined,
    recheck: false
};

// Requests marked pass, at most this many per store: the oldest marks go first.
const mostPasses = 4096;

/** One call fetching for the others: ended once, when what it stored has landed, or when it failed. */
export class FillLead {
    /** The hop under way for the fill: what the waiters link to. */
    fetcher: FetchingHop | undefined;
    /** The store's lock, when this call holds it. */
    token: string | undefined;
    ended = false;
    /** Settles as the fill ends: with the entry it shares, or undefined. */
    readonly done: Promise<CachedResponse | undefined>;
    release!: (shared: CachedResponse | undefined) => void;
    timer: NodeJS.Timeout | undefined;

    constructor(
        private readonly fills: Fills,
        readonly key: string,
        readonly settings: CoalesceSettings
    ) {
        this.done = new Promise((resolve) => {
            this.release = resolve;
        });
    }

    /** Ends the fill: `entry` is what a `shared` one stored, for the waiters of this process. */
    end(outcome: FillOutcome, entry?: CachedResponse): void {
        if (!this.ended) {
            this.ended = true;
            this.fills.ended(this, outcome, outcome === 'shared' ? entry : undefined);
        }
    }
}

export class Fills {
    private readonly pending = new Map<string, FillLead>();
    private readonly passes = new Map<string, number>();
    private readonly locks: FillLocks | undefined;

    constructor(private readonly store: GuardedStore) {
        this.locks = hasFillLocks(store.store) ? store.store : undefined;
    }

    /**
     * The call's part in the fill of `key`: it waits for the one under way (at most `waitBound` ms), or
     * leads a new one; with fill locks, a lead whose lock another instance holds waits for that one first.
     * A turn known at once (the request marked pass, or a lead without a store's lock to take) is given
     * as it is, not as a promise: a request marked pass, every call of a key revalidated on each call,
     * went through two promises and their turns of the loop for it.
     */
    join(key: string, settings: CoalesceSettings, waitBound: number): FillTurn | Promise<FillTurn> {
        const passUntil = this.passes.get(key);
        if (passUntil !== undefined) {
            if (passUntil > Date.now()) {
                return passed;
            }

            this.passes.delete(key);
        }

        const underway = this.pending.get(key);
        if (underway !== undefined) {
            return waitFor(underway, settings, waitBound);
        }

        const lead = new FillLead(this, key, settings);
        this.pending.set(key, lead);
        // A fill never outlives its timeout: its waiters go to the origin then.
        lead.timer = setTimeout(expire, settings.lockTimeout, this, lead);
        lead.timer.unref();
        const locks = this.locks;
        if (locks === undefined) {
            return { lead, waited: false, fetcher: undefined, passed: false, shared: undefined, recheck: false };
        }

        return this.lockOrWait(lead, locks, key, settings, waitBound);
    }

    /** A new lead's turn with the store's fill locks: it takes the lock, or waits for the instance that holds it. */
    private async lockOrWait(
        lead: FillLead,
        locks: FillLocks,
        key: string,
        settings: CoalesceSettings,
        waitBound: number
    ): Promise<FillTurn> {
        const lock = await this.store.within<FillLock | undefined>(
            'lockFill',
            () => locks.lockFill(key, settings.lockTimeout),
            undefined
        );
        if (lock === undefined || lock.acquired) {
            // Without the lock (the store failed), this call still fetches for this process's waiters.
            lead.token = lock?.token;
            const recheck = lock !== undefined;
            return { lead, waited: false, fetcher: undefined, passed: false, shared: undefined, recheck };
        }

        if (lock.reason === 'pass') {
            lead.end('failed');
            return passed;
        }

        // Another instance fetches: wait for it, as the lead of this process's waiters.
        const wait = await this.store.within(
            'awaitFill',
            () => locks.awaitFill(key, waitBound),
            'timeout' as const,
            waitBound + this.store.timeout
        );
        if (wait === 'pass') {
            lead.end('failed');
            return {
                lead: undefined,
                waited: true,
                fetcher: undefined,
                passed: false,
                shared: undefined,
                recheck: false
            };
        }

        return { lead, waited: true, fetcher: undefined, passed: false, shared: undefined, recheck: false };
    }

    /** The end of `lead`: its waiters look again; the pass mark and the store's lock follow the outcome. */
    ended(lead: FillLead, outcome: FillOutcome, shared: CachedResponse | undefined): void {
        clearTimeout(lead.timer);
        this.drop(lead, shared);
        const key = lead.key;
        const passFor = lead.settings.passFor;
        if (outcome === 'pass' && passFor > 0) {
            if (this.passes.size >= mostPasses) {
                this.passes.delete(this.passes.keys().next().value as string);
            }

            this.passes.set(key, Date.now() + passFor);
        } else if (outcome === 'shared') {
            this.passes.delete(key);
        }

        const token = lead.token;
        const locks = this.locks;
        if (token !== undefined && locks !== undefined) {
            const markPass = outcome === 'pass' ? passFor : 0;
            void this.store.within('unlockFill', () => locks.unlockFill(key, token, markPass), false);
        }
    }

    /** A call that went alone for `key` stored an answer the next calls can share: they coalesce again. */
    unpass(key: string): void {
        this.passes.delete(key);
    }

    /** `lead` no longer holds back its waiters; `shared` answers them. */
    drop(lead: FillLead, shared: CachedResponse | undefined): void {
        if (this.pending.get(lead.key) === lead) {
            this.pending.delete(lead.key);
        }

        lead.release(shared);
    }
}

/** The turn of a call that waits for the fill under way (at most `waitBound` ms). */
async function waitFor(underway: FillLead, settings: CoalesceSettings, waitBound: number): Promise<FillTurn> {
    // The fill's own timer ends it at lockTimeout: a shorter bound needs one of its own.
    const shared = await (waitBound < settings.lockTimeout ? within(underway.done, waitBound) : underway.done);
    const fetcher = underway.fetcher?.eventUri;
    return { lead: undefined, waited: true, fetcher, passed: false, shared, recheck: false };
}

function expire(fills: Fills, lead: FillLead): void {
    fills.drop(lead, undefined);
}

// One set of fills per store, shared by every client on it.
const fillsOf = new WeakMap<CacheStore, Fills>();

/** The fills of the store `guarded` guards. */
export function fillsFor(guarded: GuardedStore): Fills {
    let fills = fillsOf.get(guarded.store);
    if (fills === undefined) {
        fills = new Fills(guarded);
        fillsOf.set(guarded.store, fills);
    }

    return fills;
}

/** What `done` settles with, or undefined once `ms` have passed, whichever is first. */
function within<T>(done: Promise<T>, ms: number): Promise<T | undefined> {
    return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms, undefined);
        done.then((value) => {
            clearTimeout(timer);
            resolve(value);
        });
    });
}
