// The parts a V8 CPU profile's time falls in: a tracewire module, a package, Node's internals or V8's own
// entries (garbage collector, program, idle). Read by profile/parts.js (one profile) and
// profile/cache-parts.js (the cache rows' profiles side by side).

/** The part a frame belongs to; `folders` groups tracewire's modules by folder (`tracewire src/client/cache`). */
export function partOf({ functionName, url }, folders = false) {
    if (url === '') {
        return functionName.startsWith('(') ? functionName : '(native)';
    }

    const dist = /\/dist\/(.+)$/.exec(url);
    if (dist !== null && !url.includes('/node_modules/')) {
        return `tracewire ${folders ? dist[1].replace(/\/[^/]+$/, '') : dist[1]}`;
    }

    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (pkg !== null) {
        return pkg[1];
    }

    if (url.startsWith('node:')) {
        return `node ${url.slice(5).split('/')[0]}`;
    }

    return url.replace(/^.*\/bench\//, 'bench/');
}

/**
 * The self time of each part in `profile`, in µs: each sample stands for the time until the next one. The
 * profiler samples the event loop's thread by the wall clock, so a frame's time also holds the moments its
 * thread waited in it (a socket write that wakes the server on the same core): CPU is measured apart.
 */
export function selfMicrosByPart(profile, folders = false) {
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    const selfMicros = new Map();
    for (let i = 0; i < profile.samples.length; i++) {
        const part = partOf(nodes.get(profile.samples[i]).callFrame, folders);
        selfMicros.set(part, (selfMicros.get(part) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
    }

    return selfMicros;
}
