// The CommonJS set-up (node --require ./telemetry.cjs app.cjs): NodeSDK with instrumentation-http and
// tracewire's instrumentation, nothing else configured.
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const { TracewireInstrumentation } = require('tracewire/instrumentation');

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
