// Prints what the demo recorded: each trace as an indented tree of spans, then the histograms.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';

const kindNames = { [SpanKind.CLIENT]: 'CLIENT', [SpanKind.SERVER]: 'SERVER', [SpanKind.INTERNAL]: 'INTERNAL' };

// The attributes worth a glance, in the order they are printed.
const keyAttributes = [
    'url.full',
    'http.route',
    'http.response.status_code',
    'error.type',
    'http.request.resend_count',
    'url.template'
];

const durationMs = ([seconds, nanos]) => seconds * 1e3 + nanos / 1e6;

/** One tree per trace, roots first, children in start order. */
export function printTraces(spans) {
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
    const children = new Map();
    const roots = [];
    for (const span of [...spans].sort((a, b) => durationMs(a.startTime) - durationMs(b.startTime))) {
        const parentId = span.parentSpanContext?.spanId;
        if (parentId !== undefined && byId.has(parentId)) {
            children.set(parentId, [...(children.get(parentId) ?? []), span]);
        } else {
            roots.push(span);
        }
    }

    for (const root of roots) {
        console.log(`\ntrace ${root.spanContext().traceId}`);
        printSpan(root, children, '', true);
    }
}

function printSpan(span, children, indent, last) {
    const status = span.status.code === SpanStatusCode.ERROR ? '  ERROR' : '';
    const kind = kindNames[span.kind] ?? 'SPAN';
    const duration = durationMs(span.duration).toFixed(1);
    console.log(`${indent}${last ? '└─' : '├─'} ${kind} ${span.name}  (${duration} ms)${status}`);
    const detail = `${indent}${last ? '   ' : '│  '}`;
    const attributes = keyAttributes
        .filter((key) => span.attributes[key] !== undefined)
        .map((key) => `${key}=${span.attributes[key]}`);
    if (attributes.length > 0) {
        console.log(`${detail}   ${attributes.join('  ')}`);
    }

    for (const event of span.events) {
        console.log(`${detail}   event ${event.name}: ${event.attributes?.['exception.message'] ?? ''}`);
    }

    const own = children.get(span.spanContext().spanId) ?? [];
    own.forEach((child, index) => {
        printSpan(child, children, detail, index === own.length - 1);
    });
}

/** Count, mean and max of each data point of the duration histograms. */
export function printHistograms(resourceMetrics) {
    for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
            console.log(`\n${metric.descriptor.name} (${metric.descriptor.unit})`);
            for (const point of metric.dataPoints) {
                const { count, sum, max } = point.value;
                const labels = Object.entries(point.attributes)
                    .filter(([key]) => key !== 'server.address' && key !== 'network.protocol.version')
                    .map(([key, value]) => `${key.replace(/^http\.(request\.|response\.)?/, '')}=${value}`)
                    .join(' ');
                const mean = ((sum / count) * 1e3).toFixed(1);
                console.log(`  ${labels.padEnd(72)} count=${count}  mean=${mean} ms  max=${(max * 1e3).toFixed(1)} ms`);
            }
        }
    }
}
