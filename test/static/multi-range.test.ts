import { execFile } from 'node:child_process';
import * as Fs from 'node:fs';
import * as Http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MultipartBody } from '../../src/static/multipart-body.js';
import { answerRanges, type MultipartRanges, maxParts, multipartBytes } from '../../src/static/multipart-ranges.js';
import { type ByteRange, parseRange } from '../../src/static/range.js';
import { ensureBinary } from '../integration/servers.js';
import { seeded } from '../seeded.js';
import { countOpenFds, createServer, pastTimestamps, settledFdCount } from './helpers.js';
import { boundaryOf, type ParsedPart, parseMultipart } from './multipart-parser.js';

/*
 * Several ranges in one request (README, "Static files"): a 206 with a multipart/byteranges body,
 * read here byte for byte by a strict parser, by real `curl`, and bounded against the range attacks.
 */

const execFileAsync = promisify(execFile);

/** Bytes that differ from offset to offset, so that a part taken from the wrong place shows. */
function patterned(size: number, seed: number): Buffer {
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; ++i) {
        bytes[i] = (i * 31 + seed + (i >> 8)) % 251;
    }

    return bytes;
}

/** Read whole and kept in memory (the content cache's size). */
const small = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz\n'.repeat(120));
/** Streamed from its descriptor (over 1 MiB, so not read whole to be hashed first). */
const large = patterned(1536 * 1024, 7);
/** Text whose gzip variant is still tens of kilobytes. */
const text = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `line ${i}: ${(i * 7919) % 10_007}\n`).join(''));
const textGz = gzipSync(text);

let root: string;
let server: Hapi.Server;
let agent: Http.Agent;

beforeAll(async () => {
    root = Fs.realpathSync(Fs.mkdtempSync(join(tmpdir(), 'tracewire-multi-range-')));
    Fs.writeFileSync(join(root, 'small.txt'), small);
    Fs.writeFileSync(join(root, 'large.bin'), large);
    Fs.writeFileSync(join(root, 'text.txt'), text);
    Fs.writeFileSync(join(root, 'text.txt.gz'), textGz);
    Fs.writeFileSync(join(root, 'photo.png'), patterned(100_000, 3));
    server = await createServer({ routes: { files: { relativeTo: root } } });
    server.route([
        { method: 'GET', path: '/files/{p*}', handler: { directory: { path: '.', lookupCompressed: true } } },
        { method: 'GET', path: '/plain/{p*}', handler: { directory: { path: '.' } } },
        { method: 'GET', path: '/slice', handler: { file: { path: 'small.txt', start: 1000, end: 2999 } } },
        { method: 'GET', path: '/custom-type', handler: (_request, h) => h.file('large.bin').type('video/mp4') }
    ]);
    await server.start();
    agent = new Http.Agent({ keepAlive: true, maxSockets: 1 });
});

afterAll(async () => {
    agent.destroy();
    await server.stop();
    Fs.rmSync(root, { recursive: true, force: true });
});

interface Answer {
    status: number;
    headers: Http.IncomingHttpHeaders;
    body: Buffer;
    /** Every announced byte arrived and the response ended (false: the connection ended it early). */
    complete: boolean;
    /** The connection had served a request before. */
    reused: boolean;
}

/** A request over a real socket (one kept-alive connection for all of them). */
function request(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
    return new Promise((resolve, reject) => {
        const req = Http.request({ host: '127.0.0.1', port: server.info.port, path, method, headers, agent }, (res) => {
            const chunks: Buffer[] = [];
            const answer = (complete: boolean): Answer => ({
                status: res.statusCode ?? 0,
                headers: res.headers,
                body: Buffer.concat(chunks),
                complete,
                reused: req.reusedSocket
            });
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve(answer(true)));
            res.on('error', () => resolve(answer(false)));
        });
        req.on('error', reject);
        req.end();
    });
}

/** The parts of a multipart answer, after checking its status and that content-length counts its body exactly. */
function partsOf(answer: Answer): ParsedPart[] {
    expect(answer.status).toBe(206);
    expect(answer.complete).toBe(true);
    expect(answer.headers['content-range']).toBeUndefined();
    expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
    return parseMultipart(answer.body, answer.headers['content-type']);
}

/** What each part holds, to compare with what the file holds there. */
function expectParts(parts: ParsedPart[], file: Buffer, ranges: [number, number][], type: string | null): void {
    expect(parts.map((part) => [part.from, part.to])).toEqual(ranges);
    for (const part of parts) {
        expect(part.size).toBe(file.length);
        expect(part.type).toBe(type);
        expect(part.bytes.equals(file.subarray(part.from, part.to + 1))).toBe(true);
    }
}

