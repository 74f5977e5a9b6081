// Where the CPU of a request goes, by part: the self time of a `node --cpu-prof` profile summed per
// module of tracewire (dist/...), per package (node_modules/<package>), Node's internals and V8's own
// entries (garbage collector, program), in µs per request when the number of requests is given.
// Compare two profiles (the traced client and the plain one) to see which parts tracing adds to.
//   node --cpu-prof --cpu-prof-interval 100 --cpu-prof-dir=/tmp/prof bench/children/traced-client.js tracewire+otel
//   node bench/profile/parts.js /tmp/prof/<file>.cpuprofile [requests=22000] [rows=30]
// (bench/children/traced-client.js run by hand makes 2,000 requests of warm-up, then 20,000.)
import { readFileSync } from 'node:fs';

const [file, requests = '22000', rows = '30'] = process.argv.slice(2);
if (!file) {
    throw new Error('usage: node bench/profile/parts.js <file.cpuprofile> [requests] [rows]');
}

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const intervals = profile.timeDeltas;
const selfMicros = new Map();
for (let i = 0; i < profile.samples.length; i++) {
    const node = nodes.get(profile.samples[i]);
    const part = partOf(node.callFrame);
    // Each sample stands for the time until the next one.
    const micros = intervals[i + 1] ?? 0;
    selfMicros.set(part, (selfMicros.get(part) ?? 0) + micros);
}

/** The part a frame belongs to: a tracewire module, a package, Node's internals or V8's entries. */
function partOf({ functionName, url }) {
    if (url === '') {
        return functionName.startsWith('(') ? functionName : '(native)';
    }

    const dist = /\/dist\/(.+)$/.exec(url);
    if (dist !== null && !url.includes('/node_modules/')) {
        return `tracewire ${dist[1]}`;
    }

    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (pkg !== null) {
        return pkg[1];
    }

    if (url.startsWith('node:')) {
        return `node ${url.slice(5).split('/')[0]}`;
    }

    return url.replace(/^.*\/bench\//, 'bench/');
}

const busy = [...selfMicros].filter(([part]) => part !== '(idle)').reduce((sum, [, micros]) => sum + micros, 0);
const perRequest = (micros) => (micros / Number(requests)).toFixed(2).padStart(7);
console.log(`${file}: ${(busy / 1000).toFixed(0)} ms busy, ${perRequest(busy)} µs per request`);
for (const [part, micros] of [...selfMicros].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
    console.log(`${perRequest(micros)} µs  ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${part}`);
}
