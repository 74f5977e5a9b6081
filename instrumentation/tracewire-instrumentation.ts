import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { EventEmitter } from 'eventemitter3';
import {
    CLIENT_CHANNELS,
    type PreRequestMessage,
    type RequestMessage,
    type ResponseMessage
} from '../src/client/index.js';
import { type ClientInstrumentation, instrumentClient } from './client.js';
import type { ClientInstrumentationConfig, TracewireInstrumentationConfig } from './config.js';
import type { EventLoggerProvider } from './log-events.js';
import { INSTRUMENTATION_SCOPE, INSTRUMENTATION_VERSION } from './providers.js';

/**
 * Every tracewire client of the process traced at once (README "Observability"): an OpenTelemetry
 * `Instrumentation` for `registerInstrumentations()` or NodeSDK's `instrumentations`. While enabled,
 * it subscribes to the client's diagnostics channels and hands their messages to the same handlers
 * `instrumentClient()` puts on an events client, so each hop gets the same span and metrics. A hop
 * of a client also passed to `instrumentClient()` is left to that instrumentation: one span per hop.
 *
 * It implements the interface of `@opentelemetry/instrumentation` structurally, without depending
 * on that package. Like the instrumentations built on it, it is enabled as it is made (unless
 * `enabled: false`), and providers set with `setTracerProvider()` / `setMeterProvider()` apply to
 * the hops that start afterwards; a `tracerProvider` or `meterProvider` given in the config wins.
 */
export class TracewireInstrumentation {
    readonly instrumentationName: string = INSTRUMENTATION_SCOPE;
    readonly instrumentationVersion: string = INSTRUMENTATION_VERSION;

    private config: TracewireInstrumentationConfig = { enabled: true };
    private tracerProvider: TracerProvider | undefined;
    private meterProvider: MeterProvider | undefined;
    private loggerProvider: EventLoggerProvider | undefined;
    private subscription: ChannelSubscription | undefined;

    constructor(config: TracewireInstrumentationConfig = {}) {
        this.setConfig(config);
        if (this.config.enabled !== false) {
            this.enable();
        }
    }

    /** Subscribes to the channels: every request that starts from now on is traced. */
    enable(): void {
        this.subscription ??= new ChannelSubscription(this.clientConfig());
    }

    /**
     * Unsubscribes: nothing is recorded for requests that start afterwards. A hop in flight whose
     * response has arrived still ends with its body, as with `instrumentClient().disable()`.
     */
    disable(): void {
        this.subscription?.stop();
        this.subscription = undefined;
    }

    setTracerProvider(tracerProvider: TracerProvider): void {
        this.tracerProvider = tracerProvider;
        this.restart();
    }

    setMeterProvider(meterProvider: MeterProvider): void {
        this.meterProvider = meterProvider;
        this.restart();
    }

    /** The LoggerProvider of the log-based events (`registerInstrumentations()` and NodeSDK hand theirs). */
    setLoggerProvider(loggerProvider: EventLoggerProvider): void {
        this.loggerProvider = loggerProvider;
        this.restart();
    }

    /** Replaces the config (as OpenTelemetry's instrumentations do); an enabled instrumentation applies it at once. */
    setConfig(config: TracewireInstrumentationConfig): void {
        this.config = { enabled: true, ...config };
        this.restart();
    }

    getConfig(): TracewireInstrumentationConfig {
        return this.config;
    }

    private restart(): void {
        if (this.subscription !== undefined) {
            this.disable();
            this.enable();
        }
    }

    private clientConfig(): ClientInstrumentationConfig {
        const { enabled: _enabled, ...config } = this.config;
        const tracerProvider = config.tracerProvider ?? this.tracerProvider;
        const meterProvider = config.meterProvider ?? this.meterProvider;
        const loggerProvider = config.loggerProvider ?? this.loggerProvider;
        if (tracerProvider !== undefined) {
            config.tracerProvider = tracerProvider;
        }

        if (meterProvider !== undefined) {
            config.meterProvider = meterProvider;
        }

        if (loggerProvider !== undefined) {
            config.loggerProvider = loggerProvider;
        }

        return config;
    }
}

/**
 * The channels' messages replayed on an emitter of our own, which `instrumentClient()` listens to:
 * the handlers, and so every span attribute and metric, are those of an events client.
 */
class ChannelSubscription {
    private readonly events = new EventEmitter();
    private readonly instrumentation: ClientInstrumentation;

    constructor(config: ClientInstrumentationConfig) {
        this.instrumentation = instrumentClient({ events: this.events }, config);
        subscribe(CLIENT_CHANNELS.preRequest, this.onPreRequest);
        subscribe(CLIENT_CHANNELS.request, this.onRequest);
        subscribe(CLIENT_CHANNELS.response, this.onResponse);
    }

    stop(): void {
        unsubscribe(CLIENT_CHANNELS.preRequest, this.onPreRequest);
        unsubscribe(CLIENT_CHANNELS.request, this.onRequest);
        unsubscribe(CLIENT_CHANNELS.response, this.onResponse);
        this.instrumentation.disable();
    }

    // The instrumentation's handlers catch what they throw; the messages are read defensively, as
    // anything may publish on a channel, and a subscriber's throw would reach the process.
    private readonly onPreRequest = (message: unknown): void => {
        const { uri, options } = (message ?? {}) as Partial<PreRequestMessage>;
        if (uri !== undefined) {
            this.events.emit('preRequest', uri, options);
        }
    };

    private readonly onRequest = (message: unknown): void => {
        const { req } = (message ?? {}) as Partial<RequestMessage>;
        if (req !== undefined) {
            this.events.emit('request', req);
        }
    };

    private readonly onResponse = (message: unknown): void => {
        const { err, details } = (message ?? {}) as Partial<ResponseMessage>;
        if (details !== undefined) {
            this.events.emit('response', err, details);
        }
    };
}