describe('multiple ranges: a 206 with a multipart/byteranges body', () => {
    it('serves two ranges of a small file as two parts, each with the 200 content type and its content-range', async () => {
        const whole = await request('/files/small.txt');
        const answer = await request('/files/small.txt', { range: 'bytes=0-99,500-599' });
        expectParts(
            partsOf(answer),
            small,
            [
                [0, 99],
                [500, 599]
            ],
            whole.headers['content-type']!
        );
        expect(answer.headers['content-type']).toMatch(/^multipart\/byteranges; boundary=/);
        // The validators are those of the whole file, as for a single range.
        expect(answer.headers.etag).toBe(whole.headers.etag);
        expect(answer.headers['last-modified']).toBe(whole.headers['last-modified']);
        expect(answer.headers['accept-ranges']).toBe('bytes');
    });

    it('streams the parts of a large file from its descriptor', async () => {
        const ranges: [number, number][] = [
            [0, 99],
            [100_000, 399_999],
            [900_000, large.length - 1]
        ];
        const answer = await request('/files/large.bin', { range: 'bytes=0-99,100000-399999,900000-' });
        expectParts(partsOf(answer), large, ranges, 'application/octet-stream');
        // The exact content-length left the connection usable for the next request.
        const next = await request('/files/large.bin', { range: 'bytes=-10' });
        expect([next.status, next.reused]).toEqual([206, true]);
        expect(next.body.equals(large.subarray(-10))).toBe(true);
    });

    it('uses a content type the handler set for every part', async () => {
        const answer = await request('/custom-type', { range: 'bytes=0-9,5000-5009' });
        expectParts(
            partsOf(answer),
            large,
            [
                [0, 9],
                [5000, 5009]
            ],
            'video/mp4'
        );
    });

    it('sorts the ranges and merges those that overlap or touch', async () => {
        const answer = await request('/files/large.bin', {
            range: 'bytes=500000-599999, 0-99, 550000-650000, 90-120, 121-200'
        });
        expectParts(
            partsOf(answer),
            large,
            [
                [0, 200],
                [500_000, 650_000]
            ],
            'application/octet-stream'
        );
    });

    it('sends ranges closer than a part header as one range (a single 206)', async () => {
        const answer = await request('/files/small.txt', { range: 'bytes=0-9,20-29' });
        expect(answer.status).toBe(206);
        expect(answer.headers['content-range']).toBe(`bytes 0-29/${small.length}`);
        expect(answer.body.equals(small.subarray(0, 30))).toBe(true);
    });

    it('applies the ranges to the start/end slice', async () => {
        const answer = await request('/slice', { range: 'bytes=0-99,1000-1099' });
        const slice = small.subarray(1000, 3000);
        expectParts(
            partsOf(answer),
            slice,
            [
                [0, 99],
                [1000, 1099]
            ],
            'text/plain; charset=utf-8'
        );
    });

    it('serves the ranges of a pre-compressed variant from its own bytes, with its encoding and tag', async () => {
        const identity = await request('/files/text.txt', { range: 'bytes=0-99,10000-10099' });
        expectParts(
            partsOf(identity),
            text,
            [
                [0, 99],
                [10_000, 10_099]
            ],
            'text/plain; charset=utf-8'
        );
        expect(identity.headers['content-encoding']).toBeUndefined();

        const gzip = { 'accept-encoding': 'gzip' };
        const whole = await request('/files/text.txt', gzip);
        expect(whole.headers['content-encoding']).toBe('gzip');
        const last = textGz.length - 1;
        const answer = await request('/files/text.txt', { ...gzip, range: `bytes=0-99,${last - 99}-${last}` });
        expectParts(
            partsOf(answer),
            textGz,
            [
                [0, 99],
                [last - 99, last]
            ],
            'text/plain; charset=utf-8'
        );
        expect(answer.headers['content-encoding']).toBe('gzip');
        expect(answer.headers.vary).toContain('accept-encoding');
        expect(answer.headers.etag).toBe(whole.headers.etag);
        expect(answer.headers.etag).not.toBe(identity.headers.etag);
    });

    it('honours if-range: a current tag or date gives the parts, a stale one the whole file with a 200', async () => {
        const whole = await request('/files/large.bin');
        const range = 'bytes=0-99,500000-500099';
        for (const ifRange of [whole.headers.etag!, whole.headers['last-modified']!]) {
            const answer = await request('/files/large.bin', { range, 'if-range': ifRange });
            expectParts(
                partsOf(answer),
                large,
                [
                    [0, 99],
                    [500_000, 500_099]
                ],
                'application/octet-stream'
            );
        }

        for (const ifRange of ['"stale"', `W/${whole.headers.etag}`, 'Thu, 01 Jan 2004 00:00:00 GMT']) {
            const answer = await request('/files/large.bin', { range, 'if-range': ifRange });
            expect(answer.status, ifRange).toBe(200);
            expect(answer.body.equals(large), ifRange).toBe(true);
        }
    });

    it('leaves out the ranges that cannot be met, and answers 416 with the size when none can', async () => {
        const some = await request('/files/small.txt', { range: 'bytes=9000-9999,0-99,-0' });
        expect(some.status).toBe(206);
        expect(some.headers['content-range']).toBe(`bytes 0-99/${small.length}`);
        expect(some.body.equals(small.subarray(0, 100))).toBe(true);

        for (const range of ['bytes=9000-9999,10000-', 'bytes=5000-,-0,20-10']) {
            const none = await request('/files/small.txt', { range });
            expect(none.status, range).toBe(416);
            expect(none.headers['content-range'], range).toBe(`bytes */${small.length}`);
        }
    });

    it('varies on accept-encoding as the 200 does (hapi compresses the 200 of a text file, not the parts)', async () => {
        const gzip = { 'accept-encoding': 'gzip' };
        const whole = await request('/plain/small.txt', gzip);
        expect([whole.headers['content-encoding'], whole.headers.vary]).toEqual(['gzip', 'accept-encoding']);
        const parts = await request('/plain/small.txt', { ...gzip, range: 'bytes=0-99,2000-2099' });
        expect(partsOf(parts)).toHaveLength(2);
        expect(parts.headers.vary).toBe('accept-encoding');
        expect(parts.headers['content-encoding']).toBeUndefined();
        // A type hapi does not compress: neither varies.
        expect((await request('/plain/photo.png', gzip)).headers.vary).toBeUndefined();
        const image = await request('/plain/photo.png', { ...gzip, range: 'bytes=0-99,2000-2099' });
        expect(partsOf(image)).toHaveLength(2);
        expect(image.headers.vary).toBeUndefined();
    });

    it('answers HEAD with the headers of the whole file: ranges apply to GET only', async () => {
        const answer = await request('/files/large.bin', { range: 'bytes=0-99,500000-500099' }, 'HEAD');
        expect(answer.status).toBe(200);
        expect(answer.body.length).toBe(0);
        expect(Number(answer.headers['content-length'])).toBe(large.length);
        expect(answer.headers['content-type']).toBe('application/octet-stream');
        expect(answer.headers['accept-ranges']).toBe('bytes');
    });
});

