// One case of the client benchmark, for the focused loops of bench/profile/: the origin in its own
// process, one client (a directory is another checkout's build, run as the client section runs its
// baseline) and the call the case repeats with its concurrency.
import { createImplementation } from './client-implementations.js';
import { startChild, stopChild } from './processes.js';

const shapes = { a: ['small', 1], b: ['small', 50], c: ['large', 4], d: ['json', 20] };

/** The 64 KiB JSON text case (d) posts. */
export const jsonBody = JSON.stringify({ pad: 'x'.repeat(64 * 1024 - 10) });

/** Starts the origin and `implementation` (tracewire, node:http, undici, undici 8 or a build's directory) talking to it. */
export async function startClient(implementation) {
    const origin = await startChild('../servers/origin.js');
    const named = ['tracewire', 'node:http', 'undici', 'undici 8'].includes(implementation);
    const client = await createImplementation(
        named ? implementation : 'tracewire@baseline',
        origin.port,
        named ? undefined : implementation
    );
    return { client, stop: () => stopChild(origin) };
}

/** Starts the origin and `implementation` for case `caseId` (a, b, c or d): the call the case repeats, with its concurrency. */
export async function startClientCase(implementation, caseId) {
    const [route, concurrency] = shapes[caseId] ?? shapes.b;
    const { client, stop } = await startClient(implementation);
    return {
        client,
        concurrency,
        call: route === 'json' ? () => client.postJson('/json', jsonBody) : () => client.get(`/${route}`),
        stop
    };
}
