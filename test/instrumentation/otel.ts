import { type Attributes, context, propagation } from '@opentelemetry/api';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
    DataPointType,
    type HistogramMetricData,
    MeterProvider,
    MetricReader,
    type ResourceMetrics
} from '@opentelemetry/sdk-metrics';
import {
    BasicTracerProvider,
    InMemorySpanExporter,
    type ReadableSpan,
    SimpleSpanProcessor
} from '@opentelemetry/sdk-trace-base';

/** A pull reader: metrics are read on demand with `collect()`, nothing is exported on a timer. */
class InMemoryMetricReader extends MetricReader {
    protected override async onForceFlush(): Promise<void> {}
    protected override async onShutdown(): Promise<void> {}
}

export interface HistogramPoint {
    attributes: Attributes;
    count: number;
    sum: number;
    boundaries: number[];
    unit: string;
}

/**
 * The real SDK wired as an application would: the async-hooks context manager and the W3C
 * propagator registered globally, spans kept in memory, metrics read on demand. The providers are
 * handed to the instrumentation through its config, so tests do not depend on global providers.
 */
export function setupOtel() {
    context.setGlobalContextManager(new AsyncHooksContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const reader = new InMemoryMetricReader();
    const meterProvider = new MeterProvider({ readers: [reader] });

    return {
        tracerProvider,
        meterProvider,
        spans(): ReadableSpan[] {
            return exporter.getFinishedSpans();
        },
        reset(): void {
            exporter.reset();
        },
        async histogram(name: string): Promise<HistogramPoint[]> {
            const { resourceMetrics } = await reader.collect();
            return histogramPoints(resourceMetrics, name);
        },
        async shutdown(): Promise<void> {
            await tracerProvider.shutdown();
            await meterProvider.shutdown();
            context.disable();
            propagation.disable();
        }
    };
}

function histogramPoints(resourceMetrics: ResourceMetrics, name: string): HistogramPoint[] {
    const points: HistogramPoint[] = [];
    for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
            if (metric.descriptor.name !== name || metric.dataPointType !== DataPointType.HISTOGRAM) {
                continue;
            }

            for (const point of (metric as HistogramMetricData).dataPoints) {
                points.push({
                    attributes: point.attributes,
                    count: point.value.count,
                    sum: point.value.sum ?? 0,
                    boundaries: point.value.buckets.boundaries,
                    unit: metric.descriptor.unit
                });
            }
        }
    }

    return points;
}
