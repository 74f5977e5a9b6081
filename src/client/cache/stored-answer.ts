import { clientFailure } from '../contract/errors.js';
import type { HopResponse, TimedResponse } from '../contract/types.js';
import { announceHop, type Pipeline, reportHop, requestUriOf } from '../pipeline/pipeline.js';
import { destinationOf } from '../wire/destination.js';
import type { AnsweredHop } from '../wire/hop.js';
import { HopClock } from '../wire/hop-timings.js';
import type { CacheCall, CachedFlow } from './cache-call.js';

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