describe('multiple ranges: bounded against the range attacks', () => {
    /** Times a request and checks its answer is never larger than the file. */
    async function bounded(path: string, range: string, file: Buffer): Promise<Answer> {
        const started = process.hrtime.bigint();
        const answer = await request(path, { range });
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        expect(answer.complete).toBe(true);
        expect(answer.body.length).toBeLessThanOrEqual(file.length);
        // Generous for a loaded two-core machine: the whole megabyte takes a few milliseconds.
        expect(ms).toBeLessThan(5000);
        return answer;
    }

    it('1,000 ranges far apart: more parts than the bound, so the whole file with a 200', async () => {
        const ranges = Array.from({ length: 1000 }, (_, i) => `${i * 1000}-${i * 1000 + 9}`);
        const answer = await bounded('/files/large.bin', `bytes=${ranges.join(',')}`, large);
        expect(answer.status).toBe(200);
        expect(answer.body.equals(large)).toBe(true);
    });

    it(`up to ${maxParts} parts are sent, one more is the whole file`, async () => {
        const spread = (count: number) =>
            `bytes=${Array.from({ length: count }, (_, i) => `${i * 10_000}-${i * 10_000 + 99}`).join(',')}`;
        const most = await bounded('/files/large.bin', spread(maxParts), large);
        expect(partsOf(most)).toHaveLength(maxParts);
        const tooMany = await bounded('/files/large.bin', spread(maxParts + 1), large);
        expect(tooMany.status).toBe(200);
    });

    it('1,000 one-byte ranges a byte apart: merged into one range, never a part per byte', async () => {
        const ranges = Array.from({ length: 1000 }, (_, i) => `${i * 2}-${i * 2}`);
        const answer = await bounded('/files/large.bin', `bytes=${ranges.join(',')}`, large);
        expect(answer.status).toBe(206);
        expect(answer.headers['content-range']).toBe(`bytes 0-1998/${large.length}`);
    });

    it('1,000 overlapping ranges (the CVE-2011-3192 request): merged, each byte sent once', async () => {
        const ranges = ['0-', ...Array.from({ length: 999 }, (_, i) => `5-${i}`)];
        const answer = await bounded('/files/large.bin', `bytes=${ranges.join(',')}`, large);
        expect(answer.status).toBe(206);
        expect(answer.headers['content-range']).toBe(`bytes 0-${large.length - 1}/${large.length}`);
        expect(answer.body.equals(large)).toBe(true);
        const repeated = await bounded('/files/large.bin', `bytes=${Array(1000).fill('0-99').join(',')}`, large);
        expect(repeated.headers['content-range']).toBe(`bytes 0-99/${large.length}`);
    });

    it('ranges whose parts would be no smaller than the file: the whole file with a 200', async () => {
        const answer = await bounded('/files/small.txt', `bytes=0-1999,2200-${small.length - 1}`, small);
        expect(answer.status).toBe(200);
        expect(answer.body.equals(small)).toBe(true);
    });
});

