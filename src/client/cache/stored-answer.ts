import type { HttpError } from '../../errors/index.js';
import type { CachedResponse } from '../contract/cache-store.js';
import { clientFailure } from '../contract/errors.js';
import type { EffectiveOptions, HopResponse, RequestUri, TimedResponse } from '../contract/types.js';
import { announceHop, type Pipeline, reportHop, requestUriOf } from '../pipeline/pipeline.js';
import type { HopTrace } from '../pipeline/tracing.js';
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
 * on the pipeline like a hop (README "The event pipeline"), and traced as one when the call is
 * (`fromCache`), then handed to the flow as its response.
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
    if (pipeline === undefined) {
        // No listener sees the answer: a helper that reads it notes the end of its body itself.
        clock.responded(res, flow.readsResponseBody !== true);
        clock.hopEnded(undefined);
        flow.hopResponded(answered, res);
        return;
    }

    const start = Date.now();
    const uri = requestUriOf(call.target, call.method, call.options.headers, flow, call.resendReason);
    if (call.fetcher !== undefined) {
        uri.collapsedInto = call.fetcher;
    }

    const trace = pipeline.tracing?.hop(uri, call.options, clock.timings, true, false);
    if (trace === undefined) {
        if (reportAnswer(flow, pipeline, uri, call.options, start, res, clock, undefined)) {
            flow.hopResponded(answered, res);
        }

        return;
    }

    trace.begin(() => {
        if (reportAnswer(flow, pipeline, uri, call.options, start, res, clock, trace)) {
            flow.hopResponded(answered, res);
        }
    });
    trace.handedOver();
}

/** Reports a hop the cache answered on the pipeline: true when the flow goes on with `res`, false when the call failed or was stopped. */
function reportAnswer(
    flow: CachedFlow,
    pipeline: Pipeline,
    uri: RequestUri,
    options: EffectiveOptions,
    start: number,
    res: HopResponse,
    clock: HopClock,
    trace: HopTrace | undefined
): boolean {
    const report = (err: HttpError | undefined, answer: TimedResponse | undefined): HttpError | undefined =>
        trace === undefined
            ? reportHop(pipeline, err, undefined, answer, start, uri, clock.timings)
            : trace.ended(err, answer, () => reportHop(pipeline, err, undefined, answer, start, uri, clock.timings));
    try {
        announceHop(pipeline, uri, options);
    } catch (err) {
        res.destroy();
        const failure = clientFailure(`A preRequest event listener threw: ${(err as Error).message}`, err);
        clock.hopEnded(failure);
        flow.fail(report(failure, undefined) ?? failure);
        return false;
    }

    if (flow.settled) {
        // A listener aborted the signal.
        res.destroy();
        return false;
    }

    clock.responded(res, true);
    clock.hopEnded(undefined);
    const failure = report(undefined, res as TimedResponse);
    if (failure !== undefined) {
        res.destroy();
        flow.fail(failure);
        return false;
    }

    return true;
}
