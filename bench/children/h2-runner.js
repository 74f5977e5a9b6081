// One client of the HTTP/2 section, in a process of its own.
//   node bench/children/h2-runner.js <tracewire h2 | tracewire h1 | undici 8 h2> <origin port>
// The parent asks `{ type: 'validate' }` once, then `{ type: 'run', route, count, concurrency }` per
// sample and gets back the rate and this process's CPU µs per operation.
import { runCalls } from '../lib/calls.js';
import { answerParent } from '../lib/processes.js';

const [name, port] = process.argv.slice(2);
const origin = `https://127.0.0.1:${port}`;

/** GET `path` → the body's length and the protocol the server saw it over. */
async function createClient() {
    switch (name) {
        case 'tracewire h2':
        case 'tracewire h1': {
            const { client } = await import('tracewire');
            const api = client.defaults({ http2: name === 'tracewire h2', rejectUnauthorized: false });
            return {
                get: async (path) => {
                    const { res, payload } = await api.get(origin + path);
                    return { length: payload.length, version: res.headers['x-protocol'] };
                }
            };
        }
        case 'undici 8 h2': {
            // undici 8 speaks HTTP/2 by default where ALPN offers it.
            const { Agent, request } = await import('undici8');
            const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
            return {
                get: async (path) => {
                    const res = await request(origin + path, { dispatcher });
                    const body = Buffer.from(await res.body.arrayBuffer());
                    return { length: body.length, version: res.headers['x-protocol'] };
                },
                close: () => dispatcher.close()
            };
        }
        default:
            throw new Error(`unknown client ${name}: tracewire h2, tracewire h1, undici 8 h2`);
    }
}

const implementation = await createClient();
answerParent({
    async validate() {
        const small = await implementation.get('/small');
        const large = await implementation.get('/large');
        const wanted = name.endsWith('h2') ? '2.0' : '1.1';
        if (small.length !== 100 || large.length !== 8 * 1024 * 1024 || small.version !== wanted) {
            throw new Error(`wrong replies: ${small.length} B, ${large.length} B over HTTP/${small.version}`);
        }

        return {};
    },
    async run({ route, count, concurrency }) {
        return runCalls(() => implementation.get(`/${route}`), count, concurrency);
    },
    async close() {
        await implementation.close?.();
        return {};
    }
});
process.send({ ready: true });
