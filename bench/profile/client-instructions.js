// Counts the instructions one client case costs per request, under callgrind (valgrind), which the load of
// a shared machine does not move: a warm-up runs uninstrumented, then `count` requests are measured,
// each thread in its own file (thread 1 is the event loop; the others are V8's compiler and GC helpers).
//   valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --callgrind-out-file=/tmp/cg/out.%p \
//     node bench/profile/client-instructions.js <tracewire|node:http|dir of another build> <a|b|c|d> [count=3000] [warm-up=15000] [mixed]
//   grep '^summary' /tmp/cg/out.<pid>.1-01   # instructions of the event loop thread; divide by count
import { execFileSync } from 'node:child_process';
import { runCalls } from '../lib/calls.js';
import { jsonBody, startClientCase } from '../lib/client-case.js';

const [implementation = 'tracewire', caseId = 'b', count = '3000', warmUp = '15000', mix] = process.argv.slice(2);
const { client, call, concurrency, stop } = await startClientCase(implementation, caseId);
const batch = (total) => runCalls(call, total, concurrency);

const callgrind = (...args) => execFileSync('callgrind_control', [...args, String(process.pid)], { stdio: 'ignore' });
await batch(Number(warmUp));
if (mix === 'mixed') {
    // As in the client section, where one client process runs every case in turn: the other cases
    // leave Node's http code and the client's own optimised for their objects too.
    for (let round = 0; round < 3; round++) {
        await runCalls(() => client.get('/small'), 2000, 1);
        await runCalls(() => client.get('/large'), 200, 4);
        await runCalls(() => client.postJson('/json', jsonBody), 2000, 20);
        await batch(Number(warmUp) / 3);
    }
}

callgrind('-i', 'on');
callgrind('-z');
await batch(Number(count));
callgrind('-d');
await stop();
process.exit(0);
