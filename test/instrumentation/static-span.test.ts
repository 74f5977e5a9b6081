import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as Path from 'node:path';
import { gzipSync } from 'node:zlib';
import Hapi from '@hapi/hapi';
import { context, INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import { ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import {
    ATTR_FILE_PATH as INCUBATING_FILE_PATH,
    ATTR_FILE_SIZE as INCUBATING_FILE_SIZE
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as exported from '../../instrumentation/index.js';
import { TRACING_PLUGIN, tracing } from '../../instrumentation/index.js';
import { staticFiles } from '../../src/static/index.js';
import {
    ATTR_FILE_PATH,
    ATTR_FILE_SIZE,
    ATTR_STATIC_ENCODING,
    ATTR_STATIC_ETAG,
    ATTR_STATIC_RANGE
} from '../../src/static/span-attributes.js';
import { setupOtel } from './otel.js';

const otel = setupOtel();
const root = mkdtempSync(Path.join(tmpdir(), 'tracewire-file-span-'));
const plain = 'plain text served by the static plugin\n';
const css = 'body { color: black; }\n'.repeat(50);
const cssGz = gzipSync(css);
/** Over 1 MiB: not hashed before it is sent, but while the first response streams it. */
const large = Buffer.alloc(2 * 1024 * 1024, 'large\n');
let server: Hapi.Server;

beforeAll(async () => {
    writeFileSync(Path.join(root, 'plain.txt'), plain);
    writeFileSync(Path.join(root, 'app.css'), css);
    writeFileSync(Path.join(root, 'app.css.gz'), cssGz);
    writeFileSync(Path.join(root, 'large.bin'), large);
    mkdirSync(Path.join(root, 'sub'));
    server = Hapi.server({ host: '127.0.0.1', port: 0, routes: { files: { relativeTo: root } } });
    await server.register({
        plugin: tracing,
        options: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }
    });
    await server.register(staticFiles);
    server.route([
        { method: 'GET', path: '/files/{path*}', handler: { directory: { path: '.', lookupCompressed: true } } },
        { method: 'GET', path: '/plain', handler: { file: 'plain.txt' } },
        { method: 'GET', path: '/missing', handler: { file: 'nowhere/missing.txt' } },
        { method: 'GET', path: '/simple', handler: (_request, h) => h.file('plain.txt', { etagMethod: 'simple' }) },
        { method: 'GET', path: '/untagged', handler: { file: { path: 'plain.txt', etagMethod: false } } }
    ]);
    await server.start();
});

afterEach(() => otel.reset());

afterAll(async () => {
    await server.stop();
    await otel.shutdown();
    rmSync(root, { recursive: true, force: true });
});

async function fetchSpan(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${server.info.uri}${path}`, { headers });
    await res.arrayBuffer();
    await expect.poll(() => otel.spans().length).toBe(1);
    const span = otel.spans()[0]!;
    otel.reset();
    return { res, attributes: span.attributes };
}

describe('traced file serving: attributes on the server span', () => {
    it('a large file hashed while the first response streams it: computed, then a cache hit', async () => {
        const first = await fetchSpan('/files/large.bin');
        // The first response carries the file's identity tag; the next one the hash computed meanwhile.
        expect(first.res.headers.get('etag')).not.toBeNull();
        expect(first.attributes[ATTR_STATIC_ETAG]).toBe('computed');
        const second = await fetchSpan('/files/large.bin');
        expect(second.res.headers.get('etag')).toMatch(/^"[0-9a-f]{40}/);
        expect(second.attributes[ATTR_STATIC_ETAG]).toBe('hit');
    });

    it('uses the names of the conventions for file.path and file.size', () => {
        expect(ATTR_FILE_PATH).toBe(INCUBATING_FILE_PATH);
        expect(ATTR_FILE_SIZE).toBe(INCUBATING_FILE_SIZE);
    });

    it('a plain file: its path relative to the root, size, identity, the ETag computed then a cache hit', async () => {
        const first = await fetchSpan('/plain');
        expect(first.res.status).toBe(200);
        expect(first.attributes).toMatchObject({
            [ATTR_FILE_PATH]: 'plain.txt',
            [ATTR_FILE_SIZE]: Buffer.byteLength(plain),
            [ATTR_STATIC_ENCODING]: 'identity',
            [ATTR_STATIC_ETAG]: 'computed'
        });
        expect(first.attributes[ATTR_STATIC_RANGE]).toBeUndefined();

        const second = await fetchSpan('/plain');
        expect(second.attributes[ATTR_STATIC_ETAG]).toBe('hit');
    });

    it('a pre-compressed file: the variant sent, its size and its encoding', async () => {
        const { res, attributes } = await fetchSpan('/files/app.css', { 'accept-encoding': 'gzip' });
        expect(res.headers.get('content-encoding')).toBe('gzip');
        expect(attributes).toMatchObject({
            [ATTR_FILE_PATH]: 'app.css.gz',
            [ATTR_FILE_SIZE]: cssGz.length,
            [ATTR_STATIC_ENCODING]: 'gzip'
        });
    });

    it('a ranged response: the range sent', async () => {
        const { res, attributes } = await fetchSpan('/files/plain.txt', { range: 'bytes=6-9' });
        expect(res.status).toBe(206);
        expect(attributes).toMatchObject({
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 206,
            [ATTR_FILE_PATH]: 'plain.txt',
            [ATTR_FILE_SIZE]: Buffer.byteLength(plain),
            [ATTR_STATIC_RANGE]: 'bytes=6-9'
        });
    });

    it('a multipart response: every range sent', async () => {
        const { res, attributes } = await fetchSpan('/files/large.bin', { range: 'bytes=0-99,500000-500099' });
        expect(res.status).toBe(206);
        expect(res.headers.get('content-type')).toMatch(/^multipart\/byteranges; boundary=/);
        expect(attributes[ATTR_STATIC_RANGE]).toBe('bytes=0-99,500000-500099');
    });

    it('a 304: the status says so, the file is described as for a 200', async () => {
        const { res } = await fetchSpan('/plain');
        const etag = res.headers.get('etag')!;
        const revalidated = await fetchSpan('/plain', { 'if-none-match': etag });
        expect(revalidated.res.status).toBe(304);
        expect(revalidated.attributes).toMatchObject({
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 304,
            [ATTR_FILE_PATH]: 'plain.txt',
            [ATTR_STATIC_ETAG]: 'hit'
        });
    });

    it('a 404: the path asked for, and nothing about a file that does not exist', async () => {
        const { res, attributes } = await fetchSpan('/missing');
        expect(res.status).toBe(404);
        expect(attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]).toBe(404);
        expect(attributes[ATTR_FILE_PATH]).toBe(Path.join('nowhere', 'missing.txt'));
        for (const key of [ATTR_FILE_SIZE, ATTR_STATIC_ENCODING, ATTR_STATIC_ETAG, ATTR_STATIC_RANGE]) {
            expect(attributes[key]).toBeUndefined();
        }
    });

    it("the directory handler's own 404 and 403: the path asked for, inside the root only", async () => {
        const missing = await fetchSpan('/files/sub/none.txt');
        expect(missing.res.status).toBe(404);
        expect(missing.attributes[ATTR_FILE_PATH]).toBe(Path.join('sub', 'none.txt'));
        // A directory with neither index file nor listing.
        const bare = await fetchSpan('/files/sub');
        expect(bare.res.status).toBe(403);
        expect(bare.attributes[ATTR_FILE_PATH]).toBe('sub');
        // A way out of the root is refused and not described.
        const outside = await fetchSpan('/files/..%2f..%2fetc%2fpasswd');
        expect(outside.res.status).toBe(403);
        expect(outside.attributes[ATTR_FILE_PATH]).toBeUndefined();
        for (const { attributes } of [missing, bare, outside]) {
            for (const key of [ATTR_FILE_SIZE, ATTR_STATIC_ENCODING, ATTR_STATIC_ETAG, ATTR_STATIC_RANGE]) {
                expect(attributes[key]).toBeUndefined();
            }
        }
    });

    it("etag: computed for etagMethod 'simple', off for etagMethod false", async () => {
        expect((await fetchSpan('/simple')).attributes[ATTR_STATIC_ETAG]).toBe('computed');
        expect((await fetchSpan('/untagged')).attributes[ATTR_STATIC_ETAG]).toBe('off');
    });

    it('reads the span the tracing plugin keeps under its name', () => {
        expect(TRACING_PLUGIN).toBe('tracewire-tracing');
    });

    it('tracewire/instrumentation exports the names of the tracewire.static attributes', () => {
        expect([exported.ATTR_STATIC_ENCODING, exported.ATTR_STATIC_ETAG, exported.ATTR_STATIC_RANGE]).toEqual([
            'tracewire.static.encoding',
            'tracewire.static.etag',
            'tracewire.static.range'
        ]);
    });
});

describe('traced file serving: which span', () => {
    it('without the tracing plugin, the active span of an upstream instrumentation gets the attributes', async () => {
        const app = Hapi.server({ routes: { files: { relativeTo: root } } });
        await app.register(staticFiles);
        app.route({ method: 'GET', path: '/plain', handler: { file: 'plain.txt' } });
        const upstream = otel.tracerProvider.getTracer('upstream').startSpan('GET /plain');
        const res = await context.with(trace.setSpan(context.active(), upstream), () => app.inject('/plain'));
        upstream.end();
        expect(res.statusCode).toBe(200);
        expect(otel.spans()[0]!.attributes).toMatchObject({
            [ATTR_FILE_PATH]: 'plain.txt',
            [ATTR_STATIC_ENCODING]: 'identity'
        });
    });

    it('with no span, or one that does not record, files are served as usual', async () => {
        const app = Hapi.server({ routes: { files: { relativeTo: root } } });
        await app.register([tracing, staticFiles]);
        app.route({ method: 'GET', path: '/plain', handler: { file: 'plain.txt' } });
        const res = await app.inject('/plain');
        expect(res.statusCode).toBe(200);
        expect(res.payload).toBe(plain);
        const nonRecording = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
        const again = await context.with(trace.setSpan(context.active(), nonRecording), () => app.inject('/plain'));
        expect(again.payload).toBe(plain);
        expect(otel.spans()).toHaveLength(0);
    });
});
