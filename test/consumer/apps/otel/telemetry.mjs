// The documented ESM set-up (node --import ./telemetry.mjs app.mjs): OpenTelemetry's module hook
// registered first, then NodeSDK with instrumentation-http and tracewire's instrumentation. tracewire
// is imported after the hook, as an application's own modules are. Nothing else is configured.
import { register } from 'node:module';

register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);

const { NodeSDK } = await import('@opentelemetry/sdk-node');
const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
const { TracewireInstrumentation } = await import('tracewire/instrumentation');

// Keeps what is exported (the SDK's in-memory exporter forgets it at shutdown).
const finished = [];
const exporter = {
    export(spans, done) {
        finished.push(...spans);
        done({ code: 0 });
    },
    shutdown: async () => {},
    forceFlush: async () => {}
};
const sdk = new NodeSDK({
    traceExporter: exporter,
    instrumentations: [new HttpInstrumentation(), new TracewireInstrumentation()]
});
sdk.start();
globalThis.telemetry = { sdk, finished };
