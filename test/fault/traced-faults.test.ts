import type { Socket } from 'node:net';
import { type Attributes, type Context, DiagLogLevel, diag, type Span } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
    InMemorySpanExporter,
    type ReadableSpan,
    SimpleSpanProcessor,
    type SpanProcessor,
    TracerProvider
} from '@opentelemetry/sdk-trace';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    METRIC_HTTP_CLIENT_REQUEST_DURATION
} from '@opentelemetry/semantic-conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTR_TIMEOUT_PHASE, instrumentClient } from '../../instrumentation/index.js';
import { Client } from '../../src/client/index.js';
import { seeded } from '../seeded.js';
import { head, type RawOrigin, startRawOrigin } from './raw-origin.js';

/**
 * The instrumentation under a seeded fault mix (a smaller cousin of fault-injection.test.ts, on the
 * span side): origins that reset, stall, cut bodies short and answer 503s the retry policy discards
 * before their end (chunked, or over the 64 KiB it drains), with timeouts, retries and redirects.
 * Whatever happens, every hop gets one span that starts and ends once, and a hop whose 4xx/5xx
 * response was discarded keeps its status as `error.type` on its span and duration point.
 * `TRACEWIRE_FAULT_SEED=<n>` replays another mix.
 */

const seed = Number(process.env.TRACEWIRE_FAULT_SEED ?? 28);
const requestCount = 1500;
const concurrency = 50;

const faults = [
    'ok',
    'ok-chunked',
    'reset-before-headers',
    'reset-mid-body',
    'stall',
    'stall-body',
    'short-body',
    'unavailable-once',
    'unavailable-chunked',
    'unavailable-large',
    'redirect'
] as const;
type Fault = (typeof faults)[number];

const seenIds = new Set<string>();
let origin: RawOrigin;
let base: string;

/** Answers `GET /<fault>/<id>/<size>[/<fault of the redirect target>]` on a raw socket. */
function answer(socket: Socket, path: string): void {
    const [, fault, id, sizeText, targetFault] = path.split('/') as [string, Fault, string, string, Fault | undefined];
    const body = Buffer.alloc(Number(sizeText), 'b');
    const firstTime = !seenIds.has(id);
    seenIds.add(id);
    switch (fault) {
        case 'ok':
            socket.write(head('200 OK', { 'content-length': body.length }));
            socket.write(body);
            return;
        case 'ok-chunked':
            socket.write(head('200 OK', { 'transfer-encoding': 'chunked' }));
            socket.write(`${body.length.toString(16)}\r\n`);
            socket.write(body);
            socket.write('\r\n0\r\n\r\n');
            return;
        case 'reset-before-headers':
            socket.resetAndDestroy();
            return;
        case 'reset-mid-body':
            socket.write(head('200 OK', { 'content-length': body.length }));
            socket.write(body.subarray(0, body.length >> 1), () => socket.resetAndDestroy());
            return;
        case 'stall':
            return;
        case 'stall-body':
            socket.write(head('200 OK', { 'content-length': body.length }));
            socket.write(body.subarray(0, body.length >> 1));
            return;
        case 'short-body':
            socket.write(head('200 OK', { 'content-length': body.length }));
            socket.end(body.subarray(0, body.length >> 1));
            return;
        case 'unavailable-once':
        case 'unavailable-chunked':
        case 'unavailable-large':
            if (!firstTime) {
                socket.write(head('200 OK', { 'content-length': body.length }));
                socket.write(body);
            } else if (fault === 'unavailable-once') {
                socket.write(head('503 Service Unavailable', { 'retry-after': 0, 'content-length': 4 }));
                socket.write('busy');
            } else if (fault === 'unavailable-chunked') {
                // Half a chunked body: the retry destroys it, or a caller without retries reads it to its end.
                socket.write(head('503 Service Unavailable', { 'retry-after': 0, 'transfer-encoding': 'chunked' }));
                socket.write('4\r\nbusy\r\n');
                setTimeout(() => socket.writable && socket.write('0\r\n\r\n'), 30);
            } else {
                const large = Buffer.alloc(70 * 1024, 'x');
                socket.write(head('503 Service Unavailable', { 'retry-after': 0, 'content-length': large.length }));
                socket.write(large);
            }
            return;
        case 'redirect':
            socket.write(
                head('302 Found', { location: `/${targetFault}/${id}-r/${body.length}`, 'content-length': 0 })
            );
            return;
    }
}

beforeAll(async () => {
    origin = await startRawOrigin(answer);
    base = origin.url;
});

afterAll(() => origin.close());

/** Counts the starts and ends the SDK sees, per span. */
class LifecycleCount implements SpanProcessor {
    readonly starts = new Map<string, number>();
    readonly ends = new Map<string, number>();
    onStart(span: Span, _parent: Context): void {
        const id = span.spanContext().spanId;
        this.starts.set(id, (this.starts.get(id) ?? 0) + 1);
    }
    onEnd(span: ReadableSpan): void {
        const id = span.spanContext().spanId;
        this.ends.set(id, (this.ends.get(id) ?? 0) + 1);
    }
    async forceFlush(): Promise<void> {}
    async shutdown(): Promise<void> {}
}

class PullReader extends MetricReader {
    protected override async onForceFlush(): Promise<void> {}
    protected override async onShutdown(): Promise<void> {}
}

