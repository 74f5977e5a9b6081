import { Agent as HttpAgent } from 'node:http';
import { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, client, type TransferProgress } from '../../../src/client/index.js';
import type { HttpError } from '../../../src/errors/index.js';
import { MockNetwork } from '../../../src/testing/index.js';
import { socketCount, startHttp, type TestServer } from '../helpers.js';

// What this runtime's zlib has: zstd from Node.js 22.15 on.
const zstd = zlib as { zstdCompressSync?: (data: Buffer) => Buffer };
const hasZstd = typeof zstd.zstdCompressSync === 'function';

const encoders: Record<string, (data: Buffer) => Buffer> = {
    gzip: (data) => zlib.gzipSync(data),
    'x-gzip': (data) => zlib.gzipSync(data),
    deflate: (data) => zlib.deflateSync(data),
    br: (data) => zlib.brotliCompressSync(data),
    identity: (data) => data,
    ...(hasZstd ? { zstd: (data: Buffer) => zstd.zstdCompressSync!(data) } : {})
};
const codings = Object.keys(encoders).filter((coding) => coding !== 'identity');

/** Applies the codings of a Content-Encoding value in the order it lists them; one we do not know is a label only. */
function encode(data: Buffer, contentEncoding: string): Buffer {
    return contentEncoding
        .split(',')
        .map((coding) => coding.trim().toLowerCase())
        .reduce((encoded, coding) => encoders[coding]?.(encoded) ?? encoded, data);
}

// Text and bytes that do not survive being handed back still encoded.
const body = Buffer.concat([Buffer.from('tracewire decodes this '.repeat(20)), Buffer.from([0, 255, 128, 7])]);

const offers: Array<string | undefined> = [];

/** `?ce=<content-encoding>&status=<code>`: the body encoded by that list, labelled with it. */
function encodedReply(path: string, acceptEncoding: string | undefined) {
    const url = new URL(path, 'http://x');
    const contentEncoding = url.searchParams.get('ce') ?? 'identity';
    offers.push(acceptEncoding);
    return {
        status: Number(url.searchParams.get('status') ?? 200),
        headers: {
            'content-encoding': contentEncoding,
            'content-type': 'application/octet-stream',
            // `?fresh`: a response a cache may answer with for a minute.
            ...(url.searchParams.has('fresh') ? { 'cache-control': 'max-age=60' } : {})
        },
        body: encode(body, contentEncoding)
    };
}

// The decoding is read from the mock's replies (docs/testing.md): the same bytes and fields as the server
// below, without a port. The server stays for what only a connection shows: a refused body not left half-read.
const origin = 'http://decoding.test';
const mock = new MockNetwork();
mock.intercept({ origin, method: () => true })
    .reply((request) => encodedReply(request.path, request.headers['accept-encoding']))
    .persist();
const api = client.defaults({ mock });

let server: TestServer;
beforeAll(async () => {
    server = await startHttp((req, res) => {
        const { status, headers, body: encoded } = encodedReply(req.url ?? '/', req.headers['accept-encoding']);
        res.writeHead(status, headers);
        res.end(encoded);
    });
});

afterAll(async () => {
    mock.close();
    await server.close();
});

function urlOf(contentEncoding: string, status = 200, base = origin): string {
    return `${base}/?${new URLSearchParams({ ce: contentEncoding, status: String(status) })}`;
}

/** Every list form of one coding: alone, with identity around it, with odd case and spacing. */
function listForms(coding: string): string[] {
    return [coding, `${coding}, identity`, `identity,${coding}`, ` ${coding.toUpperCase()} ,IDENTITY`];
}

describe('Decoding: gunzip undoes every coding of a Content-Encoding list, from the last applied', () => {
    for (const coding of codings) {
        for (const contentEncoding of listForms(coding)) {
            it(`content-encoding "${contentEncoding}" reads as the original body`, async () => {
                const { payload } = await api.get(urlOf(contentEncoding), { gunzip: true });
                expect(payload).toEqual(body);
            });
        }
    }

    // Every ordered pair of codings, and a three-coding list: decoded in reverse order of application.
    const pairs = codings.flatMap((first) => codings.map((second) => `${first}, ${second}`));
    for (const contentEncoding of [...pairs, 'gzip, identity, br, deflate']) {
        it(`content-encoding "${contentEncoding}" reads as the original body`, async () => {
            const { payload } = await api.get(urlOf(contentEncoding), { gunzip: true });
            expect(payload).toEqual(body);
        });
    }

    it('decodes a list on any stream given headers, and counts maxBytes after decoding', async () => {
        const stream = Object.assign(Readable.from([encode(body, 'deflate, br')]), {
            headers: { 'content-encoding': 'deflate, br' }
        });
        expect(await client.read(stream, { gunzip: true })).toEqual(body);
        const again = Object.assign(Readable.from([encode(body, 'deflate, br')]), {
            headers: { 'content-encoding': 'deflate, br' }
        });
        const err = (await client.read(again, { gunzip: true, maxBytes: 100 }).catch((e) => e)) as HttpError;
        expect(err.output.statusCode).toBe(413);
    });

    it('without gunzip, a list is handed back as sent', async () => {
        const { payload } = await api.get(urlOf('gzip, br'));
        expect(payload).toEqual(encode(body, 'gzip, br'));
    });

    for (const contentEncoding of ['compress', 'gzip, compress', 'compress, gzip', 'gzip, x-unknown, identity']) {
        it(`content-encoding "${contentEncoding}" rejects with a 502 naming the coding it cannot decode`, async () => {
            const agent = new HttpAgent({ keepAlive: true });
            const err = (await client
                .get(urlOf(contentEncoding, 200, server.url), { gunzip: true, agent })
                .catch((e) => e)) as HttpError;
            const unknown = contentEncoding.includes('compress') ? 'compress' : 'x-unknown';
            expect(err.output.statusCode).toBe(502);
            expect(err.message).toBe(
                `Response content-encoding "${unknown}" cannot be decoded (gunzip decodes gzip, deflate, br${hasZstd ? ', zstd' : ''})`
            );
            // The refused response is not left half-read on its connection.
            await expect.poll(() => socketCount(agent)).toBe(0);
            agent.destroy();
        });
    }

    it('a corrupt body in a list still rejects as not decompressible', async () => {
        const stream = Object.assign(Readable.from([Buffer.from('not compressed at all')]), {
            headers: { 'content-encoding': 'identity, gzip' }
        });
        const err = (await client.read(stream, { gunzip: true }).catch((e) => e)) as HttpError;
        expect(err.output.statusCode).toBe(502);
        expect(err.message).toMatch(/^Response payload could not be decompressed/);
    });
});

