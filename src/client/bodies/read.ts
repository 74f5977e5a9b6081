import type { IncomingHttpHeaders } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { declaredLength } from '../../common/message-body.js';
import type { HttpError } from '../../errors/index.js';
import {
    aborted,
    badUpstream,
    deadlineExceeded,
    invalidJson,
    invalidOption,
    notJson,
    payloadStreamFailure,
    payloadTooLarge,
    readTimeout
} from '../contract/errors.js';
import type { ReadOptions, WithoutNull } from '../contract/types.js';
import { checkOptions, withoutUnset } from '../options/options.js';
import { decodersFor, type EncodedSource, hasNoBody } from './content-decoding.js';
import { heldBodySpent, takeHeldBody } from './held-body.js';
import { ProgressCounter } from './progress.js';

// The reader rides on the streams it listens to, so the listeners are shared functions, not closures.
const readerOf = Symbol('tracewire.payloadReader');
type ReaderStream = Readable & { [readerOf]?: PayloadReader };

/**
 * What `read()` accepts: any readable stream. `headers`, when present (an `IncomingMessage`, or a
 * stream given them by the caller), tell the content-type, content-encoding and content-length.
 */
export type ReadableSource = Readable & EncodedSource & { complete?: boolean };

const noHeaders: IncomingHttpHeaders = {};

/** What is left of a call's deadline when its body is read: `left` ms of the `limit` the call had. */
export interface DeadlineLeft {
    readonly left: number;
    readonly limit: number;
}

/**
 * How the reader of a response tells the hop's timings that the reading ended: `bodyEnded` as the
 * last byte came (the response's own `end`), `bodyClosed` when it stopped before (cut: `error`; let
 * go: `abort`). The reader tells one of them, once; what the hop's own listeners noted first stands.
 * A hop that does not watch its body (`HopClock.responded`) learns its end only this way.
 */
export interface BodyNotes {
    bodyEnded(): void;
    bodyClosed(res: Readable): void;
}

/**
 * The headers of the stream, or none. Read only when an option needs them: an `IncomingMessage`
 * builds its `headers` object on first access, which costs more than reading a small response.
 */
function headersOf(res: ReadableSource): IncomingHttpHeaders {
    const headers = res.headers;
    return typeof headers === 'object' && headers !== null ? headers : noHeaders;
}

/**
 * Where a reader reports its one outcome. `read()` hands it to a promise; the per-method helpers
 * (`get()`, `post()`...) hand it straight to the request's own promise, with no promise in between.
 */
export interface ReadSink {
    /**
     * True when the stream is the sink's own until it settles (a helper's response, which its caller
     * only sees once read): a reader that read it to its end then leaves its listeners on it rather
     * than taking them off. A response destroys itself as it ends, before the sink hears of it, so
     * nothing but its `close` reaches them after (and the reader ignores that); the removals were the
     * reader's costliest step, for the code they run cold on every request (bench/README.md, "Profiling").
     */
    readonly ownsSource?: boolean;
    /** `bodyBytes`: the length of the body read, after any decoding (also when `json` parsed it). */
    readSucceeded(payload: unknown, bodyBytes: number): void;
    readFailed(err: HttpError): void;
}

/** The sink of `read()`: its promise. */
class PromiseSink implements ReadSink {
    constructor(
        readonly readSucceeded: (payload: unknown) => void,
        readonly readFailed: (err: HttpError) => void
    ) {}
}

/** Reads a response (or any readable stream) into a Buffer or parsed JSON (`ReadOptions`); every failure rejects, nothing throws. */
export function readPayload(res: ReadableSource, options: ReadOptions | null | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => {
        if (!isReadable(res)) {
            reject(invalidOption('read() needs a readable stream, such as the response of request()'));
            return;
        }

        const problem =
            options === undefined || options === null
                ? undefined
                : typeof options === 'object'
                  ? checkOptions(options as Record<string, unknown>)
                  : invalidOption('Read options must be an object or null');
        if (problem !== undefined) {
            reject(problem);
            return;
        }

        readCheckedPayload(res, options, false, new PromiseSink(resolve, reject));
    });
}

/**
 * Reads a response whose options were already checked (those of a request) into `sink`.
 * `rawUnlessJson`: for an error status, a body that is not JSON is returned raw rather than refused;
 * `bodyNotes`: the hop's timings, told how the reading of the response ended.
 */
export function readCheckedPayload(
    res: ReadableSource,
    options: ReadOptions | null | undefined,
    rawUnlessJson: boolean,
    sink: ReadSink,
    deadline?: DeadlineLeft,
    bodyNotes?: BodyNotes
): void {
    new PayloadReader(res, withoutUnset(options) ?? {}, rawUnlessJson, sink, deadline, bodyNotes);
}

/**
 * The failure of a stream that will emit nothing more, or undefined: one already read to its end, or
 * one destroyed before its end (a response reset right after its headers, a stream the caller let go)
 * before the reader came, whose `error` and `close` are past. A reader that waited for them would never
 * settle. A response cut short is reported as when it is cut while being read.
 */
