import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { http } from '../common/node-modules.js';
import { headersOf, type PreparedReply } from './reply.js';

/** What a mocked response tells its exchange. */
export interface ResponseOwner {
    /** The body stops short (`cutAfter`, or its stream failed): the exchange fails it as its connection would. */
    bodyCut(): void;
    /** The response was destroyed (by its reader, or cut) before or after its end. */
    responseDestroyed(): void;
}

/**
 * The response of a mocked exchange (docs/testing.md, "Replies"): an `IncomingMessage` without a
 * socket, as an HTTP/2 response is (wire/http2/response.ts), whose body is fed from the reply at the
 * pace its reader takes it (`push()` returning false waits for the next read), after the reply's body
 * delay, and cut after `cut` bytes when the reply says so.
 */
export function mockResponse(
    reply: PreparedReply,
    httpVersion: '1.1' | '2.0',
    cut: number | undefined,
    owner: ResponseOwner
): { res: IncomingMessage; feed: BodyFeed } {
    const res = new http.IncomingMessage(null as unknown as Socket) as IncomingMessage & { [feedOf]: BodyFeed };
    res.statusCode = reply.status;
    res.statusMessage = reply.statusMessage;
    res.httpVersion = httpVersion;
    res.httpVersionMajor = httpVersion === '2.0' ? 2 : 1;
    res.httpVersionMinor = httpVersion === '2.0' ? 0 : 1;
    res.headers = headersOf(reply.fields);
    res.rawHeaders = reply.fields.flat();
    const feed = new BodyFeed(res, reply.body, cut, owner);
    res[feedOf] = feed;
    res._read = readFeed;
    res._destroy = destroyResponse;
    return { res, feed };
}

const feedOf = Symbol('tracewire.mockFeed');
type FedResponse = IncomingMessage & { [feedOf]: BodyFeed };

// Slices of a Buffer body, pushed one after the other as the reader takes them (as a socket would deliver them).
const sliceSize = 64 * 1024;

export class BodyFeed {
    private started = false;
    private stopped = false;
    private offset = 0;
    private timer: NodeJS.Timeout | undefined;
    private cutAt: NodeJS.Immediate | undefined;

    constructor(
        private readonly res: IncomingMessage,
        private readonly body: Buffer | Readable | undefined,
        private readonly cut: number | undefined,
        private readonly owner: ResponseOwner
    ) {}

    /**
     * The body starts after `delay` ms; without one, at once: as Node's parser pushes the bytes that
     * came with the head before the turn of the loop ends (a small body is read, and its connection
     * back in its pool, before a timer of 0 ms runs: a retry then reuses it).
     */
    start(delay: number): void {
        if (delay > 0 && this.body !== undefined) {
            this.timer = setTimeout(begin, delay, this);
        } else if (this.stopped && this.res.httpVersionMajor === 1) {
            this.pushWithHead();
        } else {
            this.begin();
        }
    }

    /** The reader wants more. */
    pull(): void {
        if (!this.started || this.stopped) {
            return;
        }

        if (Buffer.isBuffer(this.body)) {
            this.pushSlices(this.body);
        } else {
            this.body?.resume();
        }
    }

    /** Nothing more is sent (the response was destroyed or cut). */
    stop(): void {
        if (this.stopped) {
            return;
        }

        this.stopped = true;
        clearTimeout(this.timer);
        clearImmediate(this.cutAt);
        const body = this.body;
        if (body !== undefined && !Buffer.isBuffer(body)) {
            body.destroy();
        }
    }

    /** The response was destroyed. */
    destroyed(): void {
        this.stop();
        this.owner.responseDestroyed();
    }

    begin(): void {
        if (this.stopped) {
            return;
        }

        this.started = true;
        const body = this.body;
        if (body === undefined) {
            this.finish();
        } else if (Buffer.isBuffer(body)) {
            this.pushSlices(body);
        } else {
            body.on('data', (chunk: Buffer | string) =>
                this.pushChunk(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
            );
            body.once('end', () => this.finish());
            // The server's stream failed: it would destroy the response, cutting its body short.
            body.once('error', () => this.cutNow());
        }
    }

    /**
     * A response its `response` listeners destroyed over HTTP/1.1 still has the bytes that came in its
     * head's packet pushed, and its end when they were the whole body: Node's parser goes on with the
     * packet it was reading (a push to a destroyed stream is dropped; whoever took over `push`, as the
     * cache's copy of a body does, sees them). Here the packet is the body's first slice.
     */
    private pushWithHead(): void {
        const body = this.body ?? Buffer.alloc(0);
        if (!Buffer.isBuffer(body)) {
            // A stream's bytes come after its head.
            return;
        }

        const first = body.subarray(0, Math.min(sliceSize, this.cut ?? body.length));
        if (first.length > 0) {
            this.res.push(first);
        }

        if (first.length === body.length) {
            this.res.complete = true;
            this.res.push(null);
        }
    }

    private pushSlices(body: Buffer): void {
        // A cut at or past the end of a body of known length leaves it whole: its length frames it.
        const stop = this.cut !== undefined && this.cut < body.length ? this.cut : body.length;
        while (this.offset < stop) {
            const slice = body.subarray(this.offset, Math.min(stop, this.offset + sliceSize));
            this.offset += slice.length;
            if (!this.res.push(slice) && this.offset < stop) {
                return;
            }
        }

        if (stop === body.length) {
            this.finish();
        } else if (this.cutAt === undefined) {
            // On a later turn of the loop, as a connection's end comes after the bytes it carried:
            // whoever got the response has had the turn to start reading it.
            this.cutAt = setImmediate(cutLater, this);
        }
    }

    private pushChunk(chunk: Buffer): void {
        if (this.stopped) {
            return;
        }

        const cut = this.cut;
        if (cut !== undefined && this.offset + chunk.length > cut) {
            const part = chunk.subarray(0, cut - this.offset);
            this.offset = cut;
            if (part.length > 0) {
                this.res.push(part);
            }

            this.cutNow();
            return;
        }

        this.offset += chunk.length;
        if (!this.res.push(chunk)) {
            (this.body as Readable).pause();
        }
    }

    private finish(): void {
        if (this.stopped) {
            return;
        }

        this.stopped = true;
        this.res.complete = true;
        this.res.push(null);
    }

    /** The body stops here: the exchange fails it as its connection's end would. */
    cutNow(): void {
        if (this.stopped) {
            return;
        }

        this.stop();
        this.owner.bodyCut();
    }
}

function begin(feed: BodyFeed): void {
    feed.begin();
}

function cutLater(feed: BodyFeed): void {
    feed.cutNow();
}

function readFeed(this: FedResponse): void {
    this[feedOf].pull();
}

/**
 * As Node's own: a response let go before its end is aborted, and its error is emitted only to
 * listeners of it (a response nobody reads fails nobody); the feed stops and the exchange lets go of it.
 */
function destroyResponse(this: FedResponse, err: Error | null, callback: (err?: Error | null) => void): void {
    const feed = this[feedOf];
    if (!this.complete) {
        this.aborted = true;
        this.emit('aborted');
    }

    feed.destroyed();
    callback(this.listenerCount('error') === 0 ? null : err);
}
