import * as Fs from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { internal } from '../errors/index.js';
import { FileBody } from './file-body.js';
import { readBytes, statFd } from './fs.js';
import type { MultipartPart, MultipartRanges } from './multipart-ranges.js';
import { type FileIdentity, hasSameBytes } from './same-file.js';

/*
 * The streamed body of a multipart/byteranges response. A large part is its header, then its bytes
 * read by a FileBody of its own on the one descriptor, which checks before the part's last chunk
 * that the file is still the one the headers describe. Small parts are read at once, together with
 * the small parts after them, and checked the same way before they go out: a thread-pool read, a
 * check and a socket write per part of a few bytes cost more than a whole-file response (100 parts
 * of 100 bytes beside one large part took twice the CPU of sending the 1.5 MiB file whole). A file
 * changed meanwhile fails the body and hapi ends the connection, as for a single range. Nothing is
 * read before the consumer asks for it; the descriptor is closed once, when the body ends or is
 * destroyed.
 */

/** Parts up to this long are read at once (the plugin reads up to 64 KiB synchronously: README, "I/O model"). */
const smallPart = 16 * 1024;
/** Small parts read at once add up to this many bytes at most: the synchronous budget, as the parts themselves. */
const batchLimit = 64 * 1024;

/** True when `part` is small and joins a batch of `bytes` without making it larger than the limit. */
function fitsBatch(part: MultipartPart, bytes: number): boolean {
    return part.length <= smallPart && bytes + part.header.length + part.length <= batchLimit;
}

export interface MultipartBodyOptions {
    fd: number;
    path: string;
    /** The file's stats when it was opened: what every header of the response describes. */
    stats: FileIdentity;
    multipart: MultipartRanges;
    /** The connection the body is written to (FileBody sizes its chunks by its backlog). */
    sink: Writable | null;
}

export class MultipartBody extends Readable {
    readonly #options: MultipartBodyOptions;
    /** The index of the next part to start. */
    #next = 0;
    /** The body of the part being sent. */
    #part: FileBody | null = null;
    /** The consumer asked for a chunk that has not been pushed yet. */
    #asked = false;

    constructor(options: MultipartBodyOptions) {
        // No read-ahead: a part's chunk is passed on only when the consumer asks for one.
        super({ highWaterMark: 0 });
        this.#options = options;
    }

    override _read(): void {
        this.#asked = true;
        if (this.#part !== null) {
            this.#part.resume();
            return;
        }

        this.#advance();
    }

    /** Starts the next part, or ends the body after the last one. */
    #advance(): void {
        const { fd, path, stats, multipart, sink } = this.#options;
        if (this.#next === multipart.parts.length) {
            this.#send(multipart.closing);
            this.push(null);
            return;
        }

        if (multipart.parts[this.#next]!.length <= smallPart) {
            this.#sendSmallParts();
            return;
        }

        const { header, offset, length } = multipart.parts[this.#next++]!;
        const part = new FileBody({ fd, path, stats, offset, length, sink, onHashed: null, closesFd: false });
        this.#part = part;
        if (!this.#send(header)) {
            // Paused before it flows: it is resumed when the consumer asks for more.
            part.pause();
        }

        part.on('data', (chunk: Buffer) => {
            if (!this.#send(chunk)) {
                part.pause();
            }
        });
        part.once('end', () => {
            this.#part = null;
            // A read the part's last chunk did not answer goes on with the next part; else the next read does.
            if (this.#asked && !this.destroyed) {
                this.#advance();
            }
        });
        part.once('error', (err) => this.destroy(err));
    }

    /** The next small parts (and the closing delimiter after the last), read and checked at once. */
    #sendSmallParts(): void {
        const { fd, path, stats, multipart } = this.#options;
        const chunks: Buffer[] = [];
        let bytes = 0;
        try {
            do {
                const { header, offset, length } = multipart.parts[this.#next++]!;
                const part = readBytes(fd, path, offset, length);
                if (part === null) {
                    throw internal(`File ${path} shrank while it was sent`, { path });
                }

                chunks.push(header, part);
                bytes += header.length + length;
            } while (this.#next < multipart.parts.length && fitsBatch(multipart.parts[this.#next]!, bytes));

            // Its bytes, not its path: a file renamed over or unlinked meanwhile still has them.
            if (!hasSameBytes(stats, statFd(fd, path))) {
                throw internal(`File ${path} changed while it was sent`, { path });
            }
        } catch (err) {
            this.destroy(err as Error);
            return;
        }

        const last = this.#next === multipart.parts.length;
        if (last) {
            chunks.push(multipart.closing);
        }

        this.#send(Buffer.concat(chunks));
        if (last) {
            this.push(null);
        }
    }

    /** Pushes a chunk, which answers the consumer's read. */
    #send(chunk: Buffer): boolean {
        this.#asked = false;
        return this.push(chunk);
    }

    override _destroy(error: Error | null, callback: (err: Error | null) => void): void {
        const close = () => Fs.close(this.#options.fd, () => callback(error));
        const part = this.#part;
        if (part === null || part.closed) {
            close();
            return;
        }

        // The part's read in progress finishes before the descriptor under it is closed.
        part.once('close', close);
        part.destroy();
    }
}
