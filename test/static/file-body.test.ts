import * as Fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileBody } from '../../src/static/file-body.js';
import { createFixture, type Fixture } from './helpers.js';

/*
 * What a streamed file response holds (README, "Static files"): chunks start small and grow only while
 * the client keeps up, and a paused response reads nothing ahead.
 */

const KiB = 1024;
const size = 2 * 1024 * KiB + 100;
const bytes = Buffer.alloc(size, 'chunked file body\n');

let fixture: Fixture;
let path: string;

beforeAll(() => {
    fixture = createFixture();
    path = join(fixture.root, 'chunked.bin');
    Fs.writeFileSync(path, bytes);
});

afterAll(() => {
    fixture.remove();
});

/** A connection whose socket buffer is empty (`backlog` 0) or holds `backlog` bytes it never sends. */
function sinkWithBacklog(backlog: number): Writable {
    const sink = new Writable({ highWaterMark: 1, write: () => undefined });
    if (backlog > 0) {
        sink.write(Buffer.alloc(backlog));
    }

    return sink;
}

function bodyOf(sink: Writable | null): FileBody {
    const fd = Fs.openSync(path, 'r');
    return new FileBody({ fd, path, stats: Fs.fstatSync(fd), offset: 0, length: size, sink, onHashed: null });
}

async function chunkSizes(body: FileBody): Promise<number[]> {
    const sizes: number[] = [];
    for await (const chunk of body) {
        sizes.push((chunk as Buffer).length);
    }

    return sizes;
}

describe('the chunks of a streamed file body', () => {
    it('start at 16 KiB and double up to 256 KiB while the client keeps up', async () => {
        const sizes = await chunkSizes(bodyOf(sinkWithBacklog(0)));
        expect(sizes.slice(0, 6)).toEqual([16, 32, 64, 128, 256, 256].map((n) => n * KiB));
        expect(sizes.reduce((a, b) => a + b, 0)).toBe(size);
    });

    it('stay at 16 KiB while the client is behind (bytes queued on its socket)', async () => {
        const sizes = await chunkSizes(bodyOf(sinkWithBacklog(1)));
        expect(new Set(sizes.slice(0, -1))).toEqual(new Set([16 * KiB]));
        expect(sizes.reduce((a, b) => a + b, 0)).toBe(size);
    });

    it('read nothing ahead of a paused consumer: a stalled response holds one chunk', async () => {
        const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
        const body = bodyOf(sinkWithBacklog(0));
        const first = await new Promise<Buffer>((resolve) => body.once('data', resolve));
        body.pause();
        await settle();
        expect(first.length).toBe(16 * KiB);
        // The read asked for as the first chunk was delivered (the next size, 32 KiB) lands, whenever a
        // loaded machine lets it, and nothing after it however long the pause.
        await expect.poll(() => body.readableLength).toBe(32 * KiB);
        await settle();
        expect(body.readableLength).toBe(32 * KiB);
        const closed = new Promise((resolve) => body.once('close', resolve));
        body.destroy();
        await closed;
    });
});

/*
 * A chunk's buffer is read into again only once nothing can hold the chunk (README, "Static files";
 * file-body.ts): piped into its connection, once the connection has written it; any other consumer
 * gets a buffer per chunk. Each 4-byte word of the file holds its own offset, so a chunk overwritten
 * by a later read shows in the bytes received.
 */
describe('the buffers of a streamed file body', () => {
    const positionalSize = 2 * 1024 * KiB + 100;
    let positional: string;
    let expected: Buffer;

    beforeAll(() => {
        expected = Buffer.alloc(positionalSize);
        for (let offset = 0; offset + 4 <= positionalSize; offset += 4) {
            expected.writeUInt32LE(offset, offset);
        }

        positional = join(fixture.root, 'positional.bin');
        Fs.writeFileSync(positional, expected);
    });

    function positionalBody(sink: Writable | null): FileBody {
        const fd = Fs.openSync(positional, 'r');
        return new FileBody({
            fd,
            path: positional,
            stats: Fs.fstatSync(fd),
            offset: 0,
            length: positionalSize,
            sink,
            onHashed: null
        });
    }

    /** Serves the file once over a real connection; `reader` reads the response, the buffers written are counted. */
    async function serveOnce(
        reader: (response: http.IncomingMessage) => Promise<Buffer>,
        options: http.ServerOptions = {}
    ) {
        const written: ArrayBufferLike[] = [];
        const server = http.createServer(options, (_request, response) => {
            const write = response.write.bind(response) as (...args: unknown[]) => boolean;
            response.write = ((chunk: Buffer, ...rest: unknown[]) => {
                written.push(chunk.buffer);
                return write(chunk, ...rest);
            }) as typeof response.write;
            response.writeHead(200, { 'content-length': positionalSize });
            positionalBody(response).pipe(response);
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
            const { port } = server.address() as AddressInfo;
            const received = await new Promise<Buffer>((resolve, reject) => {
                http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (response) => {
                    reader(response).then(resolve, reject);
                }).on('error', reject);
            });
            return { received, chunks: written.length, buffers: new Set(written).size };
        } finally {
            await new Promise((resolve) => server.close(resolve));
        }
    }

    const readAll = async (response: http.IncomingMessage): Promise<Buffer> => {
        const parts: Buffer[] = [];
        for await (const part of response) {
            parts.push(part as Buffer);
        }

        return Buffer.concat(parts);
    };

    it('are filled again once the connection wrote them: far fewer buffers than chunks, every byte as it was', async () => {
        const { received, chunks, buffers } = await serveOnce(readAll);
        expect(received.equals(expected)).toBe(true);
        // 2 MiB in chunks growing from 16 KiB to 256 KiB: 12 chunks or more, in at most one buffer per size.
        expect(chunks).toBeGreaterThanOrEqual(12);
        expect(buffers).toBeLessThan(chunks);
    });

    it('are not filled again while the connection holds chunks it has not written: the bytes go out as they were', async () => {
        // A connection that takes every chunk at once (its high-water mark is above the file, so no
        // backpressure pauses the pipe) and copies each out only a little later, as a socket does when
        // the system cannot take the bytes yet: the next chunks are read meanwhile.
        const written: Buffer[] = [];
        const connection = new Writable({
            highWaterMark: 4 * 1024 * KiB,
            write(chunk: Buffer, _encoding, done) {
                setTimeout(() => {
                    written.push(Buffer.from(chunk));
                    done();
                }, 2);
            }
        });
        const finished = new Promise((resolve) => connection.on('finish', resolve));
        positionalBody(connection).pipe(connection);
        await finished;
        expect(Buffer.concat(written).equals(expected)).toBe(true);
    });

    it('are new for every chunk a consumer other than the connection is given: chunks kept stay as they were', async () => {
        // The sink has nothing queued, as a fast client's connection, but the chunks go to this reader instead.
        const kept: Buffer[] = [];
        for await (const chunk of positionalBody(sinkWithBacklog(0))) {
            kept.push(chunk as Buffer);
        }

        expect(Buffer.concat(kept).equals(expected)).toBe(true);
        expect(new Set(kept.map((chunk) => chunk.buffer)).size).toBe(kept.length);

        const copy = new PassThrough({ highWaterMark: 0 });
        const piped: Buffer[] = [];
        copy.on('data', (chunk: Buffer) => piped.push(chunk));
        const ended = new Promise((resolve) => copy.on('end', resolve));
        positionalBody(sinkWithBacklog(0)).pipe(copy);
        await ended;
        expect(Buffer.concat(piped).equals(expected)).toBe(true);
    });
});
