import { createHash } from 'node:crypto';
import * as Http from 'node:http';
import { gzipSync } from 'node:zlib';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../client/helpers.js';
import { createServer } from '../static/helpers.js';
import { parseMultipart } from '../static/multipart-parser.js';
import { type Nginx, startNginx } from './servers.js';

/*
 * Several ranges asked of nginx and of the static plugin serving the same files: the same parts
 * where the plugin answers as nginx does, and the differences the README ("Static files") and
 * docs/migrating-from-inert-and-boom.md (S15) describe where it does not.
 */

function patterned(size: number): Buffer {
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; ++i) {
        bytes[i] = (i * 37 + (i >> 9)) % 253;
    }

    return bytes;
}

const large = patterned(1536 * 1024);
const text = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `line ${i}: ${(i * 7919) % 10_007}\n`).join(''));
const textGz = gzipSync(text);

let nginx: Nginx;
let server: Hapi.Server;

beforeAll(async () => {
    nginx = await startNginx({
        tls: selfSignedCertificate(),
        idleMs: 1000,
        maxRequests: 100,
        files: { 'ranges/large.bin': large, 'static-gz/text.txt': text, 'static-gz/text.txt.gz': textGz }
    });
    server = await createServer();
    server.route({
        method: 'GET',
        path: '/{p*}',
        handler: { directory: { path: nginx.root, lookupCompressed: true } }
    });
    await server.start();
}, 300_000);

afterAll(async () => {
    await server?.stop();
    await nginx?.stop();
});

interface Answer {
    status: number;
    headers: Http.IncomingHttpHeaders;
    body: Buffer;
}

/** Compared by hash: vitest's deep equality of megabyte Buffers takes seconds. */
const sha1 = (bytes: Buffer): string => createHash('sha1').update(bytes).digest('hex');

function request(port: number, path: string, headers: Record<string, string>, method = 'GET'): Promise<Answer> {
    return new Promise((resolve, reject) => {
        const req = Http.request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })
            );
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
    });
}

/** What an answer says, without what differs by server anyway (boundary, tags, dates, charset). */
function meaning(answer: Answer): unknown {
    if (answer.status === 206 && answer.headers['content-range'] === undefined) {
        expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
        const parts = parseMultipart(answer.body, answer.headers['content-type']);
        return {
            status: 206,
            parts: parts.map(({ from, to, size, bytes }) => ({ from, to, size, sha1: sha1(bytes) }))
        };
    }

    // The body of a 416 is each server's own error page.
    const body = answer.status === 416 ? null : sha1(answer.body);
    return { status: answer.status, contentRange: answer.headers['content-range'], body };
}

/** The same request of both; `validator` picks the if-range value from each one's own 200. */
async function askBoth(
    path: string,
    range: string,
    validator: ((whole: Answer) => string) | null = null,
    method = 'GET'
) {
    const ask = async (port: number) => {
        const headers: Record<string, string> = { range };
        if (validator !== null) {
            headers['if-range'] = validator(await request(port, path, {}));
        }

        return request(port, path, headers, method);
    };

    return { nginx: await ask(nginx.ports.http), tracewire: await ask(Number(server.info.port)) };
}

describe('multiple ranges: the same answers as nginx', () => {
    const cases = [
        'bytes=0-99,500-599',
        'bytes=0-99,100000-199999,-1000',
        'bytes=0-99,99999999-',
        'bytes=99999999-,88888888-'
    ];
    for (const range of cases) {
        it(range, async () => {
            const both = await askBoth('/ranges/large.bin', range);
            expect(meaning(both.tracewire)).toEqual(meaning(both.nginx));
        });
    }

    it('if-range with each server own tag or date: the parts; with another: the whole file', async () => {
        const range = 'bytes=0-99,500-599';
        for (const validator of [
            (whole: Answer) => whole.headers.etag!,
            (whole: Answer) => whole.headers['last-modified']!
        ]) {
            const both = await askBoth('/ranges/large.bin', range, validator);
            expect(both.tracewire.status).toBe(206);
            expect(meaning(both.tracewire)).toEqual(meaning(both.nginx));
        }

        const stale = await askBoth('/ranges/large.bin', range, () => '"stale"');
        expect(meaning(stale.tracewire)).toEqual({ status: 200, contentRange: undefined, body: sha1(large) });
        expect(meaning(stale.tracewire)).toEqual(meaning(stale.nginx));
    });
});

