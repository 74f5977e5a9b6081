// One library of the client section's cache rows, in a process of its own (sections/client-cache.js): its
// rows (lib/cache-rows.js) share this process, as a service's cached and uncached calls would, and no other
// library's objects or garbage.
//   node bench/children/cache-runner.js <library> <origin port>
// The parent asks `{ type: 'validate' }` once, then `{ type: 'run', row, count, concurrency }` for each sample
// and gets back the rate and this process's CPU µs per call.

import { cacheRowsOf } from '../lib/cache-rows.js';
import { runCalls } from '../lib/calls.js';
import { answerParent } from '../lib/processes.js';

const [library, port] = process.argv.slice(2);
const rows = await cacheRowsOf(library, Number(port));

answerParent({
    /** One call of each row, checked: a 100 B body each time (the 304's is the stored one). */
    async validate() {
        for (const [name, call] of Object.entries(rows.calls)) {
            for (let i = 0; i < 2; i++) {
                const result = await call();
                const body = Buffer.isBuffer(result) ? result : result.payload;
                if (body.length !== 100) {
                    throw new Error(`${name}: a body of ${body.length} B, not 100`);
                }
            }
        }

        return {};
    },
    async run({ row, count, concurrency }) {
        return runCalls(rows.calls[row], count, concurrency);
    },
    async close() {
        await rows.close();
        return {};
    }
});
process.send({ ready: true });
