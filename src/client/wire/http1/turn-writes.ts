/**
 * When other requests await their responses, a request ended now is written with the others ended in the
 * same turn of the event loop, once the turn's I/O callbacks have run (its check phase), not the moment
 * it is ended. A client with many requests in flight ends most of them in the callbacks of the responses
 * before them: written one by one, each write reaches a server that has just gone back to waiting, and
 * the kernel wakes it for each (on loopback the sender pays for that wakeup inside its own write);
 * written together, the server finds them all at its next poll and answers them together too. A request
 * alone on the client is written at once: nothing would join it, and the server that just answered its
 * predecessor may still be awake. docs/performance.md has the measurements.
 */

/** An exchange with a request to end: `writeQueued` sends it (or nothing, if it was dropped meanwhile). */
export interface QueuedWrite {
    writeQueued(): void;
}

// As the module found it: a test's fake timers (vi.useFakeTimers()) must not hold back the wire.
const { setImmediate: atCheckPhase } = globalThis;

// The requests written or queued whose exchanges have not ended (`exchangeEnded`), of every agent.
let awaiting = 0;
let queued: QueuedWrite[] = [];
let scheduled = false;

/** Sends `write`'s request now when it is the only one awaiting a response, or else with this turn's others. */
export function writeThisTurn(write: QueuedWrite): void {
    awaiting++;
    if (awaiting === 1) {
        write.writeQueued();
        return;
    }

    queued.push(write);
    if (!scheduled) {
        scheduled = true;
        atCheckPhase(writeQueued);
    }
}

/** An exchange that went through `writeThisTurn` ended (answered, failed or dropped): once for each. */
export function exchangeEnded(): void {
    awaiting--;
}

function writeQueued(): void {
    // A request ended while these are written (a listener of one starting another) waits for the next batch.
    const writes = queued;
    queued = [];
    scheduled = false;
    for (const write of writes) {
        write.writeQueued();
    }
}