function goneBefore(res: ReadableSource): HttpError | undefined {
    if (res.readableEnded === true || heldBodySpent(res)) {
        return payloadStreamFailure('Payload stream already read to its end');
    }

    if (res.destroyed === true || (res.errored ?? null) !== null) {
        return stoppedShort(res, res.errored ?? undefined);
    }

    return undefined;
}

/**
 * The failure of a stream that stopped before its end, with `err` when it failed: a response's error
 * is its connection cut short (the server or the network cut it); any other stream's error says why.
 */
function stoppedShort(res: ReadableSource, err: Error | undefined): HttpError {
    return err === undefined || typeof res.complete === 'boolean'
        ? payloadStreamFailure('Payload stream closed prematurely', err)
        : payloadStreamFailure(`Payload stream error: ${err.message}`, err);
}

function isReadable(value: unknown): value is ReadableSource {
    return (
        typeof value === 'object' &&
        value !== null &&
        typeof (value as Readable).on === 'function' &&
        typeof (value as Readable).pipe === 'function'
    );
}

/** A JSON media type: `application/json`, `text/json` or any `+json` suffix such as `application/problem+json`. */
export function isJsonContentType(contentType: string | undefined): boolean {
    if (contentType === undefined) {
        return false;
    }

    const semicolon = contentType.indexOf(';');
    const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
    return mediaType === 'application/json' || mediaType === 'text/json' || mediaType.endsWith('+json');
}

class PayloadReader {
    private chunks: Buffer[] = [];
    private settled = false;
    private length = 0;
    private readonly timer: NodeJS.Timeout | undefined;
    // What is left of the call's `deadline`, for a helper's read.
    private readonly deadlineTimer: NodeJS.Timeout | undefined;
    // The decoders the body goes through, in order; none when it is read as it is.
    private readonly decoders: Transform[] = [];
    private readonly maxBytes: number;
    // With `onDownloadProgress`: the body's bytes as received, counted before any decoding.
    private readonly progress: ProgressCounter | undefined;

    constructor(
        private readonly res: ReadableSource,
        private readonly options: WithoutNull<ReadOptions>,
        // For an error status: a body that is not JSON (by type or by syntax) is returned raw rather than refused.
        private readonly rawUnlessJson: boolean,
        private readonly sink: ReadSink,
        private readonly deadline: DeadlineLeft | undefined,
        // Told of the end of the response's body (its last byte, before any decoding), then dropped.
        private bodyNotes: BodyNotes | undefined
    ) {
        const signal = options.signal;
        this.maxBytes = options.maxBytes ?? 0;
        if (signal?.aborted) {
            this.fail(aborted(signal, 'read'));
            return;
        }

        const gone = goneBefore(res);
        if (gone !== undefined) {
            this.fail(gone);
            return;
        }

        const decoders = decodersFor(res, options.gunzip ? headersOf(res) : noHeaders, options.gunzip);
        if (!Array.isArray(decoders)) {
            this.fail(decoders);
            return;
        }

        this.decoders = decoders;
        if (this.maxBytes > 0 && decoders.length === 0 && Number(headersOf(res)['content-length']) > this.maxBytes) {
            // No need to read what is already known to be too large.
            this.fail(payloadTooLarge(this.maxBytes));
            return;
        }

        // In memory already (a response the cache made) and followed by no one else: taken whole.
        const held = decoders.length === 0 && !options.onDownloadProgress ? takeHeldBody(res) : undefined;
        if (held !== undefined) {
            this.push(held);
            if (!this.settled) {
                this.end();
            }

            return;
        }

        (res as ReaderStream)[readerOf] = this;
        res.on('error', onSourceError);
        res.on('close', onResponseClose);
        if (bodyNotes !== undefined && decoders.length > 0) {
            // The decoders end later than the response: its own end is the moment.
            res.on('end', onWireEnd);
        }

        let source: ReaderStream = res;
        for (const decoder of decoders) {
            (decoder as ReaderStream)[readerOf] = this;
            decoder.on('error', onDecodeError);
            source = source.pipe(decoder);
        }

        const onProgress = options.onDownloadProgress;
        if (onProgress !== undefined) {
            // A HEAD, 204 or 304 announces the length of a body it does not carry.
            const total = hasNoBody(res) ? 0 : declaredLength(headersOf(res)['content-length']);
            this.progress = new ProgressCounter(onProgress, 'onDownloadProgress', total, (err) => this.fail(err));
            res.on('data', onWireData);
        }

        source.on('data', onData);
        source.on('end', onEnd);
        if (options.timeout) {
            this.timer = setTimeout(onReadTimeout, options.timeout, this);
        }

        if (deadline !== undefined) {
            this.deadlineTimer = setTimeout(onReadDeadline, deadline.left, this);
        }

        signal?.addEventListener('abort', this);
    }

    /** The AbortSignal listener. */
    handleEvent(): void {
        this.fail(aborted(this.options.signal!, 'read'));
    }

