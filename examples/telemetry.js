// The OpenTelemetry SDK set up as an application would, before anything is instrumented. Spans,
// log records (the log-based events: a failed request's exception) and metrics are always kept in
// memory so the demo can print them; with OTEL_EXPORTER_OTLP_ENDPOINT set the spans and metrics are
// also exported to that collector over OTLP/HTTP (Jaeger, Tempo, an OTel Collector).
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, MetricReader, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
    BatchSpanProcessor,
    InMemorySpanExporter,
    SimpleSpanProcessor,
    TracerProvider
} from '@opentelemetry/sdk-trace';

// The Logs API is part of @opentelemetry/api from 1.10 (the SDK 3 line); before, it is @opentelemetry/api-logs.
const { context, metrics, propagation, trace } = api;
const { logs } = api.logs === undefined ? await import('@opentelemetry/api-logs') : api;

/** A reader the demo pulls from once at the end, to print the histograms. */
class PullMetricReader extends MetricReader {
    async onForceFlush() {}
    async onShutdown() {}
}

export function startTelemetry() {
    const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const resource = resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? 'tracewire-demo' });
    const memory = new InMemorySpanExporter();
    const spanProcessors = [new SimpleSpanProcessor({ exporter: memory })];
    const pull = new PullMetricReader();
    const readers = [pull];
    if (endpoint) {
        // Both exporters read the endpoint (and OTEL_EXPORTER_OTLP_HEADERS...) from the environment.
        spanProcessors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter() }));
        readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter() }));
    }

    const tracerProvider = new TracerProvider({ resource, spanProcessors });
    const meterProvider = new MeterProvider({ resource, readers });
    const logRecords = new InMemoryLogRecordExporter();
    const loggerProvider = new LoggerProvider({
        resource,
        processors: [new SimpleLogRecordProcessor({ exporter: logRecords })]
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    logs.setGlobalLoggerProvider(loggerProvider);

    return {
        endpoint,
        finishedSpans: () => memory.getFinishedSpans(),
        finishedLogRecords: () => logRecords.getFinishedLogRecords(),
        collectMetrics: async () => (await pull.collect()).resourceMetrics,
        async shutdown() {
            await tracerProvider.forceFlush();
            await meterProvider.forceFlush();
            await tracerProvider.shutdown();
            await meterProvider.shutdown();
            await loggerProvider.shutdown();
        }
    };
}
