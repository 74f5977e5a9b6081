// The mocked rows of the client section: a GET answered by tracewire/testing's mock origin
// (docs/testing.md), over HTTP/1.1 and over HTTP/2, beside the same GET of 100 B to the section's
// loopback origin (bench/servers/origin.js, in a process of its own), interleaved in this process.
// The target: a mocked call costs less than a loopback one, so a suite moved to the mock runs faster.
import { client } from 'tracewire';
import { MockNetwork } from 'tracewire/testing';
import { runCalls } from '../lib/calls.js';
import { formatNumber, formatRatio, markdownTable, median, pairedRatio, rotate, verdict } from '../lib/stats.js';

const calls = { count: 5000, concurrency: 10 };

/** Interleaved rounds of each row; returns the rows' Markdown and their failed targets. */
export async function runMockRows({ port, quick }) {
    const origin = `http://127.0.0.1:${port}`;
    const mock = new MockNetwork();
    // As the origin answers /small: 100 B, with its length.
    mock.origin(origin).get('/small').reply(200, Buffer.alloc(100, 'a'), { 'content-type': 'text/plain' }).persist();
    const mocked = client.defaults({ mock });
    const mockedHttp2 = client.defaults({ mock, http2: { h2c: true } });
    const rows = [
        ['tracewire, loopback GET', () => client.get(`${origin}/small`)],
        ['tracewire, mocked GET', () => mocked.get(`${origin}/small`)],
        ['tracewire, mocked GET over HTTP/2', () => mockedHttp2.get(`${origin}/small`)]
    ];
    const samples = Object.fromEntries(rows.map(([name]) => [name, []]));
    const rounds = quick ? 2 : 5;
    const count = Math.round(calls.count * (quick ? 0.25 : 1));
    try {
        for (let round = 0; round <= rounds; round++) {
            for (const [name, call] of rotate(rows, round)) {
                const { rate } = await runCalls(call, round === 0 ? count / 10 : count, calls.concurrency);
                if (round > 0) {
                    samples[name].push(rate);
                }
            }
        }
    } finally {
        mock.close();
    }

    const ratio = (name) => pairedRatio(samples[name], samples['tracewire, loopback GET']);
    const table = markdownTable(
        [`${count} GETs of 100 B, concurrency ${calls.concurrency}`, 'median ops/s', 'vs loopback'],
        rows.map(([name]) => [name, formatNumber(median(samples[name])), formatRatio(ratio(name))])
    );
    const targets = [
        ['mocked GET vs a loopback GET', ratio('tracewire, mocked GET'), 1],
        ['mocked GET over HTTP/2 vs a loopback GET', ratio('tracewire, mocked GET over HTTP/2'), 1]
    ];
    const targetTable = markdownTable(
        ['mock target', 'measured', 'required', 'result'],
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
