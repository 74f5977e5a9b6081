// Where the time of a cache row goes, by part, beside other rows: each round runs every row once, in turn, alone
// in a fresh process (cache-calls.js with V8's profiler on over the measured calls), and the table gives each
// part's median self time per call over the rounds, with each row's rate and CPU per call (which include the
// profiler's own cost). The profiler samples by the wall clock: a part's time also holds its thread's waits
// in it (lib/profile-parts.js), so the CPU line, not the parts' sum, is what the process paid.
//   node bench/profile/cache-parts.js [rounds=4] [count=20000] [warm-up=25000] [rows=floor,conditional,revalidated,undici8-revalidated]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selfMicrosByPart } from '../lib/profile-parts.js';
import { median, rotate } from '../lib/stats.js';

const [rounds = '4', count = '20000', warmUp = '25000', rowList = 'floor,conditional,revalidated,undici8-revalidated'] =
    process.argv.slice(2);
const rows = rowList.split(',');
const script = fileURLToPath(new URL('./cache-calls.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cache-parts-'));
const runs = Object.fromEntries(rows.map((row) => [row, []]));
try {
    for (let round = 0; round < Number(rounds); round++) {
        for (const row of rotate(rows, round)) {
            const file = join(dir, `${row}-${round}.cpuprofile`);
            const line = execFileSync(process.execPath, [script, row, count, warmUp, '', `cpuprof:${file}`], {
                encoding: 'utf8'
            });
            const [, rate, cpu] = /: (\d+) calls\/s, ([\d.]+) µs CPU per call/.exec(line);
            runs[row].push({
                rate: Number(rate),
                cpu: Number(cpu),
                parts: selfMicrosByPart(JSON.parse(readFileSync(file, 'utf8')), true)
            });
            console.error(`round ${round + 1}: ${line.trim()}`);
        }
    }
} finally {
    rmSync(dir, { recursive: true, force: true });
}

const perCall = (micros) => micros / Number(count);
const medianOf = (row, pick) => median(runs[row].map(pick));
const busy = (parts) => [...parts].filter(([part]) => part !== '(idle)').reduce((sum, [, micros]) => sum + micros, 0);
const parts = [...new Set(rows.flatMap((row) => runs[row].flatMap((run) => [...run.parts.keys()])))];
const table = parts
    .map((part) => [part, rows.map((row) => perCall(medianOf(row, (run) => run.parts.get(part) ?? 0)))])
    .filter(([, values]) => Math.max(...values) >= 0.2)
    .sort((a, b) => Math.max(...b[1]) - Math.max(...a[1]));
const cell = (value, digits = 1) => value.toFixed(digits).padStart(21);
console.log(
    `${rounds} rounds of ${count} calls after ${warmUp}, medians; µs per call`.padEnd(44) +
        rows.map((row) => row.padStart(21)).join('')
);
console.log(
    'calls/s'.padEnd(44) +
        rows
            .map((row) =>
                cell(
                    medianOf(row, (run) => run.rate),
                    0
                )
            )
            .join('')
);
console.log('CPU, every thread'.padEnd(44) + rows.map((row) => cell(medianOf(row, (run) => run.cpu))).join(''));
console.log(
    'event loop, busy (profile)'.padEnd(44) +
        rows.map((row) => cell(perCall(medianOf(row, (run) => busy(run.parts))))).join('')
);
for (const [part, values] of table) {
    console.log(`  ${part}`.slice(0, 44).padEnd(44) + values.map((value) => cell(value, 2)).join(''));
}
