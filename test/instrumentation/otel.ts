import { type Attributes, context, propagation, type ValueType } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
    DataPointType,
    type HistogramMetricData,
    MeterProvider,
    MetricReader,
    type ResourceMetrics
} from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { EventLoggerProvider } from '../../src/common/exception-record.js';

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
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: exporter })] });
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
        /** Every metric of one collection, by name. */
        async metrics(): Promise<Map<string, CollectedMetric>> {
            const { resourceMetrics } = await reader.collect();
            return collectedMetrics(resourceMetrics);
        },
        async shutdown(): Promise<void> {
            await tracerProvider.shutdown();
            await meterProvider.shutdown();
            context.disable();
            propagation.disable();
        }
    };
}

/** A metric as a test looks at it: what the descriptor says, and each point's attributes and value. */
export interface CollectedMetric {
    name: string;
    description: string;
    unit: string;
    /** The instrument kind, e.g. `HISTOGRAM`, `UP_DOWN_COUNTER`, `OBSERVABLE_UP_DOWN_COUNTER`. */
    type: string;
    valueType: ValueType;
    /** For a sum: whether it only goes up. */
    isMonotonic: boolean | undefined;
    /** The value of a sum; the count and sum of a histogram. */
    points: { attributes: Attributes; value: number | { count: number; sum: number } }[];
}

function collectedMetrics(resourceMetrics: ResourceMetrics): Map<string, CollectedMetric> {
    const byName = new Map<string, CollectedMetric>();
    for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
            const { descriptor } = metric;
            byName.set(descriptor.name, {
                name: descriptor.name,
                description: descriptor.description,
                unit: descriptor.unit,
                // The SDK keeps the instrument kind on the descriptor without declaring it.
                type: (descriptor as { type?: string }).type ?? '',
                valueType: descriptor.valueType,
                isMonotonic: metric.dataPointType === DataPointType.SUM ? metric.isMonotonic : undefined,
                points: (metric.dataPoints as { attributes: Attributes; value: unknown }[]).map((point) => ({
                    attributes: point.attributes,
                    value:
                        typeof point.value === 'number'
                            ? point.value
                            : {
                                  count: (point.value as { count: number }).count,
                                  sum: (point.value as { sum?: number }).sum ?? 0
                              }
                }))
            });
        }
    }

    return byName;
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

/**
 * A LoggerProvider whose loggers keep nothing (`enabled()` is false), recording the events they were asked
 * about and any record handed to them anyway: the instrumentation must ask first and build nothing.
 */
export function loggerKeepingNothing(): { provider: EventLoggerProvider; asked: unknown[]; emitted: unknown[] } {
    const asked: unknown[] = [];
    const emitted: unknown[] = [];
    const provider: EventLoggerProvider = {
        getLogger: () => ({
            enabled: (options) => {
                asked.push(options?.eventName);
                return false;
            },
            emit: (record) => emitted.push(record)
        })
    };
    return { provider, asked, emitted };
}
