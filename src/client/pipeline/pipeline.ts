import type { EventEmitter } from 'eventemitter3';
import type { HttpError } from '../../errors/index.js';
import { clientFailure } from '../contract/errors.js';
import type { Timings } from '../contract/timings.js';
import type { ClientEvents, EffectiveOptions, HopRequest, RequestUri, TimedResponse } from '../contract/types.js';
import { type PipelineEmitter, withChannels } from './channels.js';
import type { CallTrace } from './tracing.js';

/**
 * The one place a hop reports itself: `preRequest` -> `request` -> `response` (README, "The event
 * pipeline"): the client's emitter, or the publisher that also feeds the diagnostics channels.
 */
export type Pipeline = PipelineEmitter;

/**
 * The pipeline a new request reports to. An emitter without a pipeline listener counts as none, so
 * `events: true` costs nothing until something subscribes; the diagnostics channels join it while
 * they have subscribers (channels.ts). The choice holds for the whole request:
 * a listener added while a request is under way sees the requests that start after it, never half
 * of one (a `response` without its `preRequest`).
 */
export function observedPipeline(
    events: EventEmitter<ClientEvents> | undefined,
    tracing: CallTrace | undefined
): Pipeline | undefined {
    const listened =
        events !== undefined &&
        (events.listenerCount('preRequest') > 0 ||
            events.listenerCount('request') > 0 ||
            events.listenerCount('response') > 0);
    return withChannels(listened ? events : undefined, tracing);
}

/** What a hop tells its listeners about the request it belongs to (`RequestUri`). */
export interface HopCounts {
    readonly redirectCount: number;
    readonly retryCount: number;
    readonly staleResends: number;
}

/** The `uri` of a hop's events: a new URL object per hop, carrying the method, headers and counts. */
export function requestUriOf(
    target: URL | { readonly href: string },
    method: string,
    headers: RequestUri['headers'],
    counts: HopCounts,
    resendReason: RequestUri['resendReason']
): RequestUri {
    const uri = (target instanceof URL ? target : new URL(target.href)) as RequestUri;
    uri.method = method;
    uri.headers = headers;
    uri.redirectCount = counts.redirectCount;
    uri.retryCount = counts.retryCount;
    uri.staleResends = counts.staleResends;
    uri.resendReason = resendReason;
    return uri;
}

/** `preRequest`: listeners may change the uri and the options; a throwing listener throws here. */
export function announceHop(pipeline: Pipeline, uri: RequestUri, options: EffectiveOptions): void {
    pipeline.emit('preRequest', uri, options);
}

/** `request`: the error that fails the hop when a listener throws, else undefined. */
export function announceRequest(pipeline: Pipeline, req: HopRequest): HttpError | undefined {
    try {
        pipeline.emit('request', req);
    } catch (err) {
        return clientFailure(`A request event listener threw: ${(err as Error).message}`, err);
    }

    return undefined;
}

/**
 * `response`, once per hop. A throwing listener must not crash the process from inside a socket
 * callback: its error is returned, for the request to fail with.
 */
export function reportHop(
    pipeline: Pipeline,
    err: HttpError | undefined,
    req: HopRequest | undefined,
    res: TimedResponse | undefined,
    start: number,
    uri: RequestUri,
    timings: Timings
): HttpError | undefined {
    try {
        pipeline.emit('response', err, { req, res, start, uri, timings });
    } catch (listenerErr) {
        return clientFailure(`A response event listener threw: ${(listenerErr as Error).message}`, listenerErr);
    }

    return undefined;
}
