// `npm run bench`: every benchmark in one run (the client against its peers, static serving, the cost of
// tracing, the errors, memory), printed as Markdown tables of ratios and written to bench/results.md (a quick or
// partial run: bench/results.partial.md, not committed). Flags: `--quick` (shorter runs, for a first look),
// `--only=client|http2|cache-redis|static|tracing|errors|memory` (comma-separated) and `--baseline=<dir>` (the client,
// static and tracing sections also run the build of another checkout, `tracewire@baseline`, interleaved beside this
// one) and `--rounds=N` (the client, http2 and tracing sections' measured rounds, for a comparison that needs more than the default 5).
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCacheRedisSection } from './sections/cache-redis.js';
import { runClientSection } from './sections/client.js';
import { runErrorsSection } from './sections/errors.js';
import { runHttp2Section } from './sections/http2.js';
import { runMemorySection } from './sections/memory.js';
import { runStaticSection } from './sections/static.js';
import { runTracingSection } from './sections/tracing.js';

const sections = {
    client: { heading: 'Client', run: runClientSection },
    http2: { heading: 'HTTP/2', run: runHttp2Section },
    'cache-redis': { heading: 'Cache on Redis', run: runCacheRedisSection },
    static: { heading: 'Static files', run: runStaticSection },
    tracing: { heading: 'Tracing cost', run: runTracingSection },
    errors: { heading: 'Errors', run: runErrorsSection },
    memory: { heading: 'Memory', run: runMemorySection }
};

function parseFlags(argv) {
    const flags = { quick: false, only: Object.keys(sections), baseline: undefined, rounds: undefined };
    for (const argument of argv) {
        if (argument === '--quick') {
            flags.quick = true;
        } else if (argument.startsWith('--baseline=')) {
            flags.baseline = path.resolve(argument.slice('--baseline='.length));
        } else if (argument.startsWith('--rounds=')) {
            const rounds = Number(argument.slice('--rounds='.length));
            if (!Number.isInteger(rounds) || rounds < 1) {
                throw new Error(`--rounds takes a positive integer, got ${argument}`);
            }

            flags.rounds = rounds;
        } else if (argument.startsWith('--only=')) {
            const names = argument.slice('--only='.length).split(',').filter(Boolean);
            const unknown = names.filter((name) => !(name in sections));
            if (unknown.length > 0 || names.length === 0) {
                throw new Error(`--only takes ${Object.keys(sections).join('|')} (comma-separated), got ${argument}`);
            }

            flags.only = names;
        } else {
            throw new Error(
                `Unknown flag ${argument}: use --quick, --only=${Object.keys(sections).join('|')}, --baseline=<dir> and --rounds=N`
            );
        }
    }

    return flags;
}

/** The library built in another checkout (`npm ci && npm run build` there), for the client and tracing sections to compare against. */
function loadBaseline(directory) {
    const entry = path.join(directory, 'dist/src/index.js');
    if (!existsSync(entry)) {
        throw new Error(
            `--baseline=${directory}: no ${entry}; build it first (cd ${directory} && npm ci && npm run build)`
        );
    }

    // The client and tracing sections load it in processes of their own.
    return { directory };
}

function log(line) {
    process.stderr.write(`${line}\n`);
}

async function main() {
    const flags = parseFlags(process.argv.slice(2));
    const baseline = flags.baseline === undefined ? undefined : loadBaseline(flags.baseline);
    const started = Date.now();
    const cpus = os.cpus();
    const machine = `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${os.platform()} ${os.release()}`;
    log(
        `tracewire bench${flags.quick ? ' (quick)' : ''}${baseline === undefined ? '' : `, baseline ${baseline.directory}`}`
    );

    const parts = [];
    let failures = 0;
    for (const name of Object.keys(sections)) {
        if (!flags.only.includes(name)) {
            continue;
        }

        const section = sections[name];
        const sectionStart = Date.now();
        log(`\n== ${section.heading}`);
        const result = await section.run({ quick: flags.quick, baseline, rounds: flags.rounds, log });
        const seconds = ((Date.now() - sectionStart) / 1000).toFixed(0);
        log(`   (${seconds} s)`);
        failures += result.failures ?? 0;
        parts.push(`### ${section.heading}\n\n${result.markdown}\n`);
    }

    const total = ((Date.now() - started) / 1000).toFixed(0);
    const header = [
        `Run of ${new Date().toISOString()}${flags.quick ? ' with `--quick`' : ''} on ${machine}.`,
        `${baseline === undefined ? '' : `Baseline (\`tracewire@baseline\`): the build in ${baseline.directory}. `}Total time ${total} s.`,
        'Ratios are of medians of interleaved rounds (A B A B, order rotated each round) in one run; the',
        'machine is shared, so the absolute figures are noisy and the ratios are what count.'
    ].join('\n');
    const markdown = `${header}\n\n${parts.join('\n')}`;
    process.stdout.write(`\n${markdown}`);
    // bench/results.md holds the last full run: a quick, partial or baseline one must not replace it.
    const full =
        !flags.quick &&
        flags.only.length === Object.keys(sections).length &&
        baseline === undefined &&
        flags.rounds === undefined;
    const file = full ? 'results.md' : 'results.partial.md';
    const notes = full ? await keptNotes(new URL('./results.md', import.meta.url)) : '';
    await writeFile(new URL(`./${file}`, import.meta.url), `# tracewire benchmark results\n\n${markdown}${notes}`);
    log(`\nWritten to bench/${file}; ${failures} target(s) missed.`);
}

// Hand-written findings at the end of results.md (profiles, focused measurements) outlive the tables a
// full run replaces: everything from this marker on is carried over.
const notesMarker = '<!-- notes: kept by bench/run.js across runs -->';

async function keptNotes(file) {
    const previous = await readFile(file, 'utf8').catch(() => '');
    const at = previous.indexOf(notesMarker);
    return at === -1 ? '' : `\n${previous.slice(at)}`;
}

main().catch((error) => {
    log(error.stack ?? String(error));
    process.exitCode = 1;
});
