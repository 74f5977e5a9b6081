import * as Fs from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { FileBody } from './file-body.js';
import type { MultipartRanges } from './multipart-ranges.js';
import type { FileIdentity } from './same-file.js';

/*
 * The streamed body of a multipart/byteranges response: each part's header, then its bytes read by
 * a FileBody of their own on the one descriptor, which therefore checks, before each part's last
 * chunk, that the file is still the one the headers describe (a file changed meanwhile fails the
 * body and hapi ends the connection, as for a single range). One part is read at a time and only as
 * fast as the consumer asks; the descriptor is closed once, when the body ends or is destroyed.
 */

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

    constructor(options: MultipartBodyOptions) {
        // No read-ahead: a part's chunk is passed on only when the consumer asks for one.
        super({ highWaterMark: 0 });
        this.#options = options;
    }

    override _read(): void {
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
            this.push(multipart.closing);
            this.push(null);
            return;
        }

        const { header, offset, length } = multipart.parts[this.#next++]!;
        const part = new FileBody({ fd, path, stats, offset, length, sink, onHashed: null, closesFd: false });
        this.#part = part;
        if (!this.push(header)) {
            // Paused before it flows: it is resumed when the consumer asks for more.
            part.pause();
        }

        part.on('data', (chunk: Buffer) => {
            if (!this.push(chunk)) {
                part.pause();
            }
        });
        part.once('end', () => {
            this.#part = null;
            if (!this.destroyed) {
                // Pushing the next header unasked costs its few bytes; the part behind it waits to be asked for.
                this.#advance();
            }
        });
        part.once('error', (err) => this.destroy(err));
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
