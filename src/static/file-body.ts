import { createHash, type Hash } from 'node:crypto';
import * as Fs from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { internal } from '../errors/index.js';
import { toPathError } from './fs.js';
import { type FileIdentity, hasSameBytes, identityOf } from './same-file.js';

/*
 * The body of a streamed file response. Two jobs no `fs.ReadStream` does:
 * - A response is never passed off as complete when it is not: a file that ends before the bytes
 *   announced in `content-length`, or whose descriptor no longer describes the file opened once
 *   the last byte is read (written, truncated, extended meanwhile), fails the stream before that
 *   last chunk goes out, and hapi then ends the connection, as nginx does. A file renamed over (an
 *   atomic deploy) keeps the open descriptor on the old contents, which are sent whole: its changed
 *   change time and link count are the path's news, not its bytes'.
 * - What a stalled response holds stays small: chunks start at 16 KiB and double up to 256 KiB only
 *   while the client keeps up (its socket has nothing queued when the next chunk is read), and nothing
 *   is read ahead of what the consumer asks for (a paused pipe asks for nothing). Large chunks are what makes large files fast
 *   (each costs a thread-pool read and a socket write); a stalled client then holds one chunk.
 * A chunk's buffer is read into again once nothing can still hold the chunk: the body is piped into its
 * connection alone and the connection has written everything it was given (`#chunksWritten`). A 10 MiB
 * response then allocates five buffers (16 to 256 KiB) instead of one per chunk, forty-odd: each was
 * memory outside V8's heap that V8 answers with a full garbage collection every few responses
 * (docs/performance.md). Any other consumer (a compressor, a tap, a reader of its own) gets a new
 * buffer per chunk, since nothing tells when it is done with one.
 */

const firstChunkSize = 16 * 1024;
const largestChunkSize = 256 * 1024;

export interface FileBodyOptions {
    fd: number;
    path: string;
    /** The file's stats when it was opened: what every header of the response describes. */
    stats: FileIdentity;
    offset: number;
    length: number;
    /** The connection the body is written to: its backlog decides the size of the next chunk. */
    sink: Writable | null;
    /** Called with the SHA-1 of the bytes sent once all of them were sent from an unchanged file. */
    onHashed: ((tag: string) => void) | null;
    /** False when the caller closes the descriptor after the body (multipart-body.ts streams several from one). */
    closesFd?: boolean;
}

/** Streams `length` bytes of an open file from `offset`, closing the descriptor when done or destroyed. */
export class FileBody extends Readable {
    readonly #fd: number;
    readonly #path: string;
    readonly #opened: FileIdentity;
    readonly #sink: Writable | null;
    readonly #hash: Hash | null;
    readonly #onHashed: ((tag: string) => void) | null;
    readonly #closesFd: boolean;
    #position: number;
    #remaining: number;
    #chunkSize = firstChunkSize;
    /** True while a read is on the thread pool. */
    #busy = false;
    /** Set when destroyed during `io`: the descriptor is closed once the call returns, never under it. */
    #closeAfterIo: (() => void) | null = null;
    /** The buffer of the last chunk read, which the next read may fill again (`#chunksWritten`). */
    #spare: Buffer | null = null;

    constructor(options: FileBodyOptions) {
        // No read-ahead: a chunk is read only when the consumer asks for one.
        super({ highWaterMark: 0 });
        this.#fd = options.fd;
        this.#path = options.path;
        this.#opened = identityOf(options.stats);
        this.#sink = options.sink;
        this.#position = options.offset;
        this.#remaining = options.length;
        this.#onHashed = options.onHashed;
        this.#closesFd = options.closesFd ?? true;
        this.#hash = options.onHashed === null ? null : createHash('sha1');
    }

    override _read(): void {
        if (this.#busy) {
            return;
        }

        // A client that keeps up (nothing queued on its socket) gets larger chunks, one behind starts small again.
        const sink = this.#sink;
        if (sink !== null && this.#position > 0) {
            this.#chunkSize =
                sink.writableLength === 0 ? Math.min(this.#chunkSize * 2, largestChunkSize) : firstChunkSize;
        }

        this.#readChunk();
    }

    /** True when the stream was destroyed during the call that just returned: the descriptor is closed now. */
    #ioDone(): boolean {
        this.#busy = false;
        const close = this.#closeAfterIo;
        if (close === null) {
            return false;
        }

        close();
        return true;
    }

    #readChunk(): void {
        const size = Math.min(this.#chunkSize, this.#remaining);
        const buffer = this.#bufferFor(size);
        this.#busy = true;
        Fs.read(this.#fd, buffer, 0, size, this.#position, (err, bytesRead) => {
            if (this.#ioDone()) {
                return;
            }

            if (err) {
                this.destroy(toPathError(err, this.#path));
                return;
            }

            if (bytesRead === 0) {
                this.destroy(this.#changed());
                return;
            }

            const chunk = bytesRead === size ? buffer : buffer.subarray(0, bytesRead);
            this.#position += bytesRead;
            this.#remaining -= bytesRead;
            this.#hash?.update(chunk);
            if (this.#remaining > 0) {
                this.push(chunk);
                return;
            }

            this.#finish(chunk);
        });
    }

    /** The spare buffer when every chunk is written and it is large enough, else a new one (the spare when larger). */
    #bufferFor(size: number): Buffer {
        const spare = this.#spare;
        if (spare !== null && spare.length >= size && this.#chunksWritten()) {
            return spare.length === size ? spare : spare.subarray(0, size);
        }

        const buffer = Buffer.allocUnsafeSlow(size);
        if (spare === null || size > spare.length) {
            this.#spare = buffer;
        }

        return buffer;
    }

    /**
     * True when no chunk pushed so far can be held by anyone: none waits in this stream, its one
     * consumer is the pipe into the connection, and the connection has nothing left to write (a
     * response's `writableLength` counts what it buffers and what its socket has not written yet, a
     * chunk handed to the system included, until its write completes).
     */
    #chunksWritten(): boolean {
        const sink = this.#sink;
        if (
            sink === null ||
            this.readableLength !== 0 ||
            sink.writableLength !== 0 ||
            this.listenerCount('data') !== 1
        ) {
            return false;
        }

        // Node's record of where the stream is piped; anything unexpected there means a new buffer.
        const pipes = (this as unknown as { _readableState?: { pipes?: unknown } })._readableState?.pipes;
        return Array.isArray(pipes) && pipes.length === 1 && pipes[0] === sink;
    }

    /**
     * The last chunk goes out only when the descriptor still shows the bytes that were opened (same-file.ts).
     * The `fstat` is synchronous, as the plugin's other metadata calls (docs/static-files.md, "I/O model"):
     * a thread-pool round trip per response cost more than the call.
     */
    #finish(last: Buffer): void {
        let now: Fs.Stats;
        try {
            now = Fs.fstatSync(this.#fd);
        } catch (err) {
            this.destroy(toPathError(err as NodeJS.ErrnoException, this.#path));
            return;
        }

        if (!hasSameBytes(this.#opened, now)) {
            this.destroy(this.#changed());
            return;
        }

        if (this.#hash !== null) {
            this.#onHashed?.(this.#hash.digest('hex'));
        }

        this.push(last);
        this.push(null);
    }

    #changed(): Error {
        return internal(`File ${this.#path} changed while it was sent`, { path: this.#path });
    }

    override _destroy(error: Error | null, callback: (err: Error | null) => void): void {
        const close = this.#closesFd ? () => Fs.close(this.#fd, () => callback(error)) : () => callback(error);
        if (this.#busy) {
            this.#closeAfterIo = close;
            return;
        }

        close();
    }
}
