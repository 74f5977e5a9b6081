import type { Readable, Writable } from 'node:stream';
import type { HttpError } from '../../errors/index.js';
import { clientFailure } from '../contract/errors.js';

/**
 * How much of a stream payload is kept so that a later request (a redirect that keeps the payload) can send it
 * again: 1 MiB. A larger stream is still sent in full the first time; only a re-send is refused.
 */
export const streamReplayLimit = 1024 * 1024;

/**
 * Sends a stream payload into one request after another, keeping a copy of what was read (up to
 * `limit` bytes) so that the next request gets the whole body again: the recorded chunks, then the
 * rest of the stream as it comes. Nothing is read from the stream until `sendTo()` is called, so a
 * request that fails before its connection exists leaves the stream untouched.
 *
 * `limit` 0 keeps no copy: the stream can then be sent again only while nothing has been read from it.
 */
export class PayloadReplay {
    private readonly chunks: Buffer[] = [];
    private recorded = 0;
    // True once more than `limit` bytes were read: the copy is dropped, the payload cannot be re-sent.
    private overflowed = false;
    private read = false;
    private ended = false;
    private failure: Error | undefined;
    private target: Writable | undefined;
    private listening = false;
    private disposed = false;

    /**
     * @param onError called with the stream's error (once, while this replay is in use); the stream
     *   is not read again after it.
     */
    constructor(
        readonly source: Readable,
        readonly limit: number,
        private readonly onError: (err: Error) => void
    ) {
        // Listening from the start: a stream that fails before any request is connected fails the request.
        source.on('error', this.handleError);
    }

    /**
     * Why the payload cannot be sent (again), or undefined when `sendTo()` can send all of it.
     */
    replayProblem(): HttpError | undefined {
        if (this.failure !== undefined) {
            return clientFailure(`The stream payload failed: ${this.failure.message}`, this.failure);
        }

        if (!this.read) {
            return undefined;
        }

        if (this.overflowed || this.limit === 0) {
            return clientFailure(
                `Cannot send a stream payload again: it is larger than the ${this.limit} bytes kept for a re-send (send a Buffer instead)`
            );
        }

        return undefined;
    }

    /**
     * Writes the whole payload into `target` (what was recorded, then the rest of the stream) and
     * ends it. Call `replayProblem()` first: on a payload that cannot be re-sent this writes nothing.
     */
    sendTo(target: Writable): void {
        this.detach();
        if (this.replayProblem() !== undefined) {
            return;
        }

        this.target = target;
        // A request that ends early (destroyed, failed) must not keep the stream flowing into it.
        target.once('close', this.handleTargetClose);
        for (const chunk of this.chunks) {
            target.write(chunk);
        }

        if (this.ended || (!this.listening && this.source.readableEnded)) {
            // Ended already (here, or before it was given to us): 'end' will not come again.
            this.ended = true;
            this.detach();
            target.end();
            return;
        }

        if (!this.listening && this.source.destroyed) {
            // Destroyed without an error: no data and no 'end' will ever come.
            this.detach();
            this.handleError(new Error('The stream payload was destroyed before it was sent'));
            return;
        }

        if (!this.listening) {
            this.listening = true;
            this.source.on('data', this.handleData);
            this.source.on('end', this.handleEnd);
        }

        this.source.resume();
    }

    /** Stops writing into the current target (its request ended); the stream pauses where it is. */
    detach(): void {
        const target = this.target;
        if (target !== undefined) {
            this.target = undefined;
            target.removeListener('drain', this.handleDrain);
            target.removeListener('close', this.handleTargetClose);
            this.source.pause();
        }

        if (this.disposed) {
            this.stopListening();
        }
    }

    private stopListening(): void {
        if (this.listening) {
            this.listening = false;
            this.source.removeListener('data', this.handleData);
            this.source.removeListener('end', this.handleEnd);
        }
    }

    /** Lets go of the stream and the copy. A send under way carries on to its end without recording. */
    dispose(): void {
        this.source.removeListener('error', this.handleError);
        this.chunks.length = 0;
        this.overflowed = true;
        this.disposed = true;
        if (this.target === undefined) {
            this.stopListening();
        }
    }

    private readonly handleData = (chunk: Buffer | string): void => {
        this.read = true;
        const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        if (!this.overflowed) {
            this.recorded += buffer.length;
            if (this.recorded > this.limit) {
                // Past the bound: free the copy now rather than hold memory for a re-send that cannot happen.
                this.overflowed = true;
                this.chunks.length = 0;
            } else {
                this.chunks.push(buffer);
            }
        }

        const target = this.target;
        if (target === undefined) {
            // Between requests: hold the stream until the next one.
            this.source.pause();
        } else if (!target.write(buffer)) {
            this.source.pause();
            target.once('drain', this.handleDrain);
        }
    };

    private readonly handleDrain = (): void => {
        this.source.resume();
    };

    private readonly handleEnd = (): void => {
        this.ended = true;
        this.stopListening();
        const target = this.target;
        if (target !== undefined) {
            this.target = undefined;
            target.removeListener('drain', this.handleDrain);
            target.removeListener('close', this.handleTargetClose);
            target.end();
        }
    };

    private readonly handleError = (err: Error): void => {
        if (this.failure === undefined) {
            this.failure = err;
            this.onError(err);
        }
    };

    private readonly handleTargetClose = (): void => {
        this.detach();
    };
}