describe('multiple ranges: the layout and its bounds', () => {
    const octets = { size: 100_000, offset: 0, type: 'application/octet-stream' };

    it('is never larger than the representation, for any set of ranges (10,000 random sets)', () => {
        const random = seeded(25);
        for (let run = 0; run < 10_000; ++run) {
            const size = 1 + Math.floor(random() * 200_000);
            const count = 1 + Math.floor(random() * (run % 10 === 0 ? 300 : 8));
            const specs = Array.from({ length: count }, () => {
                const from = Math.floor(random() * size * 1.1);
                return random() < 0.1
                    ? `-${from}`
                    : `${from}-${from + Math.floor(random() * size * (random() < 0.5 ? 0.01 : 0.5))}`;
            });
            const ranges = parseRange(`bytes=${specs.join(',')}`, size);
            if (ranges === 'unsatisfiable') {
                continue;
            }

            const answer = answerRanges(ranges, { size, offset: 0, type: 'text/plain; charset=utf-8' });
            if (answer !== null && 'parts' in answer) {
                expect(answer.length).toBeLessThan(size);
                expect(answer.parts.length).toBeGreaterThan(1);
                expect(answer.parts.length).toBeLessThanOrEqual(maxParts);
                const body = multipartBytes(answer, (offset, length) => Buffer.alloc(length, offset % 256));
                expect(body.length).toBe(answer.length);
                expect(parseMultipart(body, answer.contentType)).toHaveLength(answer.parts.length);
            }
        }
    });

    it('gives one range as it is, and parts without a content type when the representation has none', () => {
        expect(answerRanges([{ from: 5, to: 9 }], octets)).toEqual({ from: 5, to: 9 });
        const answer = answerRanges(
            [
                { from: 0, to: 9 },
                { from: 50_000, to: 50_009 }
            ],
            { ...octets, type: null }
        ) as MultipartRanges;
        const parts = parseMultipart(
            multipartBytes(answer, (offset, length) => patterned(octets.size, 1).subarray(offset, offset + length)),
            answer.contentType
        );
        expect(parts.map((part) => part.type)).toEqual([null, null]);
    });

    it('a fresh boundary for every response', () => {
        const ranges: ByteRange[] = [
            { from: 0, to: 9 },
            { from: 50_000, to: 50_009 }
        ];
        const first = answerRanges(ranges, octets) as MultipartRanges;
        const second = answerRanges(ranges, octets) as MultipartRanges;
        expect(first.contentType).not.toBe(second.contentType);
    });
});

