/*
 * The last thing a hop's observers learn: the HttpError a per-method helper makes of a 4xx/5xx
 * response once it has read the body (surface/helper-outcome.ts). The body ends before that error
 * exists, so an observer that closes its record at the body's end — the instrumentation's span —
 * would never see what only the error knows, the problem document of an `application/problem+json`
 * answer. The helper marks the response as it starts reading it and says when the error is made; the
 * observer asks, at the body's end, whether to wait for it. A response no helper reads is never marked,
 * so nobody waits for an error that will not come.
 */

const errorReadKey = Symbol('tracewire.errorRead');

/** The error of a marked response: not made yet (with whoever waits for it), or made. */
class ErrorRead {
    waiter: ((err: Error) => void) | undefined;
    made: Error | undefined;
}

type Marked = { [errorReadKey]?: ErrorRead };

/** A helper starts reading the body of `res`, a 4xx/5xx response, to make its error. */
export function errorReadStarted(res: object): void {
    (res as Marked)[errorReadKey] = new ErrorRead();
}

/** The helper made the error of `res` (its rejection): whoever waits hears it, once. */
export function errorReadSettled(res: object, err: Error): void {
    const read = (res as Marked)[errorReadKey];
    if (read === undefined || read.made !== undefined) {
        return;
    }

    read.made = err;
    const waiter = read.waiter;
    read.waiter = undefined;
    waiter?.(err);
}

/**
 * Calls `then` with the error a helper makes of `res` — at once when it is made — and returns true;
 * returns false, and never calls `then`, when no helper reads `res` for an error. The helper settles
 * its call in every case, so `then` is called.
 */
export function afterErrorRead(res: object, then: (err: Error) => void): boolean {
    const read = (res as Marked)[errorReadKey];
    if (read === undefined) {
        return false;
    }

    if (read.made !== undefined) {
        then(read.made);
    } else {
        read.waiter = then;
    }

    return true;
}
