import type { Writable } from 'node:stream';
import type { HttpError } from '../../errors/index.js';
import { clientFailure } from '../contract/errors.js';
import type { ProgressCallback, TransferProgress } from '../contract/types.js';

/**
 * Transfer progress for `onUploadProgress` and `onDownloadProgress` (README "Progress"): the body
 * bytes moved so far, never decreasing, and the last call with the whole body once it has moved.
 * A callback that throws is not called again, and its request fails with a 500 naming it.
 */
export class ProgressCounter {
    private transferred = 0;
    // -1 until the first call: a body of 0 bytes still gets one.
    private reported = -1;
    private failed = false;

    constructor(
        private readonly callback: ProgressCallback,
        private readonly option: 'onUploadProgress' | 'onDownloadProgress',
        public total: number | undefined,
        private readonly onFailure: (err: HttpError) => void
    ) {}

    /** `bytes` more have moved. */
    add(bytes: number): void {
        if (bytes > 0) {
            this.transferred += bytes;
            this.report();
        }
    }

    /** The body has moved whole: one last call unless the last one already said so. False when the callback failed. */
    finish(): boolean {
        if (this.reported !== this.transferred) {
            this.report();
        }

        return !this.failed;
    }

    private report(): void {
        if (this.failed) {
            return;
        }

        const transferred = this.transferred;
        const total = this.total;
        this.reported = transferred;
        const progress: TransferProgress = {
            transferred,
            total,
            percent: total === undefined ? undefined : total === 0 ? 100 : Math.min(100, (transferred / total) * 100)
        };
        try {
            this.callback(progress);
        } catch (err) {
            this.failed = true;
            const message = err instanceof Error ? err.message : String(err);
            this.onFailure(clientFailure(`The ${this.option} callback threw: ${message}`, err));
        }
    }
}

/** What an upload reports a failed callback to: the exchange it belongs to. */
export interface UploadOwner {
    uploadFailed(err: HttpError): void;
}

// Slices of a Buffer or string body, written one after the other as the socket takes them, so that
// progress follows the wire instead of jumping from 0 to the whole body in one write.
const sliceSize = 64 * 1024;

type WriteFn = (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;
const uploadKey = Symbol('tracewire.upload');
type UploadTarget = Writable & { [uploadKey]: Upload };

/**
 * Follows the body of one hop's request (whatever the transport: a request or a stream is a
 * `Writable`): every chunk written to it counts once the transport has taken it (its write callback),
 * whoever writes it (`send()` below, or the stream payload's pipe). `total` is the declared length,
 * when known. A re-send (redirect, retry) is a new request, so its progress starts again from 0.
 */
export function trackUpload(
    req: Writable,
    total: number | undefined,
    callback: ProgressCallback,
    owner: UploadOwner
): Upload {
    const upload = new Upload(req, total, callback, owner);
    (req as UploadTarget)[uploadKey] = upload;
    const target = req as unknown as { write: WriteFn };
    target.write = progressWrite;
    req.once('finish', onFinish);
    return upload;
}

/** The upload of one request: its counter, and the sending of a string or Buffer body. */
export class Upload {
    readonly counter: ProgressCounter;
    readonly write: WriteFn;
    private body: Buffer | undefined;
    private offset = 0;

    constructor(
        private readonly req: Writable,
        total: number | undefined,
        callback: ProgressCallback,
        owner: UploadOwner
    ) {
        this.write = (req as unknown as { write: WriteFn }).write;
        this.counter = new ProgressCounter(callback, 'onUploadProgress', total, (err) => owner.uploadFailed(err));
    }

    /** Sends a string or Buffer body (or none) in slices, then ends the request. */
    send(body: string | Buffer | undefined): void {
        if (body === undefined) {
            this.counter.total ??= 0;
        } else {
            this.body = typeof body === 'string' ? Buffer.from(body) : body;
        }

        this.writeSlices();
    }

    // Shared by the 'drain' listener: it runs once per wait.
    private readonly writeSlices = (): void => {
        const { req, body } = this;
        if (body !== undefined) {
            // A request destroyed meanwhile emits no 'drain': the loop stops at its first refused write.
            while (this.offset < body.length) {
                const slice = body.subarray(this.offset, this.offset + sliceSize);
                this.offset += slice.length;
                if (!req.write(slice)) {
                    req.once('drain', this.writeSlices);
                    return;
                }
            }
        }

        req.end();
    };
}

function progressWrite(this: UploadTarget, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const upload = this[uploadKey];
    const done = typeof encoding === 'function' ? encoding : callback;
    const bytes = byteLength(chunk, typeof encoding === 'string' ? encoding : undefined);
    return upload.write.call(this, chunk, typeof encoding === 'string' ? encoding : undefined, (err?: Error | null) => {
        if (err === undefined || err === null) {
            upload.counter.add(bytes);
        }

        if (typeof done === 'function') {
            done(err);
        }
    });
}

function onFinish(this: UploadTarget): void {
    this[uploadKey].counter.finish();
}

function byteLength(chunk: unknown, encoding: string | undefined): number {
    if (typeof chunk === 'string') {
        return Buffer.byteLength(chunk, encoding !== undefined && Buffer.isEncoding(encoding) ? encoding : 'utf8');
    }

    const size = (chunk as Partial<ArrayBufferView> | null | undefined)?.byteLength;
    return typeof size === 'number' ? size : 0;
}
