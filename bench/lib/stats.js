// Small statistics and formatting helpers shared by every section of the benchmark.

export function median(values) {
    const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
    if (sorted.length === 0) {
        return Number.NaN;
    }

    const middle = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function geometricMean(values) {
    const finite = values.filter((value) => Number.isFinite(value) && value > 0);
    if (finite.length === 0 || finite.length !== values.length) {
        return Number.NaN;
    }

    return Math.exp(finite.reduce((sum, value) => sum + Math.log(value), 0) / finite.length);
}

/** Spread of the samples around their median, so a reader can tell a solid ratio from noise. */
export function relativeSpread(values) {
    const middle = median(values);
    const finite = values.filter((value) => Number.isFinite(value));
    if (finite.length < 2 || !middle) {
        return Number.NaN;
    }

    return (Math.max(...finite) - Math.min(...finite)) / middle;
}

/**
 * The order of the implementations in round `round`: rotated every round so none always runs first
 * (warm caches, a quiet moment on the shared machine) or last.
 */
export function rotate(items, round) {
    const shift = round % items.length;
    return [...items.slice(shift), ...items.slice(0, shift)];
}

export function formatNumber(value) {
    if (!Number.isFinite(value)) {
        return 'n/a';
    }

    if (value >= 100_000) {
        return `${(value / 1000).toFixed(0)}k`;
    }

    if (value >= 10_000) {
        return `${(value / 1000).toFixed(1)}k`;
    }

    if (value >= 100) {
        return value.toFixed(0);
    }

    return value.toFixed(value >= 10 ? 1 : 2);
}

export function formatRatio(value, digits = 2) {
    return Number.isFinite(value) ? `${value.toFixed(digits)}×` : 'n/a';
}

export function formatPercent(value) {
    return Number.isFinite(value) ? `±${(value * 50).toFixed(0)}%` : 'n/a';
}

/** A pass/fail cell: `n/a` when the ratio could not be measured (a component or a run missing). */
export function verdict(value, atLeast) {
    if (!Number.isFinite(value)) {
        return 'n/a';
    }

    return value >= atLeast ? 'pass' : '**FAIL**';
}

/**
 * A Markdown table with its columns padded to equal width, which is how the project's formatter
 * (Biome) writes tables: `bench/results.md` then passes `npm run lint` as it is generated.
 */
export function markdownTable(header, rows) {
    const widths = header.map((cell, column) =>
        Math.max(3, cell.length, ...rows.map((row) => String(row[column] ?? '').length))
    );
    const line = (cells) => `| ${cells.map((cell, column) => String(cell ?? '').padEnd(widths[column])).join(' | ')} |`;
    return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/**
 * The ratio A/B of two implementations measured in the same rounds: the median of the per-round
 * ratios, so a slow moment of the shared machine that hits one round cancels out within it.
 */
export function pairedRatio(samplesA, samplesB) {
    const ratios = [];
    for (let index = 0; index < Math.min(samplesA.length, samplesB.length); index++) {
        ratios.push(samplesA[index] / samplesB[index]);
    }

    return median(ratios);
}
