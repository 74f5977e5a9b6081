import type { HttpError } from '../../errors/index.js';
import type { CachedResponse } from '../contract/cache-store.js';
import { requestTimeout } from '../contract/errors.js';
import type { Agents, EffectiveOptions, HopRequest, HopResponse } from '../contract/types.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { Destination } from '../wire/destination.js';
import { Hop, type HopOwner } from '../wire/hop.js';
import { writeResponse, writeUpdate } from './answer-writes.js';
import { type CacheCall, passOn } from './cache-call.js';
import type { GuardedStore } from './guarded-store.js';
import { judgeOriginResponse } from './origin-answer.js';
import { requestDirectives } from './policy.js';
import type { CacheSettings } from './settings.js';
import { conditionalFields } from './validators.js';

// A background revalidation nobody waits for still ends: a server that never answers costs this at most.
const revalidationTimeout = 30_000;

// The keys being revalidated in the background, per store: one revalidation at a time for a URL.
const underway = new WeakMap<GuardedStore, Set<string>>();

/** What the background revalidation takes from the call that served the stale response. */
export interface StaleCall {
    readonly target: URL | Destination;
    readonly options: EffectiveOptions;
    readonly key: string;
}

/**
 * RFC 5861 3 (`stale-while-revalidate`): the caller has the stale response; this sends the
 * conditional request on its own, outside the caller's request (its promise, signal and timeout),
 * as a hop on the pipeline like any other, and stores what comes back. Nothing waits for it. Its
 * answer is judged as a call's revalidation is (origin-answer.ts), and its listeners see the same
 * Cache-Status on it: `fwd=stale`, the origin's status, `stored` once the write has landed.
 */
export function revalidateInBackground(
    counts: { readonly agents: Agents },
    pipeline: Pipeline | undefined,
    store: GuardedStore,
    settings: CacheSettings,
    call: StaleCall,
    entry: CachedResponse
): void {
    let keys = underway.get(store);
    if (keys === undefined) {
        keys = new Set();
        underway.set(store, keys);
    }

    if (keys.has(call.key)) {
        return;
    }

    keys.add(call.key);
    const options: EffectiveOptions = {
        ...call.options,
        headers: { ...call.options.headers, ...conditionalFields(entry) }
    };
    // The caller's signal and callbacks belong to the caller's request, not to this one.
    delete options.signal;
    delete options.onUploadProgress;
    delete options.onDownloadProgress;
    const revalidation: CacheCall = {
        // The method the entry answered: a HEAD call is served from a GET's entry, an OPTIONS one from its own.
        method: entry.method,
        target: call.target,
        options,
        resendReason: undefined,
        key: call.key,
        directives: requestDirectives(options.headers),
        outcome: 'revalidated',
        entry,
        // No stale response answers this one's failure or 5xx: the caller has had the stale one already.
        judgement: undefined,
        validating: true,
        requestTime: Date.now(),
        answer: undefined,
        collapsed: undefined,
        fetcher: undefined
    };
    const owner = new BackgroundRevalidation(counts.agents, store, settings, revalidation, pipeline !== undefined, () =>
        keys.delete(call.key)
    );
    new Hop(owner, entry.method, options, pipeline).send(call.target);
}

class BackgroundRevalidation implements HopOwner {
    readonly background = true;
    readonly redirectCount = 0;
    readonly retryCount = 0;
    readonly staleResends = 0;
    private timer: NodeJS.Timeout | undefined;

    constructor(
        readonly agents: Agents,
        private readonly store: GuardedStore,
        private readonly settings: CacheSettings,
        private readonly call: CacheCall,
        /** The hop has a pipeline: listeners see its response, and the Cache-Status on it. */
        private readonly observed: boolean,
        private readonly done: () => void
    ) {}

    streamFor(): undefined {
        return undefined;
    }

    requestCreated(req: HopRequest): void {
        this.timer = setTimeout(() => req.destroy(requestTimeout(revalidationTimeout)), revalidationTimeout);
        this.timer.unref();
    }

    responseArrived(hop: Hop, res: HopResponse): void {
        const call = this.call;
        try {
            call.answer = judgeOriginResponse(call, hop, res, this.settings, noRetries, this.observed);
        } catch {
            // A response the rules could not read is not stored.
            call.answer = passOn;
        }
    }

    // The revalidation counts as under way until what it stores has landed (a stale hit meanwhile starts
    // no other), and its timeout runs on until then: a body that stalls is cut, which ends it too. The end
    // of the response (and of its hop) comes after the write, as a call's does.
    hopResponded(_hop: Hop, res: HopResponse): void {
        const { key } = this.call;
        const answer = this.call.answer ?? passOn;
        this.call.answer = undefined;
        switch (answer.kind) {
            case 'updated':
                if (answer.stores) {
                    // Landed already when the store is the client's own MemoryCacheStore (answer-writes.ts).
                    const landed = writeUpdate(this.store, key, answer, res, undefined);
                    if (typeof landed === 'string') {
                        this.finish();
                    } else {
                        landed.then(this.finish);
                    }

                    return;
                }

                break;
            case 'keep':
                writeResponse(this.store, key, answer, this.settings.shared, res, this.finish);
                res.resume();
                return;
        }

        res.resume();
        this.finish();
    }

    hopFailed(_hop: Hop, _err: HttpError): void {
        this.finish();
    }

    fail(_err: HttpError): void {
        this.finish();
    }

    private readonly finish = (): void => {
        clearTimeout(this.timer);
        this.done();
    };
}

// A background revalidation is never retried: a 5xx is its answer, passed on and not stored.
const noRetries = { retriesResponse: (): boolean => false };
