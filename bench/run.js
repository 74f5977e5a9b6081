// `npm run bench`: every benchmark of issues 6 and 13 in one run, printed as Markdown tables of ratios and
// written to bench/results.md (a quick or partial run: bench/results.partial.md, not committed). Flags: `--quick` (shorter runs, for a first look) and
// `--only=client|static|tracing|errors|memory` (comma-separated).
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { describeComponents, detectComponents } from './lib/components.js';
import { runClientSection } from './sections/client.js';
import { runErrorsSection } from './sections/errors.js';
import { runMemorySection } from './sections/memory.js';
import { runStaticSection } from './sections/static.js';
import { runTracingSection } from './sections/tracing.js';

const sections = {
    client: { heading: 'Client', run: runClientSection },
    static: { heading: 'Static files', run: runStaticSection },
    tracing: { heading: 'Tracing cost', run: runTracingSection },
    errors: { heading: 'Errors', run: runErrorsSection },
    memory: { heading: 'Memory', run: runMemorySection }
};

function parseFlags(argv) {
    const flags = { quick: false, only: Object.keys(sections) };
    for (const argument of argv) {
        if (argument === '--quick') {
            flags.quick = true;
        } else if (argument.startsWith('--only=')) {
            const names = argument.slice('--only='.length).split(',').filter(Boolean);
            const unknown = names.filter((name) => !(name in sections));
            if (unknown.length > 0 || names.length === 0) {
                throw new Error(`--only takes ${Object.keys(sections).join('|')} (comma-separated), got ${argument}`);
            }

            flags.only = names;
        } else {
            throw new Error(`Unknown flag ${argument}: use --quick and --only=${Object.keys(sections).join('|')}`);
        }
    }

    return flags;
}

function log(line) {
    process.stderr.write(`${line}\n`);
}

async function main() {
    const flags = parseFlags(process.argv.slice(2));
    const components = await detectComponents();
    const started = Date.now();
    const cpus = os.cpus();
    const machine = `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${os.platform()} ${os.release()}`;
    log(`tracewire bench${flags.quick ? ' (quick)' : ''}: ${describeComponents(components)}`);

    const parts = [];
    let failures = 0;
    for (const name of Object.keys(sections)) {
        if (!flags.only.includes(name)) {
            continue;
        }

        const section = sections[name];
        const sectionStart = Date.now();
        log(`\n== ${section.heading}`);
        const result = await section.run({ quick: flags.quick, components, log });
        const seconds = ((Date.now() - sectionStart) / 1000).toFixed(0);
        log(`   (${seconds} s)`);
        failures += result.failures ?? 0;
        parts.push(`### ${section.heading}\n\n${result.skipped ?? result.markdown}\n`);
    }

    const total = ((Date.now() - started) / 1000).toFixed(0);
    const header = [
        `Run of ${new Date().toISOString()}${flags.quick ? ' with `--quick`' : ''} on ${machine}.`,
        `Components: ${describeComponents(components)}. Total time ${total} s.`,
        'Ratios are of medians of interleaved rounds (A B A B, order rotated each round) in one run; the',
        'machine is shared, so the absolute figures are noisy and the ratios are what count.'
    ].join('\n');
    const markdown = `${header}\n\n${parts.join('\n')}`;
    process.stdout.write(`\n${markdown}`);
    // bench/results.md holds the last full run: a quick or partial one must not replace it.
    const full = !flags.quick && flags.only.length === Object.keys(sections).length;
    const file = full ? 'results.md' : 'results.partial.md';
    await writeFile(new URL(`./${file}`, import.meta.url), `# tracewire benchmark results\n\n${markdown}`);
    log(`\nWritten to bench/${file}; ${failures} target(s) missed.`);
}

main().catch((error) => {
    log(error.stack ?? String(error));
    process.exitCode = 1;
});
