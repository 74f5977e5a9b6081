// Instructions per request of each function of one callgrind run's event loop thread, inclusive (with what it
// calls) and self, JIT code named through the perf map the run's `node --perf-basic-prof` wrote: where a traced
// request's instructions go, listener by listener (the instrumentation's `onPreRequest`, the SDK's `startSpan`...).
//   valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --callgrind-out-file=/tmp/cg/otel/out.%p \
//     node --perf-basic-prof bench/profile/tracing-instructions.js tracewire+otel 3000 15000
//   node bench/profile/callgrind-functions.js /tmp/cg/otel [requests=3000] [rows=40] [filter]
// `filter` keeps the functions whose name or file contains it (`instrumentation/`, `@opentelemetry`). V8 inlines
// small functions into their callers, so an inclusive count is that of the function with what it inlined.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [directory, requests = '3000', rows = '40', filter = ''] = process.argv.slice(2);
if (directory === undefined) {
    throw new Error('usage: node bench/profile/callgrind-functions.js <run directory> [requests] [rows] [filter]');
}

const file = readdirSync(directory).find((name) => /^out\.\d+\.1-01$/.test(name));
if (file === undefined) {
    throw new Error(`no event loop thread file (out.<pid>.1-01) in ${directory}`);
}

const code = readFileSync(`/tmp/perf-${file.split('.')[1]}.map`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
        const [start, size, ...name] = line.split(' ');
        const at = Number.parseInt(start, 16);
        return { start: at, end: at + Number.parseInt(size, 16), name: name.join(' ') };
    });

/** Instructions per function name, from callgrind_annotate's listing (inclusive or self). */
function costs(inclusive) {
    const listing = execFileSync(
        'callgrind_annotate',
        [`--inclusive=${inclusive ? 'yes' : 'no'}`, '--threshold=100', join(directory, file)],
        { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }
    );
    const byName = new Map();
    for (const line of listing.split('\n')) {
        const match = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$/.exec(line);
        if (match === null || match[2].includes('PROGRAM TOTALS')) {
            continue;
        }

        const name = nameOf(match[2].trim());
        byName.set(name, (byName.get(name) ?? 0) + Number(match[1].replaceAll(',', '')));
    }

    return byName;
}

/** A JIT address named from the perf map (its latest code at that address, the tiering mark dropped). */
function nameOf(name) {
    const address = /^\?\?\?:0x([0-9a-f]+)/.exec(name);
    if (address === null) {
        return name.replace(/^\?\?\?:/, '').replace(/\s*\[.*\]$/, '');
    }

    const at = Number.parseInt(address[1], 16);
    const entry = code.findLast(({ start, end }) => start <= at && at < end);
    return entry === undefined
        ? '(JIT code not in the map)'
        : entry.name.replace(/^JS:[*+^~]?'?/, '').replace(/(file:\/\/)?\/\S*\/(dist|node_modules)\//g, '$2/');
}

const inclusive = costs(true);
const self = costs(false);
const perRequest = (value) => (value / Number(requests)).toFixed(0).padStart(8);
console.log('instructions per request: inclusive, self, function');
for (const [name, value] of [...inclusive]
    .filter(([name]) => name.includes(filter))
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(rows))) {
    console.log(`${perRequest(value)} ${perRequest(self.get(name) ?? 0)}  ${name}`);
}
