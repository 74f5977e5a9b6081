// Prints the self-time of each source line of the hottest functions in a .cpuprofile, for the
// files whose URL contains `filter` (default `dist/`).
// Usage: node bench/profile/lines.js <file.cpuprofile> [filter] [top=20]
import { readFileSync } from 'node:fs';

const [file, filter = 'dist/', top = '20'] = process.argv.slice(2);
if (!file) {
    throw new Error('Usage: node bench/profile/lines.js <file.cpuprofile> [filter] [top]');
}

const profile = JSON.parse(readFileSync(file, 'utf8'));
const ticksByLine = new Map();
for (const node of profile.nodes) {
    const { functionName, url } = node.callFrame;
    if (!url.includes(filter) || !node.positionTicks) {
        continue;
    }

    for (const { line, ticks } of node.positionTicks) {
        const key = `${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${line} (${functionName || 'anonymous'})`;
        ticksByLine.set(key, (ticksByLine.get(key) ?? 0) + ticks);
    }
}

const total = profile.samples.length;
for (const [key, ticks] of [...ticksByLine.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) {
    console.log(`${((100 * ticks) / total).toFixed(1).padStart(5)}%  ${key}`);
}
