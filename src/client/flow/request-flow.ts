import type { EventEmitter } from 'eventemitter3';
import { loadCacheLayer, loadedCacheLayer } from '../cache/load-layer.js';
import { cacheSettingsOf } from '../cache/settings.js';
import { aborted, clientFailure } from '../contract/errors.js';
import type { Agents, CacheOptions, ClientEvents, RequestAndReadOptions } from '../contract/types.js';
import type { StoredDefaults } from '../options/options.js';
import { isOn } from '../options/values.js';
import { observedPipeline, type Pipeline } from '../pipeline/pipeline.js';
import { traceCall } from '../pipeline/tracing.js';
import { type PreparedCall, prepareCall } from './call-setup.js';
import { CallDeadline } from './deadline.js';
import type { Finisher } from './finisher.js';
import { HopLoop } from './hop-loop.js';
import { Retries } from './retries.js';
import { retryPolicy } from './retry.js';

/** What a request needs from its client. */
export interface ClientContext {
    readonly agents: Agents;
    readonly events?: EventEmitter<ClientEvents>;
}

/**
 * One call of `request()` or of a helper, set up: its options checked and merged (call-setup.ts), the
 * pipeline it reports to, the caller's signal listened to, its `deadline`, `retry` and `cache` made
 * ready; then its hops run and it settles as the loop it extends says (hop-loop.ts).
 */
export class RequestFlow extends HopLoop {
    constructor(
        readonly context: ClientContext,
        finisher: Finisher
    ) {
        super(context.agents, finisher);
    }

    /** Starts a checked call (`beginCall()`), reporting to `pipeline`: its signal, deadline and retries, then its first hop. */
    start(call: PreparedCall, pipeline: Pipeline | undefined): void {
        this.pipeline = pipeline;
        const merged = call.options;
        const signal = merged.signal;
        if (signal !== undefined) {
            if (signal.aborted) {
                this.fail(aborted(signal, 'request'));
                return;
            }

            this.signal = signal;
            signal.addEventListener('abort', this);
        }

        if (merged.deadline) {
            this.deadline = new CallDeadline(merged.deadline, this);
        }

        const policy = retryPolicy(merged.retry);
        if (policy !== undefined) {
            this.retries = new Retries(policy, this);
        }

        if (isOn(merged.cache)) {
            const Layer = loadedCacheLayer();
            if (Layer === undefined) {
                this.startOnceLoaded(call);
                return;
            }

            this.cache = new Layer(this, cacheSettingsOf(merged.cache as true | CacheOptions), this.pipeline);
        }

        this.startHop(call.method, call.target, merged);
    }

    /**
     * The process's first request with a cache: the cache layer loads, then the request starts (its
     * store lookup is asynchronous anyway), unless it was stopped meanwhile.
     */
    private startOnceLoaded(call: PreparedCall): void {
        loadCacheLayer().then(
            (Layer) => {
                if (this.settled) {
                    return;
                }

                try {
                    const settings = cacheSettingsOf(call.options.cache as true | CacheOptions);
                    this.cache = new Layer(this, settings, this.pipeline);
                    this.startHop(call.method, call.target, call.options);
                } catch (err) {
                    this.fail(clientFailure(`The request could not be started: ${(err as Error).message}`, err));
                }
            },
            (err: unknown) => this.fail(clientFailure('The modules of the request could not be loaded', err))
        );
    }
}

/**
 * Checks a call of `request()` or of a helper, then starts its flow, inside the call's tracing when a
 * tracing channel has a subscriber (pipeline/tracing.ts); any problem rejects the promise, nothing throws.
 */
export function beginCall(
    flow: RequestFlow,
    method: unknown,
    uri: unknown,
    options: RequestAndReadOptions | undefined,
    defaults: StoredDefaults | undefined
): void {
    const call = prepareCall(method, uri, options, defaults, flow.readsResponseBody);
    if (call instanceof Error) {
        flow.fail(call);
        return;
    }

    const tracing = traceCall(call.method, call.target, call.options);
    const pipeline = observedPipeline(flow.context.events, tracing);
    if (tracing === undefined) {
        flow.start(call, pipeline);
    } else {
        flow.settleThrough(tracing);
        tracing.begin(() => flow.start(call, pipeline));
    }
}
