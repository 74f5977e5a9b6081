import type { CachedResponse } from '../contract/cache-store.js';
import { clientFailure } from '../contract/errors.js';
import type { HopResponse, TimedResponse } from '../contract/types.js';
import { announceHop, type Pipeline, reportHop, requestUriOf } from '../pipeline/pipeline.js';
import { destinationOf } from '../wire/destination.js';
import type { AnsweredHop } from '../wire/hop.js';
import { HopClock } from '../wire/hop-timings.js';
import { type CacheCall, type CachedFlow, member } from './cache-call.js';
import { currentAge } from './freshness.js';
import type { Judgement } from './policy.js';
import { responseFrom } from './response.js';

/**
 * A call answered by a stored response the judgement allows (fresh, or stale as allowed): `notModified`
 * makes it a 304 for the caller's own precondition. A call that waited for another's fetch carries the
 * outcome it waited on (`fwd=miss` or `fwd=stale`) and `collapsed` in its Cache-Status.
 */
export function answerStored(
    flow: CachedFlow,
    pipeline: Pipeline | undefined,
    call: CacheCall,
    entry: CachedResponse,
    judgement: Judgement,
    notModified: boolean,
    now: number
): void {
    const suitability = judgement.suitability;
    const detail =
        suitability === 'fresh' ? undefined : suitability === 'stale-allowed' ? 'max-stale' : 'stale-while-revalidate';
    const collapsed = call.collapsed === undefined ? undefined : true;
    call.collapsed = collapsed;
    const status = member({ outcome: collapsed ? call.outcome : 'hit', ttl: judgement.ttl, detail, collapsed });
    const age = currentAge(entry, now);
    const res = responseFrom(entry, call.method, age, status, notModified ? 304 : entry.statusCode);
    answerFromCache(flow, pipeline, call, res);
}

/**
 * A call answered without a hop on the wire (from the store, or a 504 for `only-if-cached`): reported
 * on the pipeline like a hop (README "The event pipeline"), then handed to the flow as its response.
 */
export function answerFromCache(
    flow: CachedFlow,
    pipeline: Pipeline | undefined,
    call: CacheCall,
    res: HopResponse
): void {
    // No connection and no wire phases: the record has its start, its response and, once read, its end.
    const clock = new HopClock();
    const answered: AnsweredHop = {
        method: call.method,
        options: call.options,
        destination: call.target instanceof URL ? destinationOf(call.target) : call.target,
        clock
    };
    if (pipeline !== undefined) {
        const start = Date.now();
        const uri = requestUriOf(call.target, call.method, call.options.headers, flow, call.resendReason);
        if (call.fetcher !== undefined) {
            uri.collapsedInto = call.fetcher;
        }

        try {
            announceHop(pipeline, uri, call.options);
        } catch (err) {
            res.destroy();
            const failure = clientFailure(`A preRequest event listener threw: ${(err as Error).message}`, err);
            clock.hopEnded(failure);
            flow.fail(reportHop(pipeline, failure, undefined, undefined, start, uri, clock.timings) ?? failure);
            return;
        }

        if (flow.settled) {
            // A listener aborted the signal.
            res.destroy();
            return;
        }

        clock.responded(res, true);
        clock.hopEnded(undefined);
        const failure = reportHop(pipeline, undefined, undefined, res as TimedResponse, start, uri, clock.timings);
        if (failure !== undefined) {
            res.destroy();
            flow.fail(failure);
            return;
        }
    } else {
        clock.responded(res, true);
        clock.hopEnded(undefined);
    }

    flow.hopResponded(answered, res);
}
