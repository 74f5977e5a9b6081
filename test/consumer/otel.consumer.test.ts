import { describe, expect, it } from 'vitest';
import { runNode, scratchProject } from './scratch.js';

interface ExportedSpan {
    name: string;
    kind: number;
    scope: string;
    traceId: string;
    spanId: string;
    parentSpanId: string | undefined;
}

interface AppReport {
    node: string;
    api: string;
    seen: { url: string; traceparent: string | undefined }[];
    spans: ExportedSpan[];
}

// No collector runs here: NodeSDK's default OTLP metric and log exporters would only retry at
// shutdown (10 s per app). The traces go to the app's own exporter.
const noCollector = { OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' };

const CLIENT = 2;
const SERVER = 1;

/**
 * What the standard set-up must give for the app's four hops (a root call, a redirect's two hops, a
 * call of a client given to instrumentClient()): one CLIENT span per hop, tracewire's; one SERVER
 * span per hop, instrumentation-http's, the child of that client span, in its trace; and the
 * `traceparent` the server received naming that client span.
 */
function expectOneClientSpanPerHop(report: AppReport): void {
    const clients = report.spans.filter((span) => span.kind === CLIENT);
    const servers = report.spans.filter((span) => span.kind === SERVER);
    expect(report.seen.map((request) => request.url)).toEqual(['/', '/redirect', '/', '/own']);
    expect(clients.map((span) => span.scope)).toEqual(Array(4).fill('tracewire/instrumentation'));
    expect(servers).toHaveLength(4);
    for (const server of servers) {
        const parent = clients.filter((span) => span.spanId === server.parentSpanId);
        expect(parent, `the parent of server span ${server.spanId}`).toHaveLength(1);
        expect(parent[0]!.traceId).toBe(server.traceId);
    }

    expect(new Set(servers.map((span) => span.parentSpanId)).size).toBe(4);
    for (const { traceparent } of report.seen) {
        const [, traceId, spanId] = traceparent?.split('-') ?? [];
        expect(clients.some((span) => span.traceId === traceId && span.spanId === spanId)).toBe(true);
    }

    // The root call has no parent; the redirect's two hops share a trace only through the caller, so
    // each of the three calls starts its own trace.
    expect(clients.every((span) => span.parentSpanId === undefined)).toBe(true);
}

describe('NodeSDK + HttpInstrumentation + TracewireInstrumentation, nothing else configured', () => {
    describe('the current SDK line (sdk-node 0.301, sdk-trace 3, api 1.10)', () => {
        const dir = scratchProject('otel-current', { apps: 'otel' });

        it('ESM app with the OpenTelemetry hook (--import of module.register): one CLIENT span per hop, the server span its child', () => {
            const report = runNode<AppReport>(dir, ['--import', './telemetry.mjs', 'app.mjs'], noCollector);
            expect(report.api).toMatch(/^1\.10\./);
            expectOneClientSpanPerHop(report);
        });

        it('CommonJS app (--require): the same', () => {
            const report = runNode<AppReport>(dir, ['--require', './telemetry.cjs', 'app.cjs'], noCollector);
            expectOneClientSpanPerHop(report);
        });
    });

    describe('an app on the 2.x SDK line and an older API (sdk-node 0.223, api 1.8.0)', () => {
        const dir = scratchProject('otel-older', { apps: 'otel' });

        it('ESM app with the hook: client spans recorded and traceparent sent, one per hop', () => {
            const report = runNode<AppReport>(dir, ['--import', './telemetry.mjs', 'app.mjs'], noCollector);
            expect(report.api).toBe('1.8.0');
            expectOneClientSpanPerHop(report);
        });

        it('CommonJS app: the same', () => {
            const report = runNode<AppReport>(dir, ['--require', './telemetry.cjs', 'app.cjs'], noCollector);
            expectOneClientSpanPerHop(report);
        });
    });
});
