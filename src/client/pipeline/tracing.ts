import { AsyncResource } from 'node:async_hooks';
import { type TracingChannel, tracingChannel } from 'node:diagnostics_channel';
import type { HttpError } from '../../errors/index.js';
import type { Timings } from '../contract/timings.js';
import type { EffectiveOptions, HopRequest, RequestUri, ResendReason, TimedResponse } from '../contract/types.js';

/**
 * The client's two `node:diagnostics_channel` tracing channels (docs/observability.md "Tracing
 * channels"): a call (`request()`, a helper) and each of its hops, each with Node's five events
 * (`start`, `end`, `asyncStart`, `asyncEnd`, `error`). A subscriber that binds a store to `start`
 * (`bindStore`) finds its value active through the call or the hop, in the pipeline's events and
 * listeners, and in the next hop's `start`: any APM can follow a call and nest its hops without
 * patching anything. Nothing is built while neither channel has a subscriber.
 */
export const CLIENT_TRACING_CHANNELS = {
    call: 'tracewire:client:call',
    hop: 'tracewire:client:hop'
} as const;

/**
 * Why a hop was sent: `initial` (the call's first), `redirect`, `retry` (the `retry` option), `resend`
 * (sent again at once, outside retries: `resendReason` says why) or `revalidation` (a cache's background
 * revalidation, which no caller waits for).
 */
export type HopReason = 'initial' | 'redirect' | 'retry' | 'resend' | 'revalidation';

/** The message of `tracewire:client:call`: one object from the call's `start` to its `asyncEnd`. */
export interface CallMessage {
    /** The method, as the call was made. */
    readonly method: string;
    /** The URL, resolved against `baseUrl`. */
    readonly url: string;
    /** The call's effective options (`route`, `retry`, `redirects`, `cache`, `http2`, `signal`...). */
    readonly options: EffectiveOptions;
    /** The hops made so far: the number of the last one. */
    hops: number;
    /** Once settled, what the call's promise resolved with: the response (`request()`), `{ res, payload }` (a helper). */
    result?: unknown;
    /** Once settled, the final response, for `request()` and the helpers alike. */
    response?: TimedResponse | undefined;
    /** Once failed, the HttpError the call rejected with. */
    error?: HttpError | undefined;
    /** Once settled, the `timings` of the call's last hop (the response's, or the failure's). */
    timings?: Timings | undefined;
}

/** The message of `tracewire:client:hop`: one object from the hop's `start` to its `asyncEnd`. */
export interface HopMessage {
    /** The message of the call the hop belongs to. */
    readonly call: CallMessage;
    /** 1 for the call's first hop, then 2, 3… */
    readonly number: number;
    readonly reason: HopReason;
    /** With `reason` `resend`: `stale-connection`, `http2-goaway` or `http2-refused-stream`. */
    readonly resendReason: ResendReason | undefined;
    /** The method and URL as the hop began (`preRequest` listeners may still change them on `uri`). */
    readonly method: string;
    readonly url: string;
    /** The hop's `uri`, the object the pipeline's events get. */
    readonly uri: RequestUri;
    readonly options: EffectiveOptions;
    /** True for a hop the cache answered from its store: no request was sent (`req` stays undefined). */
    readonly fromCache: boolean;
    /** The hop's timings record, filled as it goes (README "Timings"). */
    readonly timings: Timings;
    /** The request, once created. */
    req?: HopRequest | undefined;
    /** At `asyncStart`: the response whose headers arrived. */
    response?: TimedResponse | undefined;
    /** At `error` and `asyncStart`: the HttpError the hop failed with. */
    error?: HttpError | undefined;
    /** At `asyncEnd`, for a failed hop the client sends again at once: why (the next hop's `resendReason`). */
    resent?: ResendReason | undefined;
}

// Held for the life of the process: Node keeps a channel without subscribers only weakly.
const callChannel: TracingChannel<unknown, CallMessage> = tracingChannel(CLIENT_TRACING_CHANNELS.call);
const hopChannel: TracingChannel<unknown, HopMessage> = tracingChannel(CLIENT_TRACING_CHANNELS.hop);

// `TracingChannel.hasSubscribers` (Node 22, 20.13): read from its five channels where it is missing.
const hasSubscribers: (channel: TracingChannel<unknown, object>) => boolean =
    'hasSubscribers' in callChannel
        ? (channel) => channel.hasSubscribers
        : (channel) =>
              channel.start.hasSubscribers ||
              channel.end.hasSubscribers ||
              channel.asyncStart.hasSubscribers ||
              channel.asyncEnd.hasSubscribers ||
              channel.error.hasSubscribers;

/**
 * The tracing of one call, made as it begins when a tracing channel has a subscriber (`traceCall()`):
 * its message, the async context it began in (where every hop starts and the call settles, whatever
 * socket or session callback the flow is in: a pooled connection's and an HTTP/2 session's callbacks
 * run in the context of the call that opened them), and what its hops were.
 */
export class CallTrace {
    readonly message: CallMessage;
    // Made inside the call's `start`: it holds the stores bound to it.
    private scope: AsyncResource | undefined;
    // The retry count of the last hop: a hop that raised it is a retry.
    private retries = 0;
    // The last hop's timings, for a call that fails.
    private lastTimings: Timings | undefined;

    constructor(method: string, url: string, options: EffectiveOptions) {
        this.message = { method, url, options, hops: 0 };
    }

