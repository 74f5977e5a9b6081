// Draws where a hop's time went (its `timings`, README "Timings") as a waterfall of text lines: one
// line per phase the hop had, its bar placed at the moment the phase began, on a common time scale.
// Pure: timings in, lines out; `npm start` prints them for a few of its requests.

/** The phases in the order they happen, each with the moments that bound it. */
const phases = [
    { name: 'wait', from: (t) => t.start, to: (t) => t.socket },
    { name: 'dns', from: (t) => t.socket, to: (t) => t.lookup },
    { name: 'tcp', from: (t) => t.lookup ?? t.socket, to: (t) => t.connect },
    { name: 'tls', from: (t) => t.connect, to: (t) => t.secureConnect },
    { name: 'request', from: (t) => t.secureConnect ?? t.connect ?? t.socket, to: (t) => t.upload },
    { name: 'firstByte', from: (t) => t.upload, to: (t) => t.response },
    { name: 'download', from: (t) => t.response, to: (t) => t.end }
];

/**
 * The waterfall of one hop. A phase the hop did not have (a reused connection has no dns, tcp or
 * tls; plain http no tls) is listed as `-`, so the reader sees what was skipped. `width` is the
 * number of columns the whole hop spans; `scale` (ms per column) lets several hops share one scale.
 */
export function renderWaterfall(timings, { label = '', width = 40, scale } = {}) {
    const total = timings.phases.total ?? 0;
    const perColumn = scale ?? (total > 0 ? total / width : 1);
    const lines = [`${label}${label === '' ? '' : '  '}total ${formatMs(total)}`];
    for (const phase of phases) {
        const duration = timings.phases[phase.name];
        const from = phase.from(timings);
        if (duration === undefined || from === undefined) {
            lines.push(`  ${phase.name.padEnd(10)}${' '.repeat(width + 1)}-`);
            continue;
        }

        const offset = Math.min(width - 1, Math.max(0, Math.floor((from - timings.start) / perColumn)));
        // Every phase that happened gets at least one column, however short.
        const length = Math.min(width - offset, Math.max(1, Math.round(duration / perColumn)));
        const bar = `${' '.repeat(offset)}${'█'.repeat(length)}`.padEnd(width);
        lines.push(`  ${phase.name.padEnd(10)}${bar} ${formatMs(duration)}`);
    }

    return lines;
}

/**
 * The waterfalls of several hops on one time scale (the longest hop spans `width` columns), so a
 * slow server and a slow download can be compared by eye.
 */
export function renderWaterfalls(hops, { width = 40 } = {}) {
    const longest = Math.max(...hops.map(({ timings }) => timings.phases.total ?? 0));
    const scale = longest > 0 ? longest / width : 1;
    const labelWidth = Math.max(...hops.map(({ label }) => label.length));
    return hops.flatMap(({ label, timings }) =>
        renderWaterfall(timings, { label: label.padEnd(labelWidth), width, scale })
    );
}

function formatMs(ms) {
    return ms < 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(0)} ms`;
}
