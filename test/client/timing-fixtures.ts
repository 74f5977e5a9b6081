import { connect, type LookupFunction, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';

/**
 * A `lookup` option that resolves every name to 127.0.0.1 after `delay` ms: a slow DNS, on loopback.
 * `calls` counts the lookups made; `answerNow()` gives the answers still due at once, as a late DNS
 * answer would come after the caller gave up, without waiting the rest of `delay`.
 */
export function slowLookup(delay: number): LookupFunction & { calls: number; answerNow(): void } {
    const due = new Map<NodeJS.Timeout, () => void>();
    const lookup = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        lookup.calls++;
        const answer = () => {
            due.delete(timer);
            if (options.all) {
                callback(null, [{ address: '127.0.0.1', family: 4 }]);
            } else {
                callback(null, '127.0.0.1', 4);
            }
        };
        const timer = setTimeout(answer, delay);
        due.set(timer, answer);
    }) as unknown as LookupFunction & { calls: number; answerNow(): void };
    lookup.calls = 0;
    lookup.answerNow = () => {
        for (const [timer, answer] of due) {
            clearTimeout(timer);
            answer();
        }
    };
    return lookup;
}

/** A lookup that answers 127.0.0.1 before it returns, as a resolver answering from its cache can. */
export function immediateLookup(): LookupFunction & { calls: number } {
    const lookup = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        lookup.calls++;
        if (options.all) {
            callback(null, [{ address: '127.0.0.1', family: 4 }]);
        } else {
            callback(null, '127.0.0.1', 4);
        }
    }) as unknown as LookupFunction & { calls: number };
    lookup.calls = 0;
    return lookup;
}

export function wait(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A port on 127.0.0.1 where a new connection hangs in its connect phase, as with a black-holed
 * host: a listener whose accept queue is full (a worker thread that listens, then blocks, so it
 * accepts nothing; filler connections take the queue's places), so the kernel drops further SYNs.
 */
export async function startBlackHole(): Promise<{ port: number; close(): Promise<void> }> {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
        const server = require('node:net').createServer();
        server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
            parentPort.postMessage(server.address().port);
            // Blocks the worker's event loop: nothing is accepted until the test lets go.
            while (Atomics.load(workerData, 0) === 0) Atomics.wait(workerData, 0, 0, 50);
            server.close();
            parentPort.close();
        });`,
        { eval: true, workerData: flag }
    );
    const port = await new Promise<number>((resolve) => worker.once('message', resolve));
    const fillers: Socket[] = [];
    const close = async () => {
        for (const socket of fillers) {
            socket.destroy();
        }

        Atomics.store(flag, 0, 1);
        Atomics.notify(flag, 0);
        await worker.terminate();
    };
    // Fill the accept queue: until two connections in a row do not complete. A filler that only seems
    // not to (a loaded machine can stall the loop, or the kernel, past the wait) may still have taken a
    // place: if one is left, the next filler takes it and the filling goes on. Once the queue is full,
    // the kernel drops every SYN, the test's own as well.
    try {
        let misses = 0;
        while (misses < 2) {
            if (fillers.length === 32) {
                throw new Error('The black hole still accepts connections');
            }

            const socket = connect(port, '127.0.0.1');
            socket.on('error', () => {});
            fillers.push(socket);
            misses = (await connectsWithin(socket, 500)) ? 0 : misses + 1;
        }
    } catch (err) {
        await close();
        throw err;
    }

    return { port, close };
}

/**
 * Whether `socket` connects within `ms`. After a stall, timers run before the I/O callbacks of the
 * same turn of the loop: deciding only in that turn's immediates lets a connection the kernel has
 * already made be seen first.
 */
function connectsWithin(socket: Socket, ms: number): Promise<boolean> {
    return Promise.race([
        new Promise<boolean>((resolve) => socket.once('connect', () => resolve(true))),
        wait(ms).then(() => new Promise<boolean>((resolve) => setImmediate(() => resolve(false))))
    ]);
}