describe('Decoding: a response with no body by definition reads as empty, whatever its Content-Encoding', () => {
    const bodiless: Array<{ title: string; method: string; status: number }> = [
        { title: 'a HEAD request', method: 'HEAD', status: 200 },
        { title: 'a 204', method: 'GET', status: 204 },
        { title: 'a 304', method: 'GET', status: 304 },
        { title: 'a HEAD answered 404', method: 'HEAD', status: 404 }
    ];
    for (const { title, method, status } of bodiless) {
        for (const contentEncoding of ['gzip', 'br', 'deflate, gzip', 'compress', 'zstd']) {
            for (const gunzip of [true, 'force'] as const) {
                it(`${title} with content-encoding "${contentEncoding}" and gunzip ${gunzip}`, async () => {
                    const res = await api.request(method, urlOf(contentEncoding, status));
                    expect(await api.read(res, { gunzip })).toEqual(Buffer.alloc(0));
                });
            }
        }

        it(`${title} with content-encoding gzip and json: true reads as null`, async () => {
            const res = await api.request(method, urlOf('gzip', status));
            expect(await api.read(res, { gunzip: true, json: 'force' })).toBeNull();
        });
    }
});

describe('Decoding: a HEAD the cache answers has no body either', () => {
    it('a HEAD answered from a stored gzip GET reads as empty with gunzip, its progress of 0 bytes', async () => {
        const cached = new Client().defaults({ cache: true, mock });
        const url = `${urlOf('gzip')}&fresh`;
        expect((await cached.get(url, { gunzip: true })).payload).toEqual(body);
        for (const gunzip of [true, 'force'] as const) {
            const res = await cached.request('HEAD', url);
            expect(res.headers['cache-status']).toMatch(/^tracewire; hit/);
            expect(res.headers['content-encoding']).toBe('gzip');
            const progress: TransferProgress[] = [];
            const payload = await cached.read(res, { gunzip, onDownloadProgress: (each) => progress.push(each) });
            expect(payload).toEqual(Buffer.alloc(0));
            expect(progress.at(-1)).toEqual({ transferred: 0, total: 0, percent: 100 });
        }
    });
});

describe('Decoding: zstd where the runtime has it', () => {
    it(`gunzip offers ${hasZstd ? 'gzip, br and zstd' : 'gzip and br, not zstd'} (accept-encoding)`, async () => {
        offers.length = 0;
        await api.get(urlOf('identity'), { gunzip: true });
        await api.get(urlOf('gzip'), { gunzip: 'force' });
        await api.get(urlOf('identity'), { gunzip: true, headers: { 'accept-encoding': 'gzip' } });
        await api.get(urlOf('identity'));
        const offer = hasZstd ? 'gzip, br, zstd' : 'gzip, br';
        expect(offers).toEqual([offer, offer, 'gzip', undefined]);
    });

    it(`${hasZstd ? 'decodes a zstd body' : 'rejects a zstd body with a 502 naming zstd and the runtime'} (Node.js ${process.versions.node})`, async () => {
        if (hasZstd) {
            const { payload } = await api.get(urlOf('zstd'), { gunzip: true });
            expect(payload).toEqual(body);
            return;
        }

        const agent = new HttpAgent({ keepAlive: true });
        const res = await client.request('GET', `${server.url}/?ce=zstd`, { agent });
        const err = (await client.read(res, { gunzip: true }).catch((e) => e)) as HttpError;
        expect(err.output.statusCode).toBe(502);
        expect(err.message).toBe(
            `Response content-encoding zstd cannot be decoded: this runtime (Node.js ${process.versions.node}) has no zstd in node:zlib (Node.js 22.15 or later has it)`
        );
        await expect.poll(() => socketCount(agent)).toBe(0);
        agent.destroy();
    });
});