    /** Runs the synchronous start of the call inside its `start` (and the stores bound to it), then publishes `end`. */
    begin(run: () => void): void {
        const message = this.message;
        // As Node's own traceSync(): `end` inside the stores of `start`.
        callChannel.start.runStores(message, () => {
            this.scope = new AsyncResource('tracewire:client:call');
            try {
                run();
            } finally {
                callChannel.end.publish(message);
            }
        });
    }

    /** The tracing of the call's next hop (or of one its cache answered, `fromCache`). */
    hop(
        uri: RequestUri,
        options: EffectiveOptions,
        timings: Timings,
        fromCache: boolean,
        background: boolean
    ): HopTrace {
        const message = this.message;
        const number = ++message.hops;
        const resendReason = uri.resendReason;
        let reason: HopReason = number === 1 ? 'initial' : 'redirect';
        if (background) {
            reason = 'revalidation';
        } else if (resendReason !== undefined) {
            reason = 'resend';
        } else if (uri.retryCount > this.retries) {
            reason = 'retry';
        }

        if (!background) {
            this.retries = uri.retryCount;
            this.lastTimings = timings;
        }

        return new HopTrace(this, {
            call: message,
            number,
            reason,
            resendReason,
            method: uri.method,
            url: uri.href,
            uri,
            options,
            fromCache,
            timings
        });
    }

    /** Runs `run` in the async context the call began in. */
    inScope(run: () => void): void {
        const scope = this.scope;
        if (scope === undefined) {
            run();
        } else {
            scope.runInAsyncScope(run);
        }
    }

    /** The call settles with `value`: `settle` (its promise's resolve) runs inside `asyncStart`. */
    resolved(value: unknown, settle: (value: unknown) => void): void {
        const message = this.message;
        message.result = value;
        const response = responseOf(value);
        message.response = response;
        message.timings = response?.timings;
        this.inScope(() => {
            callChannel.asyncStart.runStores(message, settle, undefined, value);
            callChannel.asyncEnd.publish(message);
        });
    }

    /** The call fails with `err`: `error`, then `settle` (its promise's reject) inside `asyncStart`. */
    rejected(err: HttpError, settle: (err: HttpError) => void): void {
        const message = this.message;
        message.error = err;
        message.timings = this.lastTimings;
        this.inScope(() => {
            callChannel.error.publish(message);
            callChannel.asyncStart.runStores(message, settle, undefined, err);
            callChannel.asyncEnd.publish(message);
        });
    }
}

/**
 * The tracing of one hop (`CallTrace.hop()`): its message, the async context its `start` made (where
 * its end is told, whatever callback tells it), and the moments the hop tells.
 */
export class HopTrace {
    // Made inside the hop's `start`: it holds the stores bound to it.
    private scope: AsyncResource | undefined;

    constructor(
        private readonly call: CallTrace,
        readonly message: HopMessage
    ) {}

    /**
     * Runs the hop's synchronous start (its `preRequest`, its request made and sent) in the call's
     * context, inside the hop's `start`, then publishes `end`.
     */
    begin(run: () => void): void {
        const message = this.message;
        this.call.inScope(() =>
            hopChannel.start.runStores(message, () => {
                this.scope = new AsyncResource('tracewire:client:hop');
                try {
                    run();
                } finally {
                    hopChannel.end.publish(message);
                }
            })
        );
    }

    /** The hop's request exists. */
    requested(req: HopRequest): void {
        this.message.req = req;
    }

    /**
     * The hop ended with `err` or the response `res`: `error` for a failure, then `report` (its
     * `response` event) inside `asyncStart`; returns what `report` returns.
     */
    ended<T>(err: HttpError | undefined, res: TimedResponse | undefined, report: () => T): T {
        const message = this.message;
        let reported: T | undefined;
        this.inScope(() => {
            if (err === undefined) {
                message.response = res;
            } else {
                message.error = err;
                hopChannel.error.publish(message);
            }

            reported = hopChannel.asyncStart.runStores(message, report);
        });
        return reported as T;
    }

    /** The call took the hop's outcome (followed it, sent the hop again, retried, settled): `asyncEnd`. */
    handedOver(): void {
        const message = this.message;
        const resent = message.uri.resent;
        if (resent !== undefined) {
            message.resent = resent;
        }

        this.inScope(() => hopChannel.asyncEnd.publish(message));
    }

    /** Runs `run` in the async context of the hop's start (the call's, before it has one). */
    private inScope(run: () => void): void {
        const scope = this.scope;
        if (scope === undefined) {
            this.call.inScope(run);
        } else {
            scope.runInAsyncScope(run);
        }
    }
}

/** A call's tracing, when a tracing channel has a subscriber as it begins; undefined (the usual case) otherwise. */
export function traceCall(
    method: string,
    target: { readonly href: string },
    options: EffectiveOptions
): CallTrace | undefined {
    return hasSubscribers(callChannel) || hasSubscribers(hopChannel)
        ? new CallTrace(method, target.href, options)
        : undefined;
}

function responseOf(value: unknown): TimedResponse | undefined {
    if (typeof value !== 'object' || value === null) {
        return undefined;
    }

    // A helper's `{ res, payload }`, or `request()`'s response itself.
    return 'payload' in value && 'res' in value ? (value as { res: TimedResponse }).res : (value as TimedResponse);
}