    push(data: Buffer | string): void {
        // Streams in object mode (Readable.from(['a', 'b'])) may yield strings.
        const chunk = typeof data === 'string' ? Buffer.from(data) : data;
        this.length += chunk.length;
        if (this.maxBytes > 0 && this.length > this.maxBytes) {
            // Counted after decoding, so a small compressed bomb stops here too.
            this.fail(payloadTooLarge(this.maxBytes));
            return;
        }

        this.chunks.push(chunk);
    }

    /** Bytes of the body as received, for `onDownloadProgress`. */
    received(chunk: Buffer | string): void {
        this.progress!.add(typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length);
    }

    /** The last byte of the response arrived. */
    wireEnded(): void {
        const notes = this.bodyNotes;
        if (notes !== undefined) {
            this.bodyNotes = undefined;
            notes.bodyEnded();
        }
    }

    end(): void {
        this.wireEnded();
        if (this.progress !== undefined && !this.progress.finish()) {
            return;
        }

        const payload = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
        const json = this.options.json;
        if (!json) {
            this.succeed(payload);
            return;
        }

        const contentType = headersOf(this.res)['content-type'];
        if (json !== 'force' && !isJsonContentType(contentType)) {
            if (json === 'strict' && !this.rawUnlessJson) {
                this.fail(notJson(contentType));
            } else {
                this.succeed(payload);
            }

            return;
        }

        if (payload.length === 0) {
            this.succeed(null);
            return;
        }

        let parsed: unknown;
        try {
            parsed = JSON.parse(payload.toString('utf8'));
        } catch (err) {
            if (this.rawUnlessJson) {
                this.succeed(payload);
            } else {
                this.fail(invalidJson(err as SyntaxError, payload));
            }

            return;
        }

        this.succeed(parsed);
    }

    sourceFailed(err: Error): void {
        this.fail(stoppedShort(this.res, err));
    }

    decodeFailed(err: Error): void {
        this.fail(badUpstream(`Response payload could not be decompressed: ${err.message}`, err));
    }

    timedOut(): void {
        this.fail(readTimeout(this.options.timeout as number));
    }

    deadlinePassed(): void {
        this.fail(deadlineExceeded(this.deadline!.limit));
    }

    responseClosed(): void {
        // `complete` for a response (its whole body arrived), `readableEnded` for any other stream.
        if (!this.res.complete && !this.res.readableEnded) {
            this.fail(stoppedShort(this.res, undefined));
        }
    }

    private succeed(payload: unknown): void {
        this.settled = true;
        this.stopWatches();
        if (this.sink.ownsSource === true) {
            // The listeners stay on the ended, destroyed response, and this reader with them: not its chunks.
            this.chunks = [];
        } else {
            this.removeListeners();
        }

        this.sink.readSucceeded(payload, this.length);
    }

    fail(err: HttpError): void {
        if (this.settled) {
            // Defensive: once settled, no event changes the outcome (ownsSource leaves the listeners on).
            return;
        }

        this.settled = true;
        this.stopWatches();
        this.removeListeners();
        // Nothing more will be read: free the socket rather than leave a half-read response on it.
        this.res.destroy();
        this.bodyNotes?.bodyClosed(this.res);
        for (const decoder of this.decoders) {
            decoder.destroy();
        }

        this.sink.readFailed(err);
    }

    /** The read's bounds: its timeout, what is left of the deadline, the signal. */
    private stopWatches(): void {
        clearTimeout(this.timer);
        clearTimeout(this.deadlineTimer);
        this.options.signal?.removeEventListener('abort', this);
    }

    private removeListeners(): void {
        const res = this.res;
        res.removeListener('error', onSourceError);
        res.removeListener('close', onResponseClose);
        if (this.progress !== undefined) {
            res.removeListener('data', onWireData);
        }

        const decoders = this.decoders;
        if (decoders.length > 0) {
            res.removeListener('end', onWireEnd);
        }

        const source: Readable = decoders.at(-1) ?? res;
        source.removeListener('data', onData);
        source.removeListener('end', onEnd);
        let upstream: Readable = res;
        for (const decoder of decoders) {
            upstream.unpipe(decoder);
            decoder.removeListener('error', onDecodeError);
            upstream = decoder;
        }
    }
}

function onData(this: ReaderStream, chunk: Buffer): void {
    this[readerOf]!.push(chunk);
}

function onWireData(this: ReaderStream, chunk: Buffer | string): void {
    this[readerOf]!.received(chunk);
}

function onWireEnd(this: ReaderStream): void {
    this[readerOf]!.wireEnded();
}

function onEnd(this: ReaderStream): void {
    this[readerOf]!.end();
}

function onSourceError(this: ReaderStream, err: Error): void {
    this[readerOf]!.sourceFailed(err);
}

function onResponseClose(this: ReaderStream): void {
    this[readerOf]!.responseClosed();
}

function onDecodeError(this: ReaderStream, err: Error): void {
    this[readerOf]!.decodeFailed(err);
}

function onReadTimeout(reader: PayloadReader): void {
    reader.timedOut();
}

function onReadDeadline(reader: PayloadReader): void {
    reader.deadlinePassed();
}
