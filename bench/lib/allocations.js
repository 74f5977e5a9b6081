// Heap bytes allocated by function, as V8's sampling heap profiler sees them while `work` runs: the objects
// the garbage collector took since included (what it pays for), a sample every 256 bytes on average. For the
// profile tools that ask where a request's heap goes (profile/tracing-allocations.js, cache-allocations.js).
import { Session } from 'node:inspector/promises';

/** Runs `work` under the sampling heap profiler; resolves with [allocating function, bytes] by bytes, and the total. */
export async function allocationsOf(work) {
    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.startSampling', {
        samplingInterval: 256,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
    });
    await work();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();

    const bytes = new Map();
    let total = 0;
    (function walk(node) {
        const { functionName, url, lineNumber } = node.callFrame;
        const where = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist|bench)\//, '$1/')}:${lineNumber + 1}`;
        bytes.set(where, (bytes.get(where) ?? 0) + node.selfSize);
        total += node.selfSize;
        for (const child of node.children) {
            walk(child);
        }
    })(profile.head);
    return { byFunction: [...bytes].sort((a, b) => b[1] - a[1]), total };
}
