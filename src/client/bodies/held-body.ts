import type { Readable } from 'node:stream';

/**
 * A response whose body is held whole in memory rather than coming from a connection: the responses
 * the cache makes from a stored one. The body goes into the stream only once someone reads the stream;
 * a reader that wants it whole (a helper's, `read()`) takes it as it is when nothing else follows the
 * stream. Streamed, a body already in memory cost a hit a sixth of its instructions (resumed on a later
 * tick, a `data` event, the end and the close on ticks of their own).
 */

const heldBody = Symbol('tracewire.heldBody');
// What a stream holds once a reader took its body: nothing more to give.
const taken = Buffer.alloc(0);

interface HoldingStream extends Readable {
    /** The body until it is read (`null` once in the stream) or taken (`taken`). */
    [heldBody]?: Buffer | null;
}

/** Makes `res`, a stream nothing was pushed into, give `body` to whoever reads it, then end. */
export function holdBody(res: Readable, body: Buffer): void {
    (res as HoldingStream)[heldBody] = body;
    res._read = readHeld;
}

function readHeld(this: HoldingStream): void {
    const body = this[heldBody];
    if (body !== null && body !== undefined && body.length > 0) {
        this.push(body);
    }

    this[heldBody] = null;
    this.push(null);
}

/**
 * The held body of `res`, taken whole, when no one else reads the stream or waits on its events (no
 * `data`, `readable`, `end` or `close` listener, not flowing or paused): they would hear nothing once
 * it is taken. Undefined otherwise, or for any other stream: it is read as a stream is.
 */
export function takeHeldBody(res: Readable): Buffer | undefined {
    const body = (res as HoldingStream)[heldBody];
    if (
        body === undefined ||
        body === null ||
        body === taken ||
        res.readableFlowing !== null ||
        res.listenerCount('data') > 0 ||
        res.listenerCount('readable') > 0 ||
        res.listenerCount('end') > 0 ||
        res.listenerCount('close') > 0
    ) {
        return undefined;
    }

    (res as HoldingStream)[heldBody] = taken;
    return body;
}

/** True when a reader took the body of `res` whole: read to its end, as a streamed body would be. */
export function heldBodyTaken(res: Readable): boolean {
    return (res as HoldingStream)[heldBody] === taken;
}
