import type { Readable } from 'node:stream';

/**
 * A response whose body is held whole in memory rather than coming from a connection: the responses
 * the cache makes from a stored one. The body goes into the stream only once someone reads the stream;
 * a reader that wants it whole (a helper's, `read()`) takes it as it is when nothing else follows the
 * stream. Streamed, a body already in memory cost a hit a sixth of its instructions (resumed on a later
 * tick, a `data` event, the end and the close on ticks of their own).
 */

const heldBody = Symbol('tracewire.heldBody');
// What a stream holds once its body was read or taken: nothing more to give.
const spent = Buffer.alloc(0);

type HoldingStream = Readable & { [heldBody]?: Buffer };

/** Makes `res`, a stream nothing was pushed into, give `body` to whoever reads it, then end. */
export function holdBody(res: Readable, body: Buffer): void {
    (res as HoldingStream)[heldBody] = body;
    res._read = readHeld;
}

function readHeld(this: HoldingStream): void {
    const body = this[heldBody]!;
    this[heldBody] = spent;
    if (body.length > 0) {
        this.push(body);
    }

    this.push(null);
}

/**
 * The held body of `res`, taken whole, when no one else reads the stream or waits on its events (no
 * `data`, `readable`, `end` or `close` listener, not flowing or paused): they would hear nothing once it
 * is taken. Undefined for any other stream, or one followed, or spent.
 */
export function takeHeldBody(res: Readable): Buffer | undefined {
    const body = (res as HoldingStream)[heldBody];
    if (
        body === undefined ||
        body === spent ||
        res.readableFlowing !== null ||
        res.listenerCount('data') +
            res.listenerCount('readable') +
            res.listenerCount('end') +
            res.listenerCount('close') >
            0
    ) {
        return undefined;
    }

    (res as HoldingStream)[heldBody] = spent;
    return body;
}

/** True when the held body of `res` was read or taken: the stream has nothing more to give. */
export function heldBodySpent(res: Readable): boolean {
    return (res as HoldingStream)[heldBody] === spent;
}
