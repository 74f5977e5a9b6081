// The cache rows of the client section: a fresh hit and a revalidated (304) call of tracewire's cache next
// to an uncached request, and next to undici 8's cache interceptor (`undici8`, an alias of undici@8 so the
// other rows keep the undici line they compare with; undici 8 needs Node.js 22.19 or later, and is left
// out on an older runtime), and next to the floor of a revalidation made with node:http alone. All talk to
// the section's origin server: GET /small (uncached), /cached (max-age=3600) and /revalidated (max-age=0
// with an ETag, answered 304).
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

/**
 * The floor of a revalidation, made with node:http's own calls: what any cache must at least do for a stale
 * entry — find it, send the conditional GET, read the `304`, merge its fields into the stored ones and keep
 * the result (RFC 9111 4.3.4), and give the caller the stored body — with none of the cache's rules (no
 * freshness worked out, no `Vary`, no `Cache-Status`, no events). Beside it, the same client's uncached GET:
 * their ratio is the best a revalidation can do against an uncached call on this transport.
 */
function rawFloor(port) {
    const http = process.getBuiltinModule('node:http');
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    const stored = new Map();
    const get = (path, headers) =>
        new Promise((resolve, reject) => {
            const req = http.request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
                const chunks = [];
                res.on('data', (chunk) => chunks.push(chunk));
                res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
                res.on('error', reject);
            });
            req.on('error', reject);
            req.end();
        });
    return {
        uncached: async () => (await get('/small', {})).body,
        async revalidated() {
            const path = '/revalidated';
            const entry = stored.get(path);
            const { res, body } = await get(path, entry === undefined ? {} : { 'if-none-match': entry.headers.etag });
            if (res.statusCode !== 304) {
                stored.set(path, { statusCode: res.statusCode, headers: res.headers, body });
                return body;
            }

            const updated = { ...entry, headers: { ...entry.headers, ...res.headers } };
            stored.set(path, updated);
            return updated.body;
        },
        close: () => agent.destroy()
    };
}

/** Interleaved rounds of each row; returns the section's Markdown and its failed targets. */
export async function runCacheRows({ port, quick, log }) {
    const origin = `http://127.0.0.1:${port}`;
    const cached = client.defaults({ cache: { store: new MemoryCacheStore() } });
    const undici = await undiciCache(origin, log);
    const floor = rawFloor(port);
    const rows = [
        ['tracewire, uncached', () => client.get(`${origin}/small`)],
        ['tracewire, fresh hit', () => cached.get(`${origin}/cached`)],
        ['tracewire, revalidated (304)', () => cached.get(`${origin}/revalidated`)],
        ['raw node:http, uncached', floor.uncached],
        ['raw node:http, the floor of a revalidation (304, stored body)', floor.revalidated],
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
        floor.close();
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
    // What the transport allows a revalidation, and how far from it tracewire's is.
    const floorRow = 'raw node:http, the floor of a revalidation (304, stored body)';
    const floors = [
        ['(floor) the floor of a revalidation vs raw node:http uncached', ratio(floorRow, 'raw node:http, uncached')],
        ['revalidated (304) vs the floor of a revalidation', ratio('tracewire, revalidated (304)', floorRow)]
    ];
    const targetTable = markdownTable(
        ['cache target', 'measured', 'required', 'result'],
        [
            ...targets.map(([label, value, atLeast]) => [
                label,
                formatRatio(value),
                `≥ ${formatRatio(atLeast)}`,
                verdict(value, atLeast)
            ]),
            ...floors.map(([label, value]) => [label, formatRatio(value), '', 'info'])
        ]
    );
    return {
        markdown: `${table}\n\n${targetTable}`,
        failures: targets.filter(([, value, atLeast]) => Number.isFinite(value) && value < atLeast).length
    };
}
