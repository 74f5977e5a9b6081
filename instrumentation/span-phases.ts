import type { Span } from '@opentelemetry/api';
import type { TimeoutPhase, TimingPhases, Timings } from '../src/client/index.js';

/*
 * A hop's phases on its span (README "Phases on client spans"). The semantic conventions have no
 * HTTP client phase attributes or events yet, so both forms are given, under our own namespace: one
 * attribute per phase duration (what attribute queries filter and aggregate on), and with
 * `phaseEvents` an event at each moment of the hop's `timings` (log-events.ts: a log record, and with
 * `spanEvents` a span event, which Jaeger and Tempo draw on the span's timeline).
 */

/** The event at each moment a hop's `timings` record, in the order they happen. */
export const PHASE_EVENTS = {
    socket: 'tracewire.socket',
    lookup: 'tracewire.lookup',
    connect: 'tracewire.connect',
    secureConnect: 'tracewire.secure_connect',
    upload: 'tracewire.upload',
    response: 'tracewire.response',
    end: 'tracewire.end'
} as const satisfies Partial<Record<keyof Timings, string>>;

/** The attribute of each phase of `timings.phases`, in seconds as the conventions measure durations (the span's own length is the total). */
export const PHASE_ATTRIBUTES = {
    wait: 'tracewire.phase.wait.duration',
    dns: 'tracewire.phase.dns.duration',
    tcp: 'tracewire.phase.tcp.duration',
    tls: 'tracewire.phase.tls.duration',
    request: 'tracewire.phase.request.duration',
    firstByte: 'tracewire.phase.first_byte.duration',
    download: 'tracewire.phase.download.duration'
} as const satisfies Partial<Record<keyof TimingPhases, string>>;

/** The phase whose bound ran out (`lookup`, `connect`, `secureConnect`, `send`, `response` or `deadline`), on the span of the hop that timed out. */
export const ATTR_TIMEOUT_PHASE = 'tracewire.timeout.phase';

/**
 * Puts on the span the phases the hop had; a phase it did not have adds nothing. Phase by phase rather
 * than a loop over `PHASE_ATTRIBUTES`, whose entries cost an iterator and a destructuring per phase on
 * every traced hop.
 */
export function recordPhases(span: Span, timings: Timings): void {
    const phases = timings.phases;
    recordPhase(span, PHASE_ATTRIBUTES.wait, phases.wait);
    recordPhase(span, PHASE_ATTRIBUTES.dns, phases.dns);
    recordPhase(span, PHASE_ATTRIBUTES.tcp, phases.tcp);
    recordPhase(span, PHASE_ATTRIBUTES.tls, phases.tls);
    recordPhase(span, PHASE_ATTRIBUTES.request, phases.request);
    recordPhase(span, PHASE_ATTRIBUTES.firstByte, phases.firstByte);
    recordPhase(span, PHASE_ATTRIBUTES.download, phases.download);
}

/** A phase's duration in seconds, as the conventions measure durations (`timings` are in milliseconds). */
function recordPhase(span: Span, name: string, milliseconds: number | undefined): void {
    if (milliseconds !== undefined) {
        span.setAttribute(name, milliseconds / 1000);
    }
}

const timeoutPhases = new Set<string>(['lookup', 'connect', 'secureConnect', 'send', 'response', 'deadline']);

/** The phase named by a phase timeout or the deadline (`err.data.phase`); undefined for any other failure. */
export function timeoutPhaseOf(err: Error | undefined): TimeoutPhase | undefined {
    const phase = (err as { data?: { phase?: unknown } } | undefined)?.data?.phase;
    return typeof phase === 'string' && timeoutPhases.has(phase) ? (phase as TimeoutPhase) : undefined;
}
