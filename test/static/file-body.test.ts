import * as Fs from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
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