describe('traced fault injection: a seeded mix, every span starts and ends once', () => {
    it(`${requestCount} requests: one span per hop, each ended once; discarded 4xx/5xx keep their status as error.type (seed ${seed})`, async () => {
        const exporter = new InMemorySpanExporter();
        const lifecycle = new LifecycleCount();
        const tracerProvider = new TracerProvider({
            spanProcessors: [new SimpleSpanProcessor({ exporter }), lifecycle]
        });
        const reader = new PullReader();
        const meterProvider = new MeterProvider({ readers: [reader] });
        // The SDK warns when an ended span is ended again or changed afterwards.
        const warnings: string[] = [];
        diag.setLogger(
            {
                error: (message) => warnings.push(message),
                warn: (message) => warnings.push(message),
                info: () => {},
                debug: () => {},
                verbose: () => {}
            },
            DiagLogLevel.WARN
        );

        const random = seeded(seed);
        const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
        const api = new Client().defaults({ events: true });
        const instrumentation = instrumentClient(api, { tracerProvider, meterProvider, phaseEvents: true });
        let hops = 0;
        const onPreRequest = () => {
            hops++;
        };
        api.events!.on('preRequest', onPreRequest);
        let next = 0;
        let unsettled = 0;
        const one = async (index: number) => {
            const fault = pick(faults);
            let path = `/${fault}/${index}/${1 + Math.floor(random() * 20_000)}`;
            if (fault === 'redirect') {
                path += `/${pick(faults.filter((candidate) => candidate !== 'redirect'))}`;
            }

            const options = {
                timeout: 300 + Math.floor(random() * 200),
                // A phase bound on some: its hop ends in that phase, with the phase on the span.
                ...(random() < 0.3 ? { timeouts: { response: 150 + Math.floor(random() * 150) } } : {}),
                redirects: 2,
                ...(random() < 0.7 ? { retry: { limit: 2, backoff: () => Math.floor(random() * 5) } } : {})
            };
            let watchdog: NodeJS.Timeout | undefined;
            const outcome = await Promise.race([
                api.get(`${base}${path}`, options).then(
                    () => 'settled',
                    () => 'settled'
                ),
                new Promise<string>((resolve) => {
                    watchdog = setTimeout(resolve, 15_000, 'hang');
                })
            ]);
            clearTimeout(watchdog);
            if (outcome === 'hang') {
                unsettled++;
            }
        };

        try {
            await Promise.all(
                Array.from({ length: concurrency }, async () => {
                    while (next < requestCount) {
                        await one(next++);
                    }
                })
            );

            const replay = `seed ${seed} (TRACEWIRE_FAULT_SEED=${seed} replays it)`;
            expect(unsettled, replay).toBe(0);
            // A response nobody reads keeps its span open until it closes; the helpers read or destroy every one.
            await expect.poll(() => exporter.getFinishedSpans().length, { message: replay }).toBe(hops);
            const spans = exporter.getFinishedSpans();
            expect(new Set(spans.map((span) => span.spanContext().spanId)).size, replay).toBe(hops);
            expect(
                [...lifecycle.starts.values()].every((count) => count === 1),
                replay
            ).toBe(true);
            expect(
                [...lifecycle.ends.values()].every((count) => count === 1),
                replay
            ).toBe(true);
            expect(lifecycle.ends.size, replay).toBe(lifecycle.starts.size);
            expect(warnings, replay).toEqual([]);
            // Each span's phase events run in time order, within the span (1 ms of clock rounding).
            const toMs = ([seconds, nanos]: [number, number]) => seconds * 1e3 + nanos / 1e6;
            const disordered = spans.filter((span) => {
                const times = span.events
                    .filter((event) => event.name.startsWith('tracewire.'))
                    .map((event) => toMs(event.time));
                return (
                    times.some((time, i) => i > 0 && time < times[i - 1]!) ||
                    times.some((time) => time < toMs(span.startTime) - 1 || time > toMs(span.endTime) + 1)
                );
            });
            expect(
                disordered.map((span) => span.attributes['url.full']),
                replay
            ).toEqual([]);
            // A hop cut by its response bound names it.
            const phaseTimedOut = spans.filter((span) => span.attributes[ATTR_TIMEOUT_PHASE] !== undefined);
            expect(phaseTimedOut.length, replay).toBeGreaterThan(0);
            expect(new Set(phaseTimedOut.map((span) => span.attributes[ATTR_TIMEOUT_PHASE])), replay).toEqual(
                new Set(['response'])
            );
            expect(new Set(phaseTimedOut.map((span) => span.attributes[ATTR_ERROR_TYPE])), replay).toEqual(
                new Set(['timeout'])
            );

            // Every 4xx/5xx hop, its response read, cut or discarded, names its status.
            const failed = spans.filter((span) => Number(span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]) >= 400);
            expect(failed.length, replay).toBeGreaterThan(50);
            if (process.env.TRACEWIRE_FAULT_REPORT) {
                console.log(`${hops} hops, ${failed.length} with a 4xx/5xx`);
            }

            expect(
                failed
                    .filter(
                        (span) =>
                            span.attributes[ATTR_ERROR_TYPE] !== String(span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE])
                    )
                    .map((span) => `${span.attributes['url.full']}: ${span.attributes[ATTR_ERROR_TYPE]}`),
                replay
            ).toEqual([]);
            const { resourceMetrics } = await reader.collect();
            const points = resourceMetrics.scopeMetrics
                .flatMap((scope) => scope.metrics)
                .filter((metric) => metric.descriptor.name === METRIC_HTTP_CLIENT_REQUEST_DURATION)
                .flatMap((metric) => metric.dataPoints as { attributes: Attributes }[]);
            const unavailable = points.filter((point) => point.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] === 503);
            expect(
                unavailable.map((point) => point.attributes[ATTR_ERROR_TYPE]),
                replay
            ).toEqual(['503']);
        } finally {
            api.events!.off('preRequest', onPreRequest);
            instrumentation.disable();
            api.agents.http.destroy();
            diag.disable();
            await tracerProvider.shutdown();
            await meterProvider.shutdown();
        }
    }, 120_000);
});
