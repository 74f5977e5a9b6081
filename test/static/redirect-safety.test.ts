import * as Fs from 'node:fs';
import * as Net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sameOriginPath } from '../../src/static/same-origin-path.js';
import { createServer } from './helpers.js';

/*
 * The class: a trailing-slash redirect (or a listing link) built from the request path, where the
 * path is spelled so that a browser reads the location as another host. Every directory named in
 * the corpus exists, so a refusal here is the guard at work, not a plain miss.
 */

const origin = 'http://origin.test';

/** Directory names an attacker would aim at; some hold a backslash, legal in a POSIX file name. */
const directories = [
    'dir',
    'evil.com',
    '@evil.com',
    'evil.com@x',
    '\\evil.com',
    '\\\\evil.com',
    '%2fevil.com',
    '\uff0fevil.com',
    '\u2215evil.com',
    '\uff3cevil.com',
    'dir/evil.com',
    'dir/\\evil.com'
];

/** Paths a browser resolves to this server when they come back as a location: they may redirect. */
const safePaths = [
    '/dir',
    '/dir?x=1',
    '/evil.com',
    '/@evil.com',
    '/evil.com@x',
    '/%40evil.com',
    '/./evil.com',
    '/dir/../evil.com',
    '/dir/evil.com',
    '/%252fevil.com',
    '/%EF%BC%8Fevil.com',
    '/%ef%bc%8fevil.com',
    '/%E2%88%95evil.com',
    '/%EF%BC%BCevil.com'
];

/** Paths with an empty segment, a slash or backslash in any spelling, or a control character. */
const unsafePaths = [
    '//evil.com',
    '///evil.com',
    '////evil.com',
    '//evil.com?x=1',
    '/%2fevil.com',
    '/%2Fevil.com',
    '/%2f%2fevil.com',
    '/%2F%2Fevil.com',
    '/%2F/evil.com',
    '//%2fevil.com',
    '/\\evil.com',
    '/\\\\evil.com',
    '/\\/evil.com',
    '/%5cevil.com',
    '/%5Cevil.com',
    '/%5c%5cevil.com',
    '/%5c/evil.com',
    '/%5C%2Fevil.com',
    '/%2f%5cevil.com',
    '/\\%2fevil.com',
    '/.//evil.com',
    '/%2e//evil.com',
    '/%2E%2E//evil.com',
    '/dir/..//evil.com',
    '/dir//evil.com',
    '/dir/%2f%2fevil.com',
    '/dir/\\evil.com',
    '/dir/%5cevil.com',
    '/%09/evil.com',
    '/%09%2fevil.com',
    '/%0a/evil.com',
    '/%0d%0a/evil.com',
    '/%0D/evil.com',
    '/%00/evil.com',
    '/%7f/evil.com',
    '//@evil.com',
    '/%2f@evil.com',
    '/%5c@evil.com'
];

let base: string;
let server: Hapi.Server;
let port: number;

beforeAll(async () => {
    base = Fs.realpathSync(Fs.mkdtempSync(join(tmpdir(), 'tracewire-redirect-')));
    for (const name of directories) {
        Fs.mkdirSync(join(base, name), { recursive: true });
        Fs.writeFileSync(join(base, name, 'file.txt'), name);
    }

    server = await createServer({ routes: { files: { relativeTo: base } } });
    // The directory handler at the root of the server: the request path is the whole location.
    server.route({
        method: 'GET',
        path: '/{p*}',
        handler: { directory: { path: '.', redirectToSlash: true, index: false, listing: true } }
    });
    await server.start();
    port = server.info.port as number;
});

afterAll(async () => {
    await server.stop();
    Fs.rmSync(base, { recursive: true, force: true });
});

interface Answer {
    status: number;
    location: string | undefined;
    contentType: string | undefined;
    body: string;
}

async function inject(path: string): Promise<Answer> {
    const res = await server.inject(path);
    return {
        status: res.statusCode,
        location: res.headers.location as string | undefined,
        contentType: res.headers['content-type'] as string | undefined,
        body: res.payload
    };
}

/** Writes the request line byte for byte, so no client library tidies the path first. */
function raw(path: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
        const socket = Net.connect(port, '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (chunk) => chunks.push(chunk));
        socket.on('error', reject);
        socket.on('end', () => {
            const text = Buffer.concat(chunks).toString('latin1');
            const head = text.slice(0, text.indexOf('\r\n\r\n'));
            const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1];
            resolve({
                status: Number(text.slice(9, 12)),
                location: header('location'),
                contentType: header('content-type'),
                body: text.slice(head.length + 4)
            });
        });
        socket.write(`GET ${path} HTTP/1.1\r\nHost: origin.test\r\nConnection: close\r\n\r\n`);
    });
}

/** Where a browser that asked for `path` goes with `href`. */
function resolved(href: string, path: string): URL {
    return new URL(href, new URL(`${origin}${path.startsWith('/') ? path : `/${path}`}`));
}

