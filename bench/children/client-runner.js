// One client of the client benchmark, in a process of its own (a service loads one HTTP client, and
// in a shared process Node's own http code, optimised for the objects of every library in it, runs
// each of them slower, some more than others).
//   node bench/children/client-runner.js <client name> <origin port> [baseline directory]
// The parent asks `{ type: 'validate', jsonBody }` once, then `{ type: 'run', route, count, concurrency }`
// for each sample and gets back the rate and this process's CPU µs per operation.
import { runCalls } from '../lib/calls.js';
import { createImplementation } from '../lib/client-implementations.js';
import { answerParent } from '../lib/processes.js';

const [name, port, baselineDirectory] = process.argv.slice(2);
const implementation = await createImplementation(name, Number(port), baselineDirectory);
let jsonBody = '';

answerParent({
    /** One call of each route, checked, so a client that misbehaves is reported, not timed. */
    async validate(message) {
        jsonBody = message.jsonBody;
        const small = bodyOf(await implementation.get('/small'));
        const large = bodyOf(await implementation.get('/large'));
        const reply = await implementation.postJson('/json', jsonBody);
        if (small.length !== 100 || large.length !== 1024 * 1024 || reply?.received !== jsonBody.length) {
            throw new Error(
                `wrong replies: ${small.length} B, ${large.length} B, ${JSON.stringify(reply)?.slice(0, 80)}`
            );
        }

        return {};
    },
    async run({ route, count, concurrency }) {
        const call =
            route === 'json' ? () => implementation.postJson('/json', jsonBody) : () => implementation.get(`/${route}`);
        return runCalls(call, count, concurrency);
    },
    async close() {
        await implementation.close?.();
        return {};
    }
});
process.send({ ready: true });

function bodyOf(result) {
    return Buffer.isBuffer(result) ? result : result.payload;
}