describe('multiple ranges: where the plugin answers otherwise, and why', () => {
    it('ranges out of order: the same parts, sorted (nginx keeps the order asked)', async () => {
        const both = await askBoth('/ranges/large.bin', 'bytes=500-599,0-99');
        expect(both.tracewire.status).toBe(206);
        const ranges = (answer: Answer) =>
            parseMultipart(answer.body, answer.headers['content-type']).map((part) => [part.from, part.to]);
        expect(ranges(both.nginx)).toEqual([
            [500, 599],
            [0, 99]
        ]);
        expect(ranges(both.tracewire)).toEqual([
            [0, 99],
            [500, 599]
        ]);
    });

    it('overlapping or close ranges: one range, where nginx sends each (bytes twice, or a header per gap)', async () => {
        for (const [range, merged] of [
            ['bytes=0-99,50-149', 'bytes 0-149'],
            ['bytes=0-9,20-29', 'bytes 0-29']
        ] as const) {
            const both = await askBoth('/ranges/large.bin', range);
            expect(parseMultipart(both.nginx.body, both.nginx.headers['content-type'])).toHaveLength(2);
            expect(both.tracewire.headers['content-range']).toBe(`${merged}/${large.length}`);
        }
    });

    it('500 ranges: the whole file, where nginx (no max_ranges) sends 500 parts', async () => {
        // 500: a header line longer than 8 KiB is a 400 from nginx (large_client_header_buffers).
        const range = `bytes=${Array.from({ length: 500 }, (_, i) => `${i * 2000}-${i * 2000 + 9}`).join(',')}`;
        const both = await askBoth('/ranges/large.bin', range);
        expect(parseMultipart(both.nginx.body, both.nginx.headers['content-type'])).toHaveLength(500);
        expect(meaning(both.tracewire)).toEqual({ status: 200, contentRange: undefined, body: sha1(large) });
    });

    it('HEAD: the headers of the whole file (ranges are for GET), where nginx announces the multipart 206', async () => {
        const both = await askBoth('/ranges/large.bin', 'bytes=0-99,500-599', null, 'HEAD');
        expect(both.nginx.status).toBe(206);
        expect(both.tracewire.status).toBe(200);
        expect(Number(both.tracewire.headers['content-length'])).toBe(large.length);
    });

    it('a pre-compressed variant: parts of its bytes, where nginx 1.22 (gzip_static) sends it whole', async () => {
        const last = textGz.length - 1;
        const range = `bytes=0-99,${last - 99}-${last}`;
        const ask = (port: number) => request(port, '/static-gz/text.txt', { range, 'accept-encoding': 'gzip' });
        const [fromNginx, fromTracewire] = [await ask(nginx.ports.http), await ask(Number(server.info.port))];
        expect([fromNginx.status, fromNginx.headers['content-encoding']]).toEqual([200, 'gzip']);
        expect(fromNginx.body.equals(textGz)).toBe(true);
        expect(fromTracewire.headers['content-encoding']).toBe('gzip');
        expect(meaning(fromTracewire)).toMatchObject({
            status: 206,
            parts: [
                { from: 0, to: 99, size: textGz.length, sha1: sha1(textGz.subarray(0, 100)) },
                { from: last - 99, to: last, size: textGz.length, sha1: sha1(textGz.subarray(-100)) }
            ]
        });
    });
});