function assertSameOriginLocation(answer: Answer, path: string): void {
    if (answer.status >= 300 && answer.status < 400) {
        expect(answer.location, `${path} redirects without a location`).toBeDefined();
        expect(new URL(answer.location!, `${origin}/`).origin, `${path} -> ${answer.location}`).toBe(origin);
        expect(resolved(answer.location!, path).origin, `${path} -> ${answer.location}`).toBe(origin);
        // One leading slash, then a character that cannot open an authority.
        expect(answer.location, path).toMatch(/^\/(?![/\\])/);
        expect(answer.location, path).toMatch(/^[\x21-\x5b\x5d-\x7e]+$/);
    }
}

function assertSameOriginLinks(answer: Answer, path: string): void {
    if (answer.status !== 200 || !answer.contentType?.startsWith('text/html')) {
        return;
    }

    const hrefs = [...answer.body.matchAll(/href="([^"]*)"/g)].map((match) =>
        match[1]!
            .replace(/&amp;/g, '&')
            .replace(/&#39;/g, "'")
            .replace(/&quot;/g, '"')
    );
    expect(hrefs.length, path).toBeGreaterThan(0);
    for (const href of hrefs) {
        expect(href, `${path} links to ${href}`).toMatch(/^\/(?![/\\])/);
        expect(resolved(href, path).origin, `${path} links to ${href}`).toBe(origin);
    }
}

const transports = [
    ['server.inject', inject],
    ['a raw socket', raw]
] as const;

describe('Safety: a trailing-slash redirect never leaves the origin (redirectToSlash at the root)', () => {
    for (const [transport, send] of transports) {
        describe(`over ${transport}`, () => {
            it('redirects a plain directory path to the same path with a slash', async () => {
                const answer = await send('/dir?x=1');
                expect(answer.status).toBe(302);
                expect(answer.location).toBe('/dir/?x=1');
            });

            it.each(safePaths)('%s: any redirect stays on the origin', async (path) => {
                const answer = await send(path);
                expect(answer.status, path).not.toBe(500);
                assertSameOriginLocation(answer, path);
            });

            it.each(unsafePaths)('%s: answers 404 or 400, never a redirect', async (path) => {
                const answer = await send(path);
                expect([400, 404], `${path} answered ${answer.status} ${answer.location ?? ''}`).toContain(
                    answer.status
                );
            });

            it.each([...safePaths, ...unsafePaths].map((path) => path.replace(/(\?|$)/, '/$1')))(
                '%s: a listing links only to the origin',
                async (path) => {
                    const answer = await send(path);
                    expect(answer.status, path).not.toBe(500);
                    assertSameOriginLinks(answer, path);
                }
            );
        });
    }

    it.each([
        '/\t/evil.com',
        '/\t\t/evil.com',
        '/\x0b/evil.com',
        '/\x0c/evil.com',
        '/\x7f/evil.com',
        '/\\\t\\evil.com'
    ])('%j written raw (unencoded control characters) answers 400, never a redirect', async (path) => {
        expect((await raw(path)).status).toBe(400);
    });

    it('redirects the safe directories that exist, with the path percent-encoded', async () => {
        expect((await inject('/evil.com')).location).toBe('/evil.com/');
        expect((await inject('/@evil.com')).location).toBe('/@evil.com/');
        expect((await inject('/%252fevil.com')).location).toBe('/%252fevil.com/');
        expect((await inject('/%EF%BC%8Fevil.com')).location).toBe('/%EF%BC%8Fevil.com/');
        expect((await raw('/dir/evil.com')).location).toBe('/dir/evil.com/');
    });
});

describe('sameOriginPath', () => {
    it('keeps a plain path as it is', () => {
        expect(sameOriginPath('/')).toBe('/');
        expect(sameOriginPath('/a/b')).toBe('/a/b');
        expect(sameOriginPath('/a/b/')).toBe('/a/b/');
        expect(sameOriginPath("/a:b/@c/!$&'()*+,;=~")).toBe("/a:b/@c/!$&'()*+,;=~");
    });

    it('percent-encodes every character that is not a plain path character', () => {
        expect(sameOriginPath('/a b/ü/"<>`{}|^')).toBe('/a%20b/%C3%BC/%22%3C%3E%60%7B%7D%7C%5E');
        expect(sameOriginPath('/a?b#c')).toBe('/a%3Fb%23c');
    });

    it.each([
        'relative',
        '',
        '//host',
        '/a//b',
        '/\\host',
        '/a\\b',
        '/%2fhost',
        '/%5Chost',
        '/.',
        '/a/..',
        '/%2e%2e',
        '/%09',
        '/\t/host',
        '/%0A',
        '/%7F',
        '/%E0%A4%A',
        '/%ZZ',
        '/a\ud800b'
    ])('refuses %j', (path) => {
        expect(sameOriginPath(path)).toBeNull();
    });
});
