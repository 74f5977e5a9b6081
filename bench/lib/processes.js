// Servers and measured programs run in child processes so that the process under load and the one
// generating the load do not share an event loop (or, on two cores, a core).
import { execFileSync, fork } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';

/**
 * Forks `script` with `args` and waits for its first IPC message, `{ ready: true, ... }`, which
 * carries what the parent needs (a port). Rejects when the child exits or reports an error first.
 */
export async function startChild(script, args = [], { execArgv = [], execPath, timeoutMs = 20_000 } = {}) {
    const child = fork(new URL(script, import.meta.url), args, {
        execArgv,
        // Another program may run node (valgrind, whose options and node's path are then `execArgv`).
        ...(execPath === undefined ? {} : { execPath }),
        stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    });
    const ready = await new Promise((resolve, reject) => {
        const timer = setTimeout(
            () => reject(new Error(`${script} did not report ready in ${timeoutMs} ms`)),
            timeoutMs
        );
        child.once('message', (message) => {
            clearTimeout(timer);
            if (message?.ready) {
                resolve(message);
            } else {
                reject(new Error(`${script} failed to start: ${message?.error ?? JSON.stringify(message)}`));
            }
        });
        child.once('exit', (code) => {
            clearTimeout(timer);
            reject(new Error(`${script} exited with code ${code} before it was ready`));
        });
    });
    return { child, ...ready };
}

/** Sends `message` to `child` and resolves with its reply (the next message it sends). */
export async function ask(child, message) {
    const reply = once(child, 'message');
    child.send(message);
    const [answer] = await reply;
    if (answer?.error) {
        throw new Error(answer.error);
    }

    return answer;
}

export async function stopChild(handle) {
    if (!handle || handle.child.exitCode !== null) {
        return;
    }

    const exited = once(handle.child, 'exit');
    handle.child.kill('SIGTERM');
    await exited;
}

/** Answers `ask()` in a child: `handlers[message.type](message)` is awaited and its value sent back. */
export function answerParent(handlers) {
    process.on('message', async (message) => {
        try {
            const handler = handlers[message?.type];
            if (!handler) {
                throw new Error(`unknown request ${JSON.stringify(message)}`);
            }

            process.send({ ok: true, ...(await handler(message)) });
        } catch (error) {
            process.send({ error: error.stack ?? String(error) });
        }
    });
}

/**
 * Whether `pinToCore` can keep a measured process and its load generator off each other's core: Linux
 * (taskset) with two cores or more. Elsewhere the processes share the cores as the scheduler likes.
 */
export const canPin = process.platform === 'linux' && availableParallelism() >= 2;

/**
 * Pins every thread of process `pid` (its garbage collector's helpers too) to one core, when `canPin`. The
 * tracing measures pin the client to one core and the origin to another, as the issue that set their
 * target did: on two cores, an unpinned origin takes turns on the client's core and its scheduling noise
 * lands in the client's CPU time.
 */
export function pinToCore(pid, core) {
    // A thread that ends while taskset walks the process's threads fails the call: walk them again.
    for (let attempt = 1; canPin; attempt++) {
        try {
            execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', String(core), String(pid)], {
                stdio: 'ignore'
            });
            return;
        } catch (err) {
            if (attempt === 5) {
                throw err;
            }
        }
    }
}

/** The peak of the resident set size between `start()` and `stop()`, sampled every few ms. */
export class RssProbe {
    #timer = null;
    baseline = 0;
    peak = 0;

    start() {
        globalThis.gc?.();
        this.baseline = process.memoryUsage.rss();
        this.peak = this.baseline;
        this.#timer = setInterval(() => {
            this.peak = Math.max(this.peak, process.memoryUsage.rss());
        }, 5);
    }

    stop() {
        clearInterval(this.#timer);
        this.peak = Math.max(this.peak, process.memoryUsage.rss());
        return { baseline: this.baseline, peak: this.peak, growth: this.peak - this.baseline };
    }
}
