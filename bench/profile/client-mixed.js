// The client process's CPU per request of every case, round by round, in one process that runs the
// cases in turn as a process of the client section does (sections/client.js: the same cases, counts
// and JSON body). Run it several times per implementation, alternately: one process's figures sit
// apart from another's by more than many a change moves them (the JIT settles differently in each),
// so an A/B needs the medians of several processes, not of the rounds of one.
//   node bench/profile/client-mixed.js <tracewire|node:http|dir of another build> [rounds=10]
import { runCalls } from '../lib/calls.js';
import { startClient } from '../lib/client-case.js';
import { median } from '../lib/stats.js';
import { cases, jsonBody } from '../sections/client.js';

const [implementation = 'tracewire', rounds = '10'] = process.argv.slice(2);
const { client, stop } = await startClient(implementation);

// cpu[case] = client CPU µs per request, one figure per round; round 0 (a tenth of the count, as the
// section's warm-up round) and round 1 (still tiering up) are shown but left out of the median.
const cpu = Object.fromEntries(cases.map(({ id }) => [id, []]));
for (let round = 0; round <= Number(rounds); round++) {
    for (const { id, route, count, concurrency } of cases) {
        const call = route === 'json' ? () => client.postJson('/json', jsonBody) : () => client.get(`/${route}`);
        const calls = Math.max(concurrency, Math.round(count * (round === 0 ? 0.1 : 1)));
        cpu[id].push((await runCalls(call, calls, concurrency)).cpuPerOperation);
    }
}

for (const { id } of cases) {
    const figures = cpu[id].map((value) => value.toFixed(1)).join(' ');
    console.log(`${implementation} (${id}) median ${median(cpu[id].slice(2)).toFixed(1)} µs/op; rounds: ${figures}`);
}

await client.close?.();
await stop();
