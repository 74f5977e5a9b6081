// tracing: the CPU time that tracing adds to each client request, tracewire's `instrumentClient`
// against `@opentelemetry/instrumentation-http` on raw node:http, on the same SDK set-up (context
// manager, W3C propagator, BatchSpanProcessor, MeterProvider). Four processes, one per variant
// (bench/children/traced-client.js), take turns against one keep-alive origin.
import { ask, startChild, stopChild } from '../lib/processes.js';
import { formatNumber, formatRatio, markdownTable, median, rotate } from '../lib/stats.js';

// `tracewire+sdk` and `tracewire+sdk-floor` split the added cost: the SDK set-up alone (its context
// manager's async hooks run for every promise of a request), then the SDK calls that make the same
// span and metric point by hand; what instrumentClient adds above that floor is its own work.
const variants = ['tracewire', 'tracewire+sdk', 'tracewire+sdk-floor', 'tracewire+otel', 'node:http', 'node:http+otel'];
const concurrency = 50;
const target = 0.4;

export async function runTracingSection({ quick, log }) {
    const rounds = quick ? 2 : 5;
    const count = quick ? 2500 : 10_000;
    const origin = await startChild('../servers/origin.js');
    const children = {};
    try {
        for (const variant of variants) {
            children[variant] = await startChild('../children/traced-client.js', [variant, String(origin.port)]);
        }

        for (const variant of variants) {
            await ask(children[variant].child, { type: 'run', count: Math.round(count / 4), concurrency });
        }

        // samples[variant] = [{ cpuMicros, seconds }] per round.
        const samples = Object.fromEntries(variants.map((variant) => [variant, []]));
        for (let round = 0; round < rounds; round++) {
            for (const variant of rotate(variants, round)) {
                samples[variant].push(await ask(children[variant].child, { type: 'run', count, concurrency }));
            }

            log(`  round ${round + 1} of ${rounds} done`);
        }

        const spans = {};
        for (const variant of ['tracewire+otel', 'node:http+otel']) {
            spans[variant] = (await ask(children[variant].child, { type: 'spans' })).spans;
        }

        return report(samples, spans, { rounds, count });
    } finally {
        for (const handle of Object.values(children)) {
            await stopChild(handle);
        }

        await stopChild(origin);
    }
}

function report(samples, spans, { rounds, count }) {
    const perRequest = (variant) => samples[variant].map(({ cpuMicros }) => cpuMicros / count);
    const rate = (variant) => median(samples[variant].map(({ seconds }) => count / seconds));
    const added = (traced, plain) => {
        const a = perRequest(traced);
        const b = perRequest(plain);
        return a.map((value, index) => value - b[index]);
    };
    const tracewireAdded = added('tracewire+otel', 'tracewire');
    const otelAdded = added('node:http+otel', 'node:http');
    const ratios = tracewireAdded.map((value, index) => value / otelAdded[index]);
    const ratio = median(ratios);
    const sdkAdded = added('tracewire+sdk', 'tracewire');
    const floorAdded = added('tracewire+sdk-floor', 'tracewire');
    const floorRatio = median(floorAdded.map((value, index) => value / otelAdded[index]));
    const aboveFloor = added('tracewire+otel', 'tracewire+sdk-floor');
    const pass = Number.isFinite(ratio) ? (ratio <= target ? 'pass' : '**FAIL**') : 'n/a';

    const table = markdownTable(
        ['variant', 'req/s', 'client CPU µs/req', 'added by tracing, µs/req', 'spans exported'],
        [
            ['tracewire', formatNumber(rate('tracewire')), formatNumber(median(perRequest('tracewire'))), '', ''],
            [
                'tracewire, SDK set up, nothing instrumented',
                formatNumber(rate('tracewire+sdk')),
                formatNumber(median(perRequest('tracewire+sdk'))),
                `+${formatNumber(median(sdkAdded))}`,
                ''
            ],
            [
                'tracewire + the same span and metric made by hand (the SDK floor)',
                formatNumber(rate('tracewire+sdk-floor')),
                formatNumber(median(perRequest('tracewire+sdk-floor'))),
                `+${formatNumber(median(floorAdded))}`,
                ''
            ],
            [
                'tracewire + `instrumentClient`',
                formatNumber(rate('tracewire+otel')),
                formatNumber(median(perRequest('tracewire+otel'))),
                `**+${formatNumber(median(tracewireAdded))}**`,
                String(spans['tracewire+otel'])
            ],
            ['raw node:http', formatNumber(rate('node:http')), formatNumber(median(perRequest('node:http'))), '', ''],
            [
                'raw node:http + `@opentelemetry/instrumentation-http`',
                formatNumber(rate('node:http+otel')),
                formatNumber(median(perRequest('node:http+otel'))),
                `**+${formatNumber(median(otelAdded))}**`,
                String(spans['node:http+otel'])
            ]
        ]
    );
    const targetTable = markdownTable(
        ['target', 'measured', 'required', 'result'],
        [
            [
                "CPU added per request: tracewire `instrumentClient` / instrumentation-http's",
                formatRatio(ratio),
                `≤ ${formatRatio(target)}`,
                pass
            ],
            [
                "(floor) the SDK's own cost for the same span and metric / instrumentation-http's added cost",
                formatRatio(floorRatio),
                '',
                'info'
            ],
            ['(ours) instrumentClient above that floor, µs/req', `+${formatNumber(median(aboveFloor))}`, '', 'info']
        ]
    );
    const note = [
        `${formatNumber(count)} GETs of 100 B, concurrency ${concurrency}, per variant and round; medians of ${rounds} interleaved rounds`,
        'after a warm-up; each variant in its own process (a context manager and the patched `http` module are',
        "process-wide). CPU µs/req: the client process's user + system time (process.cpuUsage) per request. The `+otel`",
        'variants share one set-up: AsyncLocalStorageContextManager, W3C propagator, BatchSpanProcessor to an exporter',
        "that drops the spans, MeterProvider with a periodic reader; each turns the context manager's async hooks on at",
        "start, as a service's first `context.with()` does. The ratio is the median of the per-round ratios of the",
        'two added costs. The floor variant makes, around each request of the plain client, the span (same name, kind and',
        'eight attributes, W3C context injected into the sent headers) and the duration point (same five attributes) that',
        '`instrumentClient` emits, with no event pipeline or listener: no instrumentation of this client emitting them can',
        'cost less.'
    ].join('\n');
    return {
        title: 'tracing',
        markdown: `${targetTable}\n\n${table}\n\n${note}`,
        failures: pass === 'pass' ? 0 : 1
    };
}
