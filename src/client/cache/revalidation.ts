import type { HttpError } from '../../errors/index.js';
import type { CachedResponse } from '../contract/cache-store.js';
import { requestTimeout } from '../contract/errors.js';
import type { Agents, EffectiveOptions, HopRequest, HopResponse } from '../contract/types.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { Destination } from '../wire/destination.js';
import { Hop, type HopOwner } from '../wire/hop.js';
import { entryHead, storeWithBody, updatedEntry } from './entries.js';
import type { GuardedStore } from './guarded-store.js';
import { isStorable, requestDirectives, responseDirectives } from './policy.js';
import type { CacheSettings } from './settings.js';
import { conditionalFields, matches304 } from './validators.js';

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
 * as a hop on the pipeline like any other, and stores what comes back. Nothing waits for it.
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
    const owner = new BackgroundRevalidation(counts.agents, store, settings, call.key, entry, () =>
        keys.delete(call.key)
    );
    // The method the entry answered: a HEAD call is served from a GET's entry, an OPTIONS one from its own.
    new Hop(owner, entry.method, options, pipeline).send(call.target);
}

class BackgroundRevalidation implements HopOwner {
    readonly background = true;
    readonly redirectCount = 0;
    readonly retryCount = 0;
    readonly staleResends = 0;
    private timer: NodeJS.Timeout | undefined;
    private readonly requestTime = Date.now();

    constructor(
        readonly agents: Agents,
        private readonly store: GuardedStore,
        private readonly settings: CacheSettings,
        private readonly key: string,
        private readonly entry: CachedResponse,
        private readonly done: () => void
    ) {}

    streamFor(): undefined {
        return undefined;
    }

    requestCreated(req: HopRequest): void {
        this.timer = setTimeout(() => req.destroy(requestTimeout(revalidationTimeout)), revalidationTimeout);
        this.timer.unref();
    }

    // The revalidation counts as under way until what it stores has landed (a stale hit meanwhile starts
    // no other), and its timeout runs on until then: a body that stalls is cut, which ends it too.
    hopResponded(hop: Hop, res: HopResponse): void {
        const responseTime = Date.now();
        const shared = this.settings.shared;
        if (res.statusCode === 304 && matches304(this.entry, res.rawHeaders)) {
            res.resume();
            const updated = updatedEntry(this.entry, res, this.requestTime, responseTime, shared);
            if (updated.noStore) {
                this.finish();
            } else {
                this.store.set(this.key, updated.entry).then(this.finish);
            }

            return;
        }

        const directives = responseDirectives(res.rawHeaders);
        const request = { headers: hop.options.headers, directives: requestDirectives(hop.options.headers) };
        if (isStorable(request, res.statusCode as number, res.rawHeaders, directives, shared)) {
            // The method the entry answered, as the hop was sent.
            const head = entryHead(this.entry.method, res, hop.options.headers, this.requestTime, responseTime);
            storeWithBody(this.store, this.key, head, directives, shared, res, this.finish);
        } else {
            this.finish();
        }

        res.resume();
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
