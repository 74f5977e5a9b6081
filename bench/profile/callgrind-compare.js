// Compares two runs of client-instructions.js under callgrind with its cache and branch simulation,
// per request and per function: where one client's extra cycles go when both execute about the same
// instructions (instruction-cache misses, data-cache misses, mispredicted branches). JIT code is named
// through the perf map each run's `node --perf-basic-prof` wrote (/tmp/perf-<pid>.map; the V8 log it also
// leaves in the working directory, isolate-*-v8.log, is ignored by git).
//   valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --instr-atstart=no --separate-threads=yes \
//     --callgrind-out-file=/tmp/cg/raw/out.%p node --perf-basic-prof bench/profile/client-instructions.js node:http b 3000 15000 mixed
//   (the same with tracewire into /tmp/cg/tw)
//   node bench/profile/callgrind-compare.js /tmp/cg/raw /tmp/cg/tw [requests=3000] [rows=30]
// A run's figures move by about 1% from one process to the next (the JIT settles differently): compare
// the medians of three runs of each before trusting a difference of that size.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [before, after, requests = '3000', rows = '30'] = process.argv.slice(2);
if (after === undefined) {
    throw new Error('usage: callgrind-compare.js <run directory> <run directory> [requests] [rows]');
}

const events = ['Ir', 'I1mr', 'D1mr', 'Bcm', 'Bim'];
// A rough cost in cycles: an instruction each, a first-level miss served by the second level, a
// mispredicted branch's flushed pipeline. Only to rank the differences; the CPU time is the measure.
const weights = [1, 12, 10, 15, 15];

/** Cost per event per function name, from the event loop thread's file of one run. */
function load(directory) {
    const file = readdirSync(directory).find((name) => /^out\.\d+\.1-01$/.test(name));
    if (file === undefined) {
        throw new Error(`no event loop thread file (out.<pid>.1-01) in ${directory}`);
    }

    const pid = file.split('.')[1];
    const code = readFileSync(`/tmp/perf-${pid}.map`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
            const [start, size, ...name] = line.split(' ');
            return {
                start: Number.parseInt(start, 16),
                end: Number.parseInt(start, 16) + Number.parseInt(size, 16),
                name: name.join(' ')
            };
        });
    const annotated = execFileSync(
        'callgrind_annotate',
        ['--threshold=100', `--show=${events.join(',')}`, join(directory, file)],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }
    );
    const costs = new Map();
    // Five columns, each a count (with its share unless it is 0) or a dot for none, then the function.
    const row = /^\s*((?:(?:[\d,]+ \([^)]*\)|[\d,]+|\.)\s+){5})(.*)$/;
    for (const line of annotated.split('\n')) {
        const match = row.exec(line);
        if (match === null || match[2].includes('PROGRAM TOTALS')) {
            continue;
        }

        const values = [...match[1].matchAll(/([\d,]+)(?: \([^)]*\))?|\./g)].map((m) =>
            m[1] === undefined ? 0 : Number(m[1].replaceAll(',', ''))
        );
        const name = functionName(match[2].trim(), code);
        const sum = costs.get(name) ?? [0, 0, 0, 0, 0];
        values.forEach((value, i) => {
            sum[i] += value;
        });
        costs.set(name, sum);
    }

    return costs;
}

/**
 * A JIT address named from the perf map (the tiering marks dropped, so a function is one row); others
 * as callgrind names them. The code space is reused as code is collected: the map's latest entry that
 * holds the address is the code that ran in the measured requests, at the end of the run.
 */
function functionName(name, code) {
    const address = /^\?\?\?:0x([0-9a-f]+)/.exec(name);
    if (address === null) {
        return name
            .replace(/^\?\?\?:/, '')
            .replace(/\s*\[.*\]$/, '')
            .slice(0, 100);
    }

    const at = Number.parseInt(address[1], 16);
    const entry = code.findLast(({ start, end }) => start <= at && at < end);
    return entry === undefined
        ? '(JIT code not in the map)'
        : entry.name.replace(/^JS:[*+^~]?/, 'JS:').replace(/(file:\/\/)?\/\S*\//g, '');
}

const cost = (values) => values.reduce((total, value, i) => total + value * weights[i], 0);
const perRequest = (value) => value / Number(requests);
const [a, b] = [load(before), load(after)];
const totals = (costs) => [...costs.values()].reduce((sum, values) => sum.map((total, i) => total + values[i]));
const line = (label, values) =>
    `${label.padEnd(10)} ${events.map((event, i) => `${event} ${perRequest(values[i]).toFixed(0)}`).join('  ')}  ~cycles ${perRequest(cost(values)).toFixed(0)}`;
console.log('per request, event loop thread');
console.log(line('before', totals(a)));
console.log(line('after', totals(b)));
console.log('\nfunctions by the difference in ~cycles per request (after - before; values before → after):');
const none = [0, 0, 0, 0, 0];
const differences = [...new Set([...a.keys(), ...b.keys()])]
    .map((name) => ({ name, was: a.get(name) ?? none, is: b.get(name) ?? none }))
    .map((entry) => ({ ...entry, delta: perRequest(cost(entry.is) - cost(entry.was)) }))
    .sort((x, y) => y.delta - x.delta);
const show = ({ name, was, is, delta }) =>
    console.log(
        `${delta >= 0 ? '+' : ''}${delta.toFixed(0).padStart(6)}  ${events
            .slice(0, 4)
            .map((event, i) => `${event} ${perRequest(was[i]).toFixed(0)}→${perRequest(is[i]).toFixed(0)}`)
            .join(' ')}  ${name}`
    );
differences.slice(0, Number(rows)).forEach(show);
console.log('...');
differences.slice(-10).forEach(show);
