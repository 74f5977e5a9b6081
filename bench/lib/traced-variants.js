// The variants of the tracing benchmark, one per process (a context manager and a patched `http`
// module are process-wide): bench/children/traced-client.js runs one for the tracing section,
// bench/profile/tracing-instructions.js one under callgrind.
//
// The SDK is set up as a service would: AsyncLocalStorageContextManager, the W3C propagator, a
// parent-based sampler (the SDK's default), a BatchSpanProcessor to an exporter that drops the spans,
// and a MeterProvider with a periodic reader.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * Every variant. A tracewire one followed by `@baseline` (`tracewire+otel@baseline`) runs the build
 * of another checkout, whose directory is given.
 */
export const TRACED_VARIANTS = [
    // The plain client.
    'tracewire',
    // The SDK set up, nothing instrumented: what the context manager alone costs the client.
    'tracewire+sdk',
    // The plain client with the SDK calls that make the very span and metric point instrumentClient
    // emits, and nothing else: the floor of any instrumentation of this client on this SDK set-up.
    'tracewire+sdk-floor',
    // An events client traced by instrumentClient (the default config).
    'tracewire+otel',
    // The same with the phase events on (`phaseEvents: true`).
    'tracewire+otel+events',
    // The same as `tracewire+otel`, every request made as a service makes it for an incoming request
    // whose `traceparent` was sampled (`-sampled`) or not (`-unsampled`: the parent-based sampler drops
    // its spans, a sampled-out trace), under that remote parent.
    'tracewire+otel-sampled',
    'tracewire+otel-unsampled',
    // An events client with do-nothing pipeline listeners and no SDK: what the event pipeline costs.
    'tracewire+events',
    // Raw node:http with a keep-alive agent, plain, with the SDK set up, and with instrumentation-http.
    'node:http',
    'node:http+sdk',
    'node:http+otel'
];

const require = createRequire(import.meta.url);

/** Whether `variant` is one of TRACED_VARIANTS, or a tracewire one of them `@baseline`. */
export function isTracedVariant(variant) {
    const [name, build] = String(variant).split('@');
    return (
        TRACED_VARIANTS.includes(name) &&
        (build === undefined || (build === 'baseline' && name.startsWith('tracewire')))
    );
}

/**
 * Sets `variant` up against `url` (a GET of 100 bytes): `get()` makes one request and resolves with
 * its body; `sdk`, when the variant has one, holds its providers and the count of exported spans.
 */
export async function setUpVariant(variant, url, baselineDirectory) {
    if (!isTracedVariant(variant)) {
        throw new Error(`unknown variant ${variant}: ${TRACED_VARIANTS.join(', ')}, or a tracewire one @baseline`);
    }

    if (variant === 'node:http') {
        return { get: rawGet(require('node:http'), url) };
    }

    if (variant === 'node:http+otel') {
        const sdk = await createSdk();
        const { registerInstrumentations } = await import('@opentelemetry/instrumentation');
        const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
        registerInstrumentations({
            instrumentations: [new HttpInstrumentation()],
            tracerProvider: sdk.tracerProvider,
            meterProvider: sdk.meterProvider
        });
        // Required after the instrumentation is registered, so that this is the patched module.
        return { get: rawGet(require('node:http'), url), sdk };
    }

    if (variant === 'node:http+sdk') {
        return { get: rawGet(require('node:http'), url), sdk: await createSdk() };
    }

    const baseline = variant.endsWith('@baseline');
    if (baseline && baselineDirectory === undefined) {
        throw new Error(`${variant} needs the directory of the baseline's build`);
    }

    const entry = (path, name) => (baseline ? pathToFileURL(`${baselineDirectory}/dist/${path}`).href : name);
    const { client } = await import(entry('src/index.js', 'tracewire'));
    const plain = async () => (await client.get(url)).payload;
    const name = variant.replace(/@baseline$/, '');
    switch (name) {
        case 'tracewire':
            return { get: plain };
        case 'tracewire+sdk':
            return { get: plain, sdk: await createSdk() };
        case 'tracewire+sdk-floor': {
            const sdk = await createSdk();
            return { get: sdkFloorGet(sdk, url, (headers) => client.get(url, { headers })), sdk };
        }
        case 'tracewire+events': {
            const instance = client.defaults({ events: true });
            instance.events.on('preRequest', () => {});
            instance.events.on('response', () => {});
            return { get: async () => (await instance.get(url)).payload };
        }
        default: {
            // tracewire+otel, +events, -sampled and -unsampled.
            const sdk = await createSdk();
            const { instrumentClient } = await import(entry('instrumentation/index.js', 'tracewire/instrumentation'));
            const instance = client.defaults({ events: true });
            instrumentClient(instance, {
                tracerProvider: sdk.tracerProvider,
                meterProvider: sdk.meterProvider,
                ...(name === 'tracewire+otel+events' ? { phaseEvents: true } : {})
            });
            const get = async () => (await instance.get(url)).payload;
            const parent = /-(un)?sampled$/.exec(name);
            return { get: parent === null ? get : underRemoteParent(sdk, parent[1] === undefined, get), sdk };
        }
    }
}

