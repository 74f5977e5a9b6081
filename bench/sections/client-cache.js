// The cache rows of the client section: a fresh hit and a revalidated (304) call of tracewire's cache next
// to an uncached request, and next to undici 8's cache interceptor (`undici8`, an alias of undici@8 so the
// other rows keep the undici line they compare with; undici 8 needs Node.js 22.19 or later, and is left
// out on an older runtime). All talk to the section's origin server: GET /small (uncached), /cached
// (max-age=3600) and /revalidated (max-age=0 with an ETag, answered 304).
import { client, MemoryCacheStore } from 'tracewire';
import { runCalls } from '../lib/calls.js';
import { formatNumber, formatRatio, markdownTable, median, pairedRatio, rotate, verdict } from '../lib/stats.js';

const calls = { count: 5000, concurrency: 10 };

async function undiciCache(origin, log) {
    try {
        const undici = await import('undici8');
        const dispatcher = new undici.Agent().compose(
            undici.interceptors.cache({ store: new undici.cacheStores.MemoryCacheStore() })
        );
        const get = async (path) =>
            Buffer.from(await (await undici.request(origin + path, { dispatcher })).body.arrayBuffer());
        return { get, close: () => dispatcher.close() };
    } catch (error) {
        log(`  undici 8 cache interceptor: left out, ${error.message}`);
        return undefined;
    }
}

/** Interleaved rounds of each row; returns the section's Markdown and its failed targets. */
export async function runCacheRows({ port, quick, log }) {
    const origin = `http://127.0.0.1:${port}`;
    const cached = client.defaults({ cache: { store: new MemoryCacheStore() } });
    const undici = await undiciCache(origin, log);
    const rows = [
        ['tracewire, uncached', () => client.get(`${origin}/small`)],
        ['tracewire, fresh hit', () => cached.get(`${origin}/cached`)],
        ['tracewire, revalidated (304)', () => cached.get(`${origin}/revalidated`)],
        ...(undici === undefined
            ? []
            : [
                  ['undici 8 interceptor, fresh hit', () => undici.get('/cached')],
                  ['undici 8 interceptor, revalidated (304)', () => undici.get('/revalidated')]
              ])
    ];
    const samples = Object.fromEntries(rows.map(([name]) => [name, []]));
    const rounds = quick ? 2 : 5;
    const count = Math.round(calls.count * (quick ? 0.25 : 1));
    try {
        for (let round = 0; round <= rounds; round++) {
            for (const [name, call] of rotate(rows, round)) {
                const { rate: opsPerSecond } = await runCalls(
                    call,
                    round === 0 ? count / 10 : count,
                    calls.concurrency
                );
                if (round > 0) {
                    samples[name].push(opsPerSecond);
                }
            }
        }
    } finally {
        await undici?.close();
    }

    const ratio = (a, b) => (samples[a] && samples[b] ? pairedRatio(samples[a], samples[b]) : Number.NaN);
    const table = markdownTable(
        [`${count} GETs of 100 B, concurrency ${calls.concurrency}`, 'median ops/s', 'vs uncached'],
        rows.map(([name]) => [
            name,
            formatNumber(median(samples[name])),
            formatRatio(ratio(name, 'tracewire, uncached'))
        ])
    );
    const targets = [
        ['fresh hit vs an uncached request', ratio('tracewire, fresh hit', 'tracewire, uncached'), 10],
        ['fresh hit vs undici 8 interceptor hit', ratio('tracewire, fresh hit', 'undici 8 interceptor, fresh hit'), 1],
        // A revalidation is one round trip without a body: about an uncached call's cost (docs/performance.md).
        ['revalidated (304) vs an uncached request', ratio('tracewire, revalidated (304)', 'tracewire, uncached'), 0.8],
        [
            'revalidated (304) vs undici 8 interceptor revalidated',
            ratio('tracewire, revalidated (304)', 'undici 8 interceptor, revalidated (304)'),
            1.3
        ]
    ];
    const targetTable = markdownTable(
        ['cache target', 'measured', 'required', 'result'],
        targets.map(([label, value, atLeast]) => [
            label,
            formatRatio(value),
            `≥ ${formatRatio(atLeast)}`,
            verdict(value, atLeast)
        ])
    );
    return {
        markdown: `${table}\n\n${targetTable}`,
        failures: targets.filter(([, value, atLeast]) => Number.isFinite(value) && value < atLeast).length
    };
}
