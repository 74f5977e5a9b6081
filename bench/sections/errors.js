// errors: ops/s of five ways of making an HTTP error, tracewire against @hapi/boom and http-errors
// doing the same thing. Runs in this process: the work is pure CPU, nothing to isolate.
import Boom from '@hapi/boom';
import createError from 'http-errors';
import { errors } from 'tracewire';
import {
    formatNumber,
    formatPercent,
    formatRatio,
    markdownTable,
    median,
    pairedRatio,
    relativeSpread,
    rotate,
    verdict
} from '../lib/stats.js';

const implementations = ['tracewire', '@hapi/boom', 'http-errors'];

// Results land here so the optimiser cannot drop the work of a loop.
const sink = new Array(16);

/**
 * Each loop is its own function so every call site stays monomorphic: a shared loop calling through
 * a function argument would measure the megamorphic call as much as the error.
 */
const cases = [
    {
        name: "notFound('x')",
        target: 1.5,
        loops: {
            tracewire: (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = errors.notFound('x');
            },
            '@hapi/boom': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = Boom.notFound('x');
            },
            'http-errors': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = createError(404, 'x');
            }
        }
    },
    {
        name: "badImplementation('x')",
        target: 1.5,
        loops: {
            tracewire: (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = errors.badImplementation('x');
            },
            '@hapi/boom': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = Boom.badImplementation('x');
            },
            'http-errors': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = createError(500, 'x');
            }
        }
    },
    {
        name: "unauthorized('x', 'Bearer', { realm: 'a' })",
        target: 1.5,
        loops: {
            tracewire: (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = errors.unauthorized('x', 'Bearer', { realm: 'a' });
            },
            '@hapi/boom': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = Boom.unauthorized('x', 'Bearer', { realm: 'a' });
            },
            // http-errors has no challenge builder: the equivalent builds the same header by hand.
            'http-errors': (n) => {
                for (let i = 0; i < n; i++) {
                    const attributes = { realm: 'a' };
                    sink[i & 15] = createError(401, 'x', {
                        headers: { 'WWW-Authenticate': `Bearer realm="${attributes.realm}", error="x"` }
                    });
                }
            }
        }
    },
    {
        name: "toHttpError(new Error('x'))",
        target: 1.5,
        loops: {
            tracewire: (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = errors.toHttpError(new Error('x'));
            },
            '@hapi/boom': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = Boom.boomify(new Error('x'));
            },
            'http-errors': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = createError(new Error('x'));
            }
        }
    },
    {
        name: "new HttpError('x', { statusCode: 418 })",
        target: 1.5,
        loops: {
            tracewire: (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = new errors.HttpError('x', { statusCode: 418 });
            },
            '@hapi/boom': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = new Boom.Boom('x', { statusCode: 418 });
            },
            'http-errors': (n) => {
                for (let i = 0; i < n; i++) sink[i & 15] = createError(418, 'x');
            }
        }
    }
];

/** Runs `loop` once for `iterations` and returns operations per second. */
function sample(loop, iterations) {
    const start = process.hrtime.bigint();
    loop(iterations);
    const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    return iterations / elapsed;
}

/** The iteration count that makes one sample last about `sampleMs` (also warms the loop up). */
function calibrate(loop, sampleMs) {
    let iterations = 1000;
    for (;;) {
        const start = process.hrtime.bigint();
        loop(iterations);
        const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
        if (elapsedMs >= sampleMs / 4) {
            return Math.max(1000, Math.round((iterations * sampleMs) / elapsedMs));
        }

        iterations *= 4;
    }
}

export async function runErrorsSection({ quick, log }) {
    const rounds = quick ? 7 : 25;
    const sampleMs = quick ? 30 : 50;
    const results = [];
    for (const benchCase of cases) {
        const iterations = {};
        for (const name of implementations) {
            iterations[name] = calibrate(benchCase.loops[name], sampleMs);
        }

        const samples = Object.fromEntries(implementations.map((name) => [name, []]));
        for (let round = 0; round < rounds; round++) {
            for (const name of rotate(implementations, round)) {
                samples[name].push(sample(benchCase.loops[name], iterations[name]));
            }
        }

        const opsPerSecond = Object.fromEntries(implementations.map((name) => [name, median(samples[name])]));
        const spread = relativeSpread(samples.tracewire);
        const vsBoom = pairedRatio(samples.tracewire, samples['@hapi/boom']);
        const vsHttpErrors = pairedRatio(samples.tracewire, samples['http-errors']);
        results.push({ benchCase, opsPerSecond, spread, vsBoom, vsHttpErrors });
        log(
            `  ${benchCase.name}: ${implementations.map((name) => `${name} ${formatNumber(opsPerSecond[name])}/s`).join(', ')}`
        );
    }

    const rows = results.map(({ benchCase, opsPerSecond, spread, vsBoom, vsHttpErrors }) => {
        return [
            `\`${benchCase.name}\``,
            formatNumber(opsPerSecond.tracewire),
            formatNumber(opsPerSecond['@hapi/boom']),
            formatNumber(opsPerSecond['http-errors']),
            `**${formatRatio(vsBoom)}**`,
            formatRatio(vsHttpErrors),
            `≥ ${formatRatio(benchCase.target)}`,
            verdict(vsBoom, benchCase.target),
            formatPercent(spread)
        ];
    });

    const table = markdownTable(
        [
            'case',
            'tracewire ops/s',
            '@hapi/boom ops/s',
            'http-errors ops/s',
            'vs boom',
            'vs http-errors',
            'target (vs boom)',
            'result',
            'tracewire spread'
        ],
        rows
    );
    const note = `ops/s: medians of ${rounds} interleaved rounds of about ${sampleMs} ms each; ratios: medians of the per-round ratios; spread: ±half the range of tracewire's samples around its median.`;
    return {
        title: 'errors',
        markdown: `${table}\n\n${note}`,
        failures: results.filter(({ benchCase, vsBoom }) => !(vsBoom >= benchCase.target)).length
    };
}
