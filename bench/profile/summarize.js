// Prints the top self-time functions of a .cpuprofile written by `node --cpu-prof`.
// Usage: node bench/profile/summarize.js <file.cpuprofile> [top=20]
import { readFileSync } from 'node:fs';

const [file, top = '20'] = process.argv.slice(2);
if (!file) {
    throw new Error('Usage: node bench/profile/summarize.js <file.cpuprofile> [top]');
}

const profile = JSON.parse(readFileSync(file, 'utf8'));
const totalMicros = profile.endTime - profile.startTime;
const sampleMicros = totalMicros / Math.max(1, profile.samples.length);
const selfByFunction = new Map();
for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + (node.hitCount ?? 0));
}

const totalHits = profile.samples.length;
const rows = [...selfByFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(top));
console.log(`${file}: ${totalHits} samples, ~${sampleMicros.toFixed(0)} µs each`);
for (const [name, hits] of rows) {
    console.log(`${((100 * hits) / totalHits).toFixed(1).padStart(5)}%  ${name}`);
}