describe('multiple ranges: the streamed body and its descriptor', () => {
    const spaced = (count: number, from: number, length: number, step: number): ByteRange[] =>
        Array.from({ length: count }, (_, i) => ({ from: from + i * step, to: from + i * step + length - 1 }));
    /** Layouts of parts: large ones (streamed by a FileBody each) and small ones (read at once, in batches). */
    const layouts: Record<string, ByteRange[]> = {
        'large parts, then a small one': [
            { from: 10, to: 599_999 },
            { from: 700_000, to: 1_200_000 },
            { from: 1_500_000, to: 1_500_010 }
        ],
        'small parts around a large one': [
            ...spaced(3, 0, 100, 1000),
            { from: 10_000, to: 400_000 },
            ...spaced(2, 500_000, 5000, 20_000)
        ],
        'small parts only, more than a batch': spaced(40, 0, 16 * 1024, 30_000)
    };

    /** A MultipartBody over `file` (large.bin by default), on a descriptor of its own. */
    function streamedBody(
        ranges: ByteRange[],
        path = join(root, 'large.bin')
    ): { body: MultipartBody; fd: number; multipart: MultipartRanges } {
        const fd = Fs.openSync(path, 'r');
        const multipart = answerRanges(ranges, {
            size: large.length,
            offset: 0,
            type: 'application/octet-stream'
        }) as MultipartRanges;
        expect(multipart.parts).toHaveLength(ranges.length);
        const body = new MultipartBody({ fd, path, stats: Fs.fstatSync(fd), multipart, sink: null });
        return { body, fd, multipart };
    }

    const isOpen = (fd: number): boolean => {
        try {
            Fs.fstatSync(fd);
            return true;
        } catch {
            return false;
        }
    };

    for (const [name, ranges] of Object.entries(layouts)) {
        it(`${name}: the same bytes as the layout read from memory, nothing read ahead of a paused consumer`, async () => {
            const { body, fd, multipart } = streamedBody(ranges);
            const chunks: Buffer[] = [];
            body.on('readable', () => {
                // Read a turn later: the body waits meanwhile, with at most one chunk read.
                setTimeout(() => {
                    expect(body.readableLength).toBeLessThanOrEqual(256 * 1024);
                    for (let chunk = body.read(); chunk !== null; chunk = body.read()) {
                        chunks.push(chunk);
                    }
                }, 1);
            });
            await new Promise((resolve) => body.once('close', resolve));
            const expected = multipartBytes(multipart, (offset, length) => large.subarray(offset, offset + length));
            expect(Buffer.concat(chunks).equals(expected)).toBe(true);
            expect(isOpen(fd)).toBe(false);
        });
    }

    it('closes the descriptor once when destroyed before, during or between parts', async () => {
        for (const ranges of Object.values(layouts)) {
            for (const chunksBefore of [0, 1, 2, 3, 40]) {
                const { body, fd } = streamedBody(ranges);
                let seen = 0;
                await new Promise<void>((resolve) => {
                    body.on('close', resolve);
                    if (chunksBefore === 0) {
                        body.destroy();
                        return;
                    }

                    body.on('data', () => {
                        if (++seen === chunksBefore) {
                            body.destroy();
                        }
                    });
                });
                expect(isOpen(fd), `after ${chunksBefore} chunks`).toBe(false);
            }
        }
    });

    it('fails, never sending them, small parts of a file changed since it was opened', async () => {
        const path = join(root, 'touched.bin');
        Fs.writeFileSync(path, large);
        const { body, fd } = streamedBody(layouts['small parts only, more than a batch']!, path);
        Fs.utimesSync(path, new Date(), new Date(Date.now() - 60_000));
        const received: Buffer[] = [];
        const failed = new Promise<Error>((resolve) => body.once('error', resolve));
        const closed = new Promise((resolve) => body.once('close', resolve));
        body.on('data', (chunk: Buffer) => received.push(chunk));
        expect((await failed).message).toContain('changed while it was sent');
        await closed;
        expect(received).toHaveLength(0);
        expect(isOpen(fd)).toBe(false);
    });

    it('a client that leaves in the middle of the parts leaves no descriptor open', async () => {
        const baseline = countOpenFds();
        for (let i = 0; i < 5; ++i) {
            await new Promise<void>((resolve) => {
                const req = Http.get(
                    {
                        host: '127.0.0.1',
                        port: server.info.port,
                        path: '/files/large.bin',
                        headers: { range: 'bytes=0-399999,600000-' }
                    },
                    (res) => {
                        res.once('data', () => {
                            req.destroy();
                            resolve();
                        });
                    }
                );
                req.on('error', () => undefined);
            });
        }

        expect(await settledFdCount(baseline)).toBeLessThanOrEqual(baseline);
    });

    it('a file changed while its parts are sent ends the connection before the body completes', async () => {
        const path = join(root, 'changing.bin');
        Fs.writeFileSync(path, large);
        // Rewritten below with other bytes of the same size: only the times tell, so they must be able to move.
        await pastTimestamps(path);
        const answer = await new Promise<Answer>((resolve) => {
            const req = Http.get(
                {
                    host: '127.0.0.1',
                    port: server.info.port,
                    path: '/files/changing.bin',
                    headers: { range: 'bytes=0-599999,700000-' }
                },
                (res) => {
                    const chunks: Buffer[] = [];
                    const done = (complete: boolean) =>
                        resolve({
                            status: res.statusCode ?? 0,
                            headers: res.headers,
                            body: Buffer.concat(chunks),
                            complete,
                            reused: false
                        });
                    res.once('data', (chunk: Buffer) => {
                        chunks.push(chunk);
                        res.pause();
                        // Written in place while the first part is under way.
                        Fs.writeFileSync(path, patterned(large.length, 99));
                        setTimeout(() => {
                            res.on('data', (more: Buffer) => chunks.push(more));
                            res.resume();
                        }, 50);
                    });
                    res.on('end', () => done(true));
                    res.on('error', () => done(false));
                }
            );
            req.on('error', () => undefined);
        });
        expect(answer.status).toBe(206);
        expect(answer.complete).toBe(false);
        expect(answer.body.length).toBeLessThan(Number(answer.headers['content-length']));
    });
});

