import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/*
 * When a response is actually sent. A client that pipelines sends its next requests before the first
 * response is read; node queues their responses, in order, and gives each its connection only when
 * the one before it has finished. hapi prepares and marshals the queued ones at once, so a streamed
 * file would hold its descriptor and its first chunk while it waits, for as long as a slow client
 * takes to read what comes before it. Waiting for the turn holds neither.
 */

/** The waiting responses of each connection, called when it closes: one 'close' listener per connection. */
const waitingOn = new WeakMap<Socket, Set<() => void>>();

/**
 * Null when `res` has its connection already (the usual case: nothing to wait for); else a promise of
 * its turn, true once the connection is `res`'s, false when the connection closed first.
 */
export function awaitTurn(req: IncomingMessage, res: ServerResponse): Promise<boolean> | null {
    if (res.socket !== null) {
        return null;
    }

    const connection = req.socket;
    if (connection.destroyed) {
        return Promise.resolve(false);
    }

    return new Promise((resolve) => {
        let waiting = waitingOn.get(connection);
        if (waiting === undefined) {
            const responses = new Set<() => void>();
            waiting = responses;
            waitingOn.set(connection, responses);
            connection.once('close', () => {
                for (const closed of responses) {
                    closed();
                }
            });
        }

        let closed = false;
        const onResponseClose = (): void => {
            closed = true;
        };
        const onClose = (): void => {
            res.off('socket', onTurn);
            res.off('close', onResponseClose);
            if (!closed) {
                // node closes the responses a connection had, not one still waiting its turn: closed here
                // like them, hapi (and any other listener) ends the request as one whose client went away.
                res.destroy();
                res.emit('close');
            }

            resolve(false);
        };
        const onTurn = (): void => {
            waiting.delete(onClose);
            res.off('close', onResponseClose);
            resolve(true);
        };
        waiting.add(onClose);
        res.once('socket', onTurn);
        res.once('close', onResponseClose);
    });
}