async function createSdk() {
    const { context, metrics, propagation, SpanKind, TraceFlags, trace } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const { ExportResultCode, W3CTraceContextPropagator } = await import('@opentelemetry/core');
    const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
    const { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TracerProvider } = await import(
        '@opentelemetry/sdk-trace'
    );
    const exported = { spans: 0 };
    const dropping = (count) => ({
        export(items, done) {
            count(items);
            done({ code: ExportResultCode.SUCCESS });
        },
        shutdown: async () => {},
        forceFlush: async () => {}
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const tracerProvider = new TracerProvider({
        sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
        spanProcessors: [
            new BatchSpanProcessor({
                exporter: dropping((spans) => {
                    exported.spans += spans.length;
                })
            })
        ]
    });
    const meterProvider = new MeterProvider({
        readers: [new PeriodicExportingMetricReader({ exporter: dropping(() => {}), exportIntervalMillis: 5000 })]
    });
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    // A service's first context.with() (its server instrumentation, the span processor's first
    // export) turns the context manager's async hooks on for good: on from the start here, so every
    // variant with the SDK pays them from its first request.
    context.with(context.active(), () => {});
    return {
        tracerProvider,
        meterProvider,
        exported,
        api: { context, propagation, trace, SpanKind, TraceFlags }
    };
}

/** GET → body Buffer with node:http and a keep-alive agent, as the client benchmark's raw baseline. */
function rawGet(http, url) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    return () =>
        new Promise((resolve, reject) => {
            const req = http.request(url, { agent }, (res) => {
                const chunks = [];
                res.on('data', (chunk) => chunks.push(chunk));
                res.on('end', () => resolve(Buffer.concat(chunks)));
                res.on('error', reject);
            });
            req.on('error', reject);
            req.end();
        });
}

/**
 * `get` run as a service runs the work of an incoming request whose `traceparent` says "sampled" or
 * "not sampled": under that remote parent, which the parent-based sampler follows.
 */
function underRemoteParent(sdk, sampled, get) {
    const { context, trace, TraceFlags } = sdk.api;
    const parent = trace.setSpanContext(context.active(), {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
        isRemote: true
    });
    return () => context.with(parent, get);
}

/**
 * GET through `send(headers)` wrapped in the SDK work one traced hop needs: a CLIENT span with the
 * attributes instrumentClient sets (four at the start, four once the response is in), the W3C
 * context injected into the sent headers, and one point of `http.client.request.duration` with the
 * five attributes of a 200. No event pipeline, no listener, no body counting.
 */
function sdkFloorGet(sdk, url, send) {
    const tracer = sdk.tracerProvider.getTracer('sdk-floor');
    const duration = sdk.meterProvider.getMeter('sdk-floor').createHistogram('http.client.request.duration', {
        unit: 's',
        advice: {
            explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
        }
    });
    const { host, hostname, port, pathname } = new URL(url);
    return async () => {
        const parent = sdk.api.context.active();
        const startTime = performance.now();
        const attributes = {};
        attributes['http.request.method'] = 'GET';
        attributes['server.address'] = hostname;
        attributes['server.port'] = Number(port);
        attributes['url.full'] = `http://${host}${pathname}`;
        const span = tracer.startSpan('GET', { kind: sdk.api.SpanKind.CLIENT, attributes }, parent);
        const headers = {};
        sdk.api.propagation.inject(sdk.api.trace.setSpan(parent, span), headers);
        const { res, payload } = await send(headers);
        span.setAttribute('http.response.status_code', res.statusCode);
        span.setAttribute('network.protocol.version', res.httpVersion);
        span.setAttribute('http.request.body.size', 0);
        span.setAttribute('http.response.body.size', payload.length);
        span.end();
        const metricAttributes = {};
        metricAttributes['http.request.method'] = 'GET';
        metricAttributes['server.address'] = hostname;
        metricAttributes['server.port'] = Number(port);
        metricAttributes['http.response.status_code'] = res.statusCode;
        metricAttributes['network.protocol.version'] = res.httpVersion;
        duration.record((performance.now() - startTime) / 1000, metricAttributes);
        return payload;
    };
}