describe('multiple ranges: real curl', () => {
    const curl = (...args: string[]) =>
        execFileAsync(ensureBinary('curl', ['/usr/bin/curl', '/usr/local/bin/curl'], 'curl'), ['-s', ...args], {
            encoding: 'buffer',
            maxBuffer: 4 * 1024 * 1024
        });

    /** curl's `-D` dump of the response headers, as a map of lower-case names. */
    function dumpedHeaders(dump: string): Map<string, string> {
        const lines = dump.trim().split('\r\n');
        return new Map(
            lines
                .slice(1)
                .map((line) => [
                    line.slice(0, line.indexOf(':')).toLowerCase(),
                    line.slice(line.indexOf(':') + 1).trim()
                ])
        );
    }

    it('curl -r 0-99,500-599 gets the two parts', async () => {
        const dump = join(root, 'curl-headers.txt');
        const { stdout } = await curl('-D', dump, '-r', '0-99,500-599', `${server.info.uri}/files/large.bin`);
        const headers = dumpedHeaders(Fs.readFileSync(dump, 'latin1'));
        expect(Fs.readFileSync(dump, 'latin1')).toMatch(/^HTTP\/1\.1 206 /);
        expect(Number(headers.get('content-length'))).toBe(stdout.length);
        expectParts(
            parseMultipart(stdout, headers.get('content-type')),
            large,
            [
                [0, 99],
                [500, 599]
            ],
            'application/octet-stream'
        );
    });

    it('curl -r on a pre-compressed variant gets parts of the variant', async () => {
        const dump = join(root, 'curl-gzip-headers.txt');
        const { stdout } = await curl(
            '-D',
            dump,
            '-H',
            'accept-encoding: gzip',
            '-r',
            '0-99,1000-1099',
            `${server.info.uri}/files/text.txt`
        );
        const headers = dumpedHeaders(Fs.readFileSync(dump, 'latin1'));
        expect(headers.get('content-encoding')).toBe('gzip');
        expect(boundaryOf(headers.get('content-type'))).not.toBe('');
        expectParts(
            parseMultipart(stdout, headers.get('content-type')),
            textGz,
            [
                [0, 99],
                [1000, 1099]
            ],
            'text/plain; charset=utf-8'
        );
    });
});

describe('the strict multipart reader of these tests', () => {
    const type = 'multipart/byteranges; boundary=b0';
    const part = '\r\n--b0\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-2/10\r\n\r\nabc';
    const end = '\r\n--b0--\r\n';

    it('reads a well-formed body', () => {
        const [parsed] = parseMultipart(Buffer.from(part + end), type);
        expect(parsed).toMatchObject({ type: 'text/plain', from: 0, to: 2, size: 10 });
        expect(parsed!.bytes.toString()).toBe('abc');
    });

    it('refuses a body with any byte out of place', () => {
        const broken = [
            part.replace('abc', 'ab') + end,
            `${part}x${end}`,
            `${part}${end}x`,
            part.replace('\r\n\r\n', '\r\n') + end,
            part.replace('Content-Type', 'X-Other') + end,
            part.replace('bytes 0-2/10', 'bytes 0-2/2') + end,
            part.slice(2) + end,
            end
        ];
        for (const body of broken) {
            expect(() => parseMultipart(Buffer.from(body), type), JSON.stringify(body)).toThrow();
        }

        expect(() => parseMultipart(Buffer.from(part + end), 'multipart/mixed; boundary=b0')).toThrow();
    });
});
