import type { HttpError } from '../../errors/index.js';
import type { CachedResponse } from '../contract/cache-store.js';
import type { HopResponse } from '../contract/types.js';
import type { AnsweredHop } from '../wire/hop.js';
import { type CacheCall, member, passOn, pendingMember, type WireAnswer } from './cache-call.js';
import { entryHead, updatedEntry } from './entries.js';
import { isStorable, judge, requestDirectives, responseDirectives, servesStaleOnError } from './policy.js';
import { addCacheStatus } from './response.js';
import type { CacheSettings } from './settings.js';

const noDirectives = requestDirectives({});

/**
 * What the origin's response means for the cache (RFC 9111 3, 4.3.4; RFC 5861 4), decided as its
 * headers arrive, with its Cache-Status added for the listeners to see (without `stored` until the
 * write of what is stored has landed: layer.ts completes it). `observed`: the hop's response reaches
 * listeners (the request has a pipeline).
 */
export function judgeOriginResponse(
    call: CacheCall,
    hop: AnsweredHop,
    res: HopResponse,
    settings: CacheSettings,
    flow: { retriesResponse(hop: AnsweredHop, res: HopResponse): boolean },
    observed: boolean
): WireAnswer {
    const responseTime = Date.now();
    const status = res.statusCode as number;
    const entry = call.entry;
    const shared = settings.shared;
    const collapsed = call.collapsed;
    const updated =
        status === 304 && call.validating && entry !== undefined
            ? updatedEntry(entry, res, call.requestTime, responseTime, shared)
            : undefined;
    if (updated !== undefined) {
        const stores = !call.directives.noStore && !updated.noStore;
        const judgement = updated.judgement;
        const ttl = judgement.ttl;
        // `stored` once the update has landed (layer.ts): until then the 304 says nothing of it.
        const status304 = pendingMember({ outcome: call.outcome, forwardStatus: 304, ttl, collapsed });
        if (observed) {
            // The 304 itself reaches the listeners only (the caller gets the stored response): without
            // any, its fields are never read, and adding to them made Node build them (a fifth of the
            // cache's own work on a revalidation).
            addCacheStatus(res, status304.told);
        }

        const reusable = judgement.suitability !== 'validate';
        return { kind: 'updated', entry: updated.entry, stores, reusable, member: status304, shown: observed };
    }

    if (
        status >= 500 &&
        entry !== undefined &&
        call.judgement !== undefined &&
        servesStaleOnError(call.judgement, call.directives, status) &&
        // A 5xx the flow retries is forwarded as it is: the stale response is for when nothing more will be tried.
        !flow.retriesResponse(hop, res)
    ) {
        const stale = member({ outcome: 'hit', ttl: call.judgement.ttl, detail: 'stale-if-error', collapsed });
        addCacheStatus(res, stale);
        return { kind: 'stale-if-error', entry, cacheStatus: stale };
    }

    const directives = responseDirectives(res.rawHeaders);
    const request = { headers: hop.options.headers, directives: call.directives };
    const stores =
        call.outcome !== 'bypass' &&
        call.method !== 'HEAD' &&
        isStorable(request, status, res.rawHeaders, directives, shared);
    if (!stores) {
        addCacheStatus(res, member({ outcome: call.outcome, forwardStatus: status, collapsed }));
        return passOn;
    }

    // Taken before the Cache-Status is added: the store keeps the response as the origin sent it.
    const head = entryHead(call.method, res, hop.options.headers, call.requestTime, responseTime);
    const judgement = judge(head, noDirectives, shared, responseTime);
    const ttl = judgement.ttl;
    // `stored` once the body has come and its write has landed (entries.ts): until then, nothing is.
    const pending = pendingMember({ outcome: call.outcome, forwardStatus: status, ttl, collapsed });
    addCacheStatus(res, pending.told);
    const reusable = judgement.suitability !== 'validate';
    return { kind: 'keep', entry: head, directives, reusable, member: pending };
}

/**
 * The stale response that answers the call's failure `err` instead, with its Cache-Status, or undefined
 * (RFC 5861 4): only a network failure or a timeout (not the caller's abort) may be answered so.
 */
export function staleForFailure(
    call: CacheCall,
    err: HttpError
): { entry: CachedResponse; cacheStatus: string } | undefined {
    const networkFailure = err.output.statusCode === 502 || err.output.statusCode === 504;
    const { entry, judgement } = call;
    if (
        !networkFailure ||
        entry === undefined ||
        judgement === undefined ||
        !servesStaleOnError(judgement, call.directives, undefined)
    ) {
        return undefined;
    }

    return { entry, cacheStatus: member({ outcome: 'hit', ttl: judgement.ttl, detail: 'stale-if-error' }) };
}
