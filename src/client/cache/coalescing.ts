import type { CachedResponse } from '../contract/cache-store.js';
import type { HopResponse } from '../contract/types.js';
import type { CacheCall, WireAnswer } from './cache-call.js';
import type { CoalesceSettings, FetchingHop, FillLead, FillOutcome, Fills, FillTurn } from './fills.js';
import { varyText, varyValues } from './vary.js';

/**
 * Request coalescing as one call takes part in it (docs/cache.md "Request coalescing"): which calls
 * coalesce, on what key, and how the call's fill ends as the cache layer (layer.ts) hands its response
 * over. The fills themselves are fills.ts.
 */

/**
 * True when a call that would go to the origin may wait for another's fetch of the same request, or
 * lead one: a method whose answer is stored (not HEAD), no credentials (`Authorization`, `Cookie`: an
 * answer for one user is not fetched on behalf of another), nothing the request says against a stored
 * answer (`no-cache`, `no-store`, `only-if-cached`) and no precondition of the caller's own.
 */
export function coalesces(call: CacheCall): boolean {
    const headers = call.options.headers;
    const directives = call.directives;
    return (
        call.method !== 'HEAD' &&
        headers.authorization === undefined &&
        headers.cookie === undefined &&
        headers['if-none-match'] === undefined &&
        headers['if-modified-since'] === undefined &&
        !directives.noCache &&
        !directives.noStore &&
        !directives.onlyIfCached
    );
}

/**
 * What calls coalesce on: the cache key, and the call's values of the request headers the stored
 * variants' `Vary` names. Before any response is stored, the URL alone: a waiter whose headers the
 * answer turns out to vary on finds no variant for it, and goes to the origin itself.
 */
export function fillKey(
    key: string,
    entries: readonly CachedResponse[],
    headers: CacheCall['options']['headers']
): string {
    // Made for the first name only: most stored responses vary on nothing, and their key is the URL's.
    let names: Set<string> | undefined;
    // Indexed: a store's list may be frozen, which a for-of walks with an iterator result per entry.
    for (let i = 0; i < entries.length; i++) {
        for (const name in entries[i]!.vary) {
            names ??= new Set();
            names.add(name);
        }
    }

    if (names === undefined) {
        return key;
    }

    // The values as a stored variant keeps them, so the calls one variant answers coalesce.
    const values = varyValues([...names], headers);
    return values === undefined ? key : `${key}\n${varyText(values)}`;
}

/** What the cache layer goes on with after joining a fill. */
export type JoinedTurn = Pick<FillTurn, 'waited' | 'shared' | 'recheck'>;

/** Told the entry written once a write settled, or undefined when nothing was written. */
export type StoreEnded = (entry: CachedResponse | undefined) => void;

/** One call's part in coalescing, for the cache layer of that call: at most one fill led at a time. */
export class CallCoalescing {
    private lead: FillLead | undefined;
    // The fill key of a call that went alone, its request marked pass.
    private passed: string | undefined;

    constructor(
        private readonly fills: Fills,
        private readonly settings: CoalesceSettings
    ) {}

    /** True when `call`, about to go to the origin, joins the fill of its request (once: not after a wait). */
    applies(call: CacheCall): boolean {
        return this.lead === undefined && call.collapsed === undefined && coalesces(call);
    }

    /**
     * Joins the fill of `call`'s request: `waited` when the call waited for another's fetch (then it is
     * answered from `shared`, the entry that fetch stored in this process, or looks the store up again),
     * else it fetches (leading the fill, or alone), after a second lookup when it took the store's lock
     * (`recheck`). A wait is bounded by the call's `timeout` too. A turn known at once is given as it
     * is (fills.ts): the call goes on in the same turn of the loop.
     */
    join(call: CacheCall, entries: readonly CachedResponse[]): JoinedTurn | Promise<JoinedTurn> {
        const timeout = call.options.timeout;
        const lockTimeout = this.settings.lockTimeout;
        const bound = typeof timeout === 'number' && timeout > 0 && timeout < lockTimeout ? timeout : lockTimeout;
        const key = fillKey(call.key, entries, call.options.headers);
        const turn = this.fills.join(key, this.settings, bound);
        return turn instanceof Promise ? turn.then((taken) => this.took(call, key, taken)) : this.took(call, key, turn);
    }

    private took(call: CacheCall, key: string, turn: FillTurn): JoinedTurn {
        this.lead = turn.lead;
        this.passed = turn.passed ? key : undefined;
        if (turn.waited) {
            call.collapsed = false;
            call.fetcher = turn.fetcher;
        }

        return turn;
    }

    /** The lead's hop is sent: the one its waiters link to. */
    sent(hop: FetchingHop): void {
        if (this.lead !== undefined) {
            this.lead.fetcher = hop;
        }
    }

    /** Ends the fill this call leads, if any (`entry`: what a `shared` one answers the waiters with). */
    end(outcome: FillOutcome, entry?: CachedResponse): void {
        const lead = this.lead;
        this.lead = undefined;
        lead?.end(outcome, entry);
    }

    /**
     * The response the call goes on with, as the cache judged it: how the fill it leads ends. An answer
     * to store (a response, a 304's update) ends it once the write settled: the callback returned, given
     * the entry written (undefined: nothing was), which the waiters of this process are answered from.
     * An answer the waiters could not use without asking the origin again (stale as it arrives,
     * `no-cache`) or not stored at all is not shared (hit-for-pass), unless it is a 5xx (a failure, no
     * reason to pass) or the flow asks again (a retry: the fill goes on).
     */
    answered(answer: WireAnswer, res: HopResponse, retried: () => boolean): StoreEnded | undefined {
        const lead = this.lead;
        const stores = answer.kind === 'keep' || (answer.kind === 'updated' && answer.stores);
        if (lead === undefined) {
            // A call that passed and stores what the next calls can share lifts the pass.
            const passed = this.passed;
            this.passed = undefined;
            return passed !== undefined && stores && answer.reusable
                ? (entry) => entry !== undefined && this.fills.unpass(passed)
                : undefined;
        }

        if (stores) {
            this.lead = undefined;
            const reusable = answer.reusable;
            return (entry) =>
                entry === undefined ? lead.end('failed') : lead.end(reusable ? 'shared' : 'pass', entry);
        }

        if (answer.kind !== 'pass' || !retried()) {
            this.end(answer.kind === 'stale-if-error' || (res.statusCode as number) >= 500 ? 'failed' : 'pass');
        }

        return undefined;
    }
}
