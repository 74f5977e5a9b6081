// Where the CPU of a request goes, by part: the self time of a `node --cpu-prof` profile summed per
// module of tracewire (dist/...), per package (node_modules/<package>), Node's internals and V8's own
// entries (garbage collector, program), in µs per request when the number of requests is given.
// Compare two profiles (the traced client and the plain one) to see which parts tracing adds to.
//   node --cpu-prof --cpu-prof-interval 100 --cpu-prof-dir=/tmp/prof bench/children/traced-client.js tracewire+otel
//   node bench/profile/parts.js /tmp/prof/<file>.cpuprofile [requests=22000] [rows=30]
// (bench/children/traced-client.js run by hand makes 2,000 requests of warm-up, then 20,000.)
import { readFileSync } from 'node:fs';
import { selfMicrosByPart } from '../lib/profile-parts.js';

const [file, requests = '22000', rows = '30'] = process.argv.slice(2);
if (!file) {
    throw new Error('usage: node bench/profile/parts.js <file.cpuprofile> [requests] [rows]');
}

const selfMicros = selfMicrosByPart(JSON.parse(readFileSync(file, 'utf8')));
const busy = [...selfMicros].filter(([part]) => part !== '(idle)').reduce((sum, [, micros]) => sum + micros, 0);
const perRequest = (micros) => (micros / Number(requests)).toFixed(2).padStart(7);
console.log(`${file}: ${(busy / 1000).toFixed(0)} ms busy, ${perRequest(busy)} µs per request`);
for (const [part, micros] of [...selfMicros].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
    console.log(`${perRequest(micros)} µs  ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${part}`);
}
