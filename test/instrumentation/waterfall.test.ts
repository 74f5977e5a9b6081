import { describe, expect, it } from 'vitest';
import { renderWaterfall, renderWaterfalls } from '../../examples/waterfall.js';
import type { TimingPhases, Timings } from '../../src/client/contract/timings.js';

/** Timings as the client records them, from the moments relative to `start` (ms). */
function timingsAt(
    moments: Partial<Record<Exclude<keyof Timings, 'phases'>, number>>,
    start = 1_700_000_000_000
): Timings {
    const at = (name: keyof typeof moments) => (moments[name] === undefined ? undefined : start + moments[name]!);
    const t = {
        start,
        socket: at('socket'),
        lookup: at('lookup'),
        connect: at('connect'),
        secureConnect: at('secureConnect'),
        upload: at('upload'),
        response: at('response'),
        end: at('end'),
        error: at('error'),
        abort: at('abort')
    };
    const span = (from: number | undefined, to: number | undefined) =>
        from === undefined || to === undefined ? undefined : to - from;
    const phases: TimingPhases = {
        wait: span(t.start, t.socket),
        dns: span(t.socket, t.lookup),
        tcp: span(t.lookup ?? t.socket, t.connect),
        tls: span(t.connect, t.secureConnect),
        request: span(t.secureConnect ?? t.connect ?? t.socket, t.upload),
        firstByte: span(t.upload, t.response),
        download: span(t.response, t.end),
        total: span(t.start, t.end ?? t.error ?? t.abort)
    };
    return { ...t, phases };
}

const bar = (line: string) => /█+/.exec(line);

describe('the demo waterfall (examples/waterfall.js)', () => {
    it('draws each phase a new TLS connection had, its bar where the phase began, in order', () => {
        const lines = renderWaterfall(
            timingsAt({ socket: 0, lookup: 10, connect: 20, secureConnect: 40, upload: 40, response: 80, end: 100 }),
            { label: 'a new connection', width: 50 }
        );
        expect(lines[0]).toBe('a new connection  total 100 ms');
        const byPhase = new Map(lines.slice(1).map((line) => [line.trim().split(' ')[0]!, line]));
        expect([...byPhase.keys()]).toEqual(['wait', 'dns', 'tcp', 'tls', 'request', 'firstByte', 'download']);
        // 2 ms per column: dns starts at column 0 (10 wide), tcp at 5 (5 wide), tls at 10 (10 wide), firstByte at 20 (20 wide).
        expect(bar(byPhase.get('dns')!)).toMatchObject({ 0: '█'.repeat(5) });
        const columnOf = (phase: string) => bar(byPhase.get(phase)!)!.index - '  '.length - 10;
        expect(columnOf('dns')).toBe(0);
        expect(columnOf('tcp')).toBe(5);
        expect(columnOf('tls')).toBe(10);
        expect(columnOf('firstByte')).toBe(20);
        expect(bar(byPhase.get('firstByte')!)![0]).toHaveLength(20);
        expect(columnOf('download')).toBe(40);
        expect(byPhase.get('firstByte')).toMatch(/ 40 ms$/);
        // A phase of no time still shows where it happened.
        expect(bar(byPhase.get('request')!)![0]).toHaveLength(1);
        expect(byPhase.get('request')).toMatch(/ 0\.0 ms$/);
    });

    it('marks the phases a reused plain-http connection did not have with -', () => {
        const lines = renderWaterfall(timingsAt({ socket: 0.2, upload: 0.5, response: 3, end: 3.5 }), {
            label: 'a reused connection'
        });
        const skipped = lines.filter((line) => line.trimEnd().endsWith('-')).map((line) => line.trim().split(' ')[0]);
        expect(skipped).toEqual(['dns', 'tcp', 'tls']);
        expect(lines[0]).toBe('a reused connection  total 3.5 ms');
    });

    it('puts several hops on one scale: the longest spans the width, a short one a few columns', () => {
        const lines = renderWaterfalls(
            [
                { label: 'fast', timings: timingsAt({ socket: 0, upload: 1, response: 9, end: 10 }) },
                { label: 'a slow download', timings: timingsAt({ socket: 0, upload: 1, response: 10, end: 400 }) }
            ],
            { width: 40 }
        );
        expect(lines[0]).toBe('fast             total 10 ms');
        const downloads = lines.filter((line) => line.trim().startsWith('download'));
        expect(bar(downloads[0]!)![0]).toHaveLength(1);
        expect(bar(downloads[1]!)![0].length).toBeGreaterThanOrEqual(38);
        // Every line of the waterfall has the same bar area, so the durations line up.
        const barArea = (line: string) => line.replace(/ [\d.]+ ms$| -$/, '').length;
        expect(
            new Set(
                lines
                    .slice(1)
                    .filter((line) => line.startsWith('  '))
                    .map(barArea)
            ).size
        ).toBe(1);
    });
});
