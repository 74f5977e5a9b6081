// Prints what the demo recorded: each trace as an indented tree of spans, each with its log records
// (the log-based events, such as a failed request's exception), then the histograms.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';

const kindNames = { [SpanKind.CLIENT]: 'CLIENT', [SpanKind.SERVER]: 'SERVER', [SpanKind.INTERNAL]: 'INTERNAL' };

// The attributes worth a glance, in the order they are printed.
const keyAttributes = [
    'url.full',
    'http.route',
    'http.response.status_code',
    'error.type',
    'tracewire.timeout.phase',
    'http.request.resend_count',
    'url.template',
    'http.response.body.size',
    // What the static plugin served (traced file serving).
    'file.path',
    'file.size',
    'tracewire.static.encoding',
    'tracewire.static.etag',
    'tracewire.static.range'
];

const durationMs = ([seconds, nanos]) => seconds * 1e3 + nanos / 1e6;

/** One tree per trace, roots first, children in start order; each span's log records under it. */
export function printTraces(spans, logRecords = []) {
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
    const recordsOf = new Map();
    for (const record of logRecords) {
        const spanId = record.spanContext?.spanId;
        recordsOf.set(spanId, [...(recordsOf.get(spanId) ?? []), record]);
    }

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
        printSpan(root, children, recordsOf, '', true);
    }
}

function printSpan(span, children, recordsOf, indent, last) {
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

    // The phases of a client span (its `tracewire.phase.*` attributes; the events mark the same moments on a timeline).
    const phases = Object.entries(span.attributes)
        .filter(([key]) => key.startsWith('tracewire.phase.'))
        .map(
            ([key, seconds]) =>
                `${key.slice('tracewire.phase.'.length, -'.duration'.length)} ${(seconds * 1e3).toFixed(1)} ms`
        );
    if (phases.length > 0) {
        console.log(`${detail}   phases: ${phases.join(', ')}`);
    }

    for (const event of span.events.filter(({ name }) => !name.startsWith('tracewire.'))) {
        console.log(`${detail}   event ${event.name}: ${event.attributes?.['exception.message'] ?? ''}`);
    }

    for (const record of recordsOf.get(span.spanContext().spanId) ?? []) {
        const message = record.attributes['exception.message'];
        console.log(
            `${detail}   log ${record.severityText} ${record.eventName}${message === undefined ? '' : `: ${message}`}`
        );
    }

    const own = children.get(span.spanContext().spanId) ?? [];
    own.forEach((child, index) => {
        printSpan(child, children, recordsOf, detail, index === own.length - 1);
    });
}

/**
 * Each metric with its points: count, mean and max of a histogram (in ms for durations, bytes for
 * sizes), the value of a counter or gauge.
 */
export function printMetrics(resourceMetrics) {
    for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
            const { name, unit } = metric.descriptor;
            console.log(`\n${name} (${unit})`);
            for (const point of metric.dataPoints) {
                const labels = Object.entries(point.attributes)
                    .filter(([key]) => key !== 'server.address' && key !== 'network.protocol.version')
                    .map(([key, value]) => `${key.replace(/^http\.(request\.|response\.|connection\.)?/, '')}=${value}`)
                    .join(' ');
                console.log(`  ${labels.padEnd(72)} ${describeValue(point.value, unit)}`);
            }
        }
    }
}

function describeValue(value, unit) {
    if (typeof value === 'number') {
        return `value=${value}`;
    }

    const { count, sum, max } = value;
    if (unit === 's') {
        return `count=${count}  mean=${((sum / count) * 1e3).toFixed(1)} ms  max=${(max * 1e3).toFixed(1)} ms`;
    }

    return `count=${count}  mean=${(sum / count).toFixed(0)} ${unit}  max=${max} ${unit}`;
}
