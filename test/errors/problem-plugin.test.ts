import * as Fs from 'node:fs';
import * as Http from 'node:http';
import Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors, problemDetails } from '../../src/index.js';
import { createFiles, createProblemServer, failingRequests, problemOf, sharedError } from './problem-routes.js';

const typeBase = 'https://example.com/probs/';
const hidden = /10\.0\.0\.7|hunter2|db1|internal-id-9|secret\.txt|tracewire-problem-/;

/** Headers that describe the bytes or the connection, not the error. */
const transportHeaders = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'vary']);

function errorHeaders(headers: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(headers).filter(([name]) => !transportHeaders.has(name)));
}

let files: string;
let plain: Hapi.Server;
let negotiating: Hapi.Server;
let always: Hapi.Server;

beforeAll(async () => {
    files = createFiles();
    plain = await createProblemServer(files);
    negotiating = await createProblemServer(files, { typeBase });
    always = await createProblemServer(files, { mode: 'always' });
    await Promise.all([plain.start(), negotiating.start(), always.start()]);
});

afterAll(async () => {
    await Promise.all([plain.stop(), negotiating.stop(), always.stop()]);
    Fs.rmSync(files, { recursive: true, force: true });
});

function inject(server: Hapi.Server, name: string, accept?: string) {
    const request = failingRequests[name]!;
    const headers = { ...(request.headers as Record<string, string> | undefined) };
    if (accept !== undefined) {
        headers.accept = accept;
    }

    return server.inject({ ...request, headers });
}

describe('every error response as a problem document, to a client that asks for one', () => {
    for (const name of Object.keys(failingRequests)) {
        it(`${name}: the status, title and detail of the classic answer, its headers, and nothing hidden`, async () => {
            const classic = await inject(plain, name);
            const problem = await inject(negotiating, name, 'application/problem+json');
            const document = problemOf(problem);
            const payload = JSON.parse(classic.payload) as { statusCode: number; error: string; message?: string };

            expect(problem.statusCode).toBe(classic.statusCode);
            expect(document.status).toBe(classic.statusCode);
            const showsMessage = classic.statusCode < 500 && payload.message !== payload.error;
            expect(document.detail).toBe(
                name === 'maintenance' ? 'Back at 14:00 UTC' : showsMessage ? payload.message : undefined
            );
            expect(errorHeaders(problem.headers)).toStrictEqual(errorHeaders(classic.headers));
            expect(problem.headers.vary).toMatch(/\baccept\b/);
            expect(problem.payload).not.toMatch(hidden);
        });
    }

    it('an HttpError with problem fields: its type resolved against typeBase, its title and extensions', async () => {
        const document = problemOf(await inject(negotiating, 'typed', 'application/problem+json'));
        expect(document).toStrictEqual({
            type: 'https://example.com/probs/out-of-credit',
            title: 'You do not have enough credit.',
            status: 403,
            detail: 'Your current balance is 30, but that costs 50.',
            instance: '/typed',
            balance: 30,
            accounts: ['/account/12345', '/account/67890']
        });
    });

    it('a 401 keeps its WWW-Authenticate header and shows its challenge attributes as an extension', async () => {
        const res = await inject(negotiating, 'auth', 'application/problem+json');
        expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="expired"');
        expect(problemOf(res)).toStrictEqual({
            type: 'about:blank',
            title: 'Unauthorized',
            status: 401,
            detail: 'expired',
            instance: '/auth',
            attributes: { realm: 'api', error: 'expired' }
        });
    });

    it('a 405 keeps Allow; a 429 keeps Retry-After and its own Vary, with accept added', async () => {
        expect((await inject(negotiating, 'allow', 'application/problem+json')).headers.allow).toBe('GET, HEAD');
        const retry = await inject(negotiating, 'retry', 'application/problem+json');
        expect(retry.headers['retry-after']).toBe('120');
        expect(retry.headers.vary).toBe('Origin, accept');
        expect(problemOf(retry)).toMatchObject({ status: 429, title: 'Too Many Requests', limit: 100 });
    });

    it('replaces a content-type the error set, and adds accept to its vary only where it is missing', async () => {
        const cases = [
            ['Accept-Encoding, Accept', 'Accept-Encoding, Accept'],
            ['*', '*'],
            [' ', 'accept'],
            ['Origin', 'Origin, accept']
        ];
        for (const [vary, expected] of cases) {
            const res = await negotiating.inject({
                url: `/own-headers/${encodeURIComponent(vary!)}`,
                headers: { accept: 'application/problem+json' }
            });
            expect(problemOf(res)).toMatchObject({ status: 406, detail: 'not here' });
            expect(res.headers.vary).toBe(expected);
        }
    });

    it('a 5xx shows neither message nor data, even where the classic boom payload shows the message', async () => {
        for (const name of ['gateway', 'plain', 'boom-503']) {
            const document = problemOf(await inject(negotiating, name, 'application/problem+json'));
            expect(document.detail).toBeUndefined();
            expect(Object.keys(document)).toStrictEqual(['type', 'title', 'status', 'instance']);
        }

        expect((await inject(plain, 'boom-503')).payload).toContain('10.0.0.7');
    });

    it("hapi's validation failure: joi's message as detail and hapi's validation keys, never the values", async () => {
        const res = await inject(negotiating, 'validation-detailed', 'application/problem+json');
        expect(problemOf(res)).toStrictEqual({
            type: 'about:blank',
            title: 'Bad Request',
            status: 400,
            detail: '"name" is required',
            instance: '/detailed',
            validation: { source: 'payload', keys: ['name'] }
        });
        const byDefault = await inject(negotiating, 'validation-default', 'application/problem+json');
        expect(problemOf(byDefault)).toMatchObject({ status: 400, detail: 'Invalid request payload input' });
    });

    it("the static plugin's 404 and 403 show neither the file-system path nor the file", async () => {
        const missing = problemOf(await inject(negotiating, 'static-404', 'application/problem+json'));
        expect(missing).toStrictEqual({
            type: 'about:blank',
            title: 'Not Found',
            status: 404,
            instance: '/files/missing.txt'
        });
        const escaped = problemOf(await inject(negotiating, 'static-403', 'application/problem+json'));
        expect(escaped).toStrictEqual({ type: 'about:blank', title: 'Forbidden', status: 403, instance: '/escape' });
    });

    it("hapi's own errors: an unknown route, a payload too large, of an unknown type, of invalid JSON", async () => {
        const statuses = await Promise.all(
            ['no-route', 'too-large', 'unsupported-type', 'invalid-json'].map(async (name) => {
                const document = problemOf(await inject(negotiating, name, 'application/problem+json'));
                return [document.status, document.title];
            })
        );
        expect(statuses).toStrictEqual([
            [404, 'Not Found'],
            [413, 'Content Too Large'],
            [415, 'Unsupported Media Type'],
            [400, 'Bad Request']
        ]);
    });
});

describe('the classic payload, byte for byte, to every other client', () => {
    const accepts = [
        undefined,
        '*/*',
        'application/*',
        'application/json',
        'text/html',
        'application/problem+json;q=0'
    ];

    it('is what a server without the plugin sends, with vary: accept added', async () => {
        for (const name of Object.keys(failingRequests)) {
            for (const accept of accepts) {
                const [without, withPlugin] = await Promise.all([
                    inject(plain, name, accept),
                    inject(negotiating, name, accept)
                ]);
                expect(withPlugin.statusCode, `${name} ${accept}`).toBe(without.statusCode);
                expect(withPlugin.payload, `${name} ${accept}`).toBe(without.payload);
                const { vary, ...rest } = withPlugin.headers;
                const { vary: before, ...expected } = without.headers;
                delete rest.date;
                delete expected.date;
                expect(rest, `${name} ${accept}`).toStrictEqual(expected);
                expect(vary).toBe(before === undefined ? 'accept' : `${before}, accept`);
            }
        }
    });

    it('leaves a response that is not an error alone, in either mode', async () => {
        const request = { url: '/files/hello.txt', headers: { accept: 'application/problem+json' } };
        const [without, negotiated, forced] = await Promise.all([
            plain.inject(request),
            negotiating.inject(request),
            always.inject(request)
        ]);
        expect(without.statusCode).toBe(200);
        for (const res of [negotiated, forced]) {
            expect(res.statusCode).toBe(200);
            expect(res.payload).toBe('hello');
            const { date, ...headers } = res.headers;
            const { date: before, ...expected } = without.headers;
            expect(headers).toStrictEqual(expected);
        }
    });

    it('leaves an error thrown again and again as it was', async () => {
        const before = structuredClone(sharedError.output);
        await inject(negotiating, 'shared', 'application/problem+json');
        const classic = await inject(negotiating, 'shared');
        expect(classic.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(JSON.parse(classic.payload)).toStrictEqual({
            statusCode: 404,
            error: 'Not Found',
            message: 'shared instance'
        });
        expect(sharedError.output).toStrictEqual(before);
        expect(Object.keys(sharedError)).toStrictEqual(['data', 'isHttpError', 'isServer', 'output']);
    });
});

describe('content negotiation over real sockets', () => {
    const cases: [string | undefined, 'problem' | 'classic'][] = [
        [undefined, 'classic'],
        ['*/*', 'classic'],
        ['application/*', 'classic'],
        ['application/json', 'classic'],
        ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'classic'],
        ['application/problem+json', 'problem'],
        ['application/problem+json;q=0', 'classic'],
        ['application/json;q=0.5, application/problem+json', 'problem'],
        ['application/problem+json;q=0.5, application/json', 'classic'],
        ['application/problem+json, application/json', 'problem'],
        // Both named at one q-value: the client reads both (what the client's helpers send with json).
        ['application/json, application/problem+json', 'problem'],
        ['application/json, application/problem+json, */*;q=0.8', 'problem'],
        ['application/json, application/*', 'classic'],
        ['*/*;q=0.1, application/problem+json', 'problem'],
        ['application/*;q=0.5, application/json;q=0.1', 'problem'],
        ['APPLICATION/PROBLEM+JSON; charset=utf-8', 'problem']
    ];

    /** A GET over a real connection, with exactly the accept header given (or none at all). */
    function get(server: Hapi.Server, path: string, accept: string | undefined) {
        return new Promise<{ status: number; headers: Http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
            const request = Http.get(
                { host: '127.0.0.1', port: server.info.port, path, headers: accept === undefined ? {} : { accept } },
                (res) => {
                    let body = '';
                    res.setEncoding('utf8');
                    res.on('data', (chunk: string) => {
                        body += chunk;
                    });
                    res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
                    res.on('error', reject);
                }
            );
            request.on('error', reject);
        });
    }

    for (const [accept, expected] of cases) {
        it(`accept ${accept === undefined ? '(none)' : JSON.stringify(accept)}: ${expected}`, async () => {
            const [res, without] = await Promise.all([get(negotiating, '/auth', accept), get(plain, '/auth', accept)]);
            expect(res.status).toBe(401);
            expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="expired"');
            expect(res.headers.vary).toMatch(/\baccept\b/);
            if (expected === 'problem') {
                expect(problemOf({ headers: res.headers, payload: res.body })).toMatchObject({
                    status: 401,
                    instance: '/auth'
                });
            } else {
                expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
                expect(res.body).toBe(without.body);
            }
        });
    }

    it('with mode always: a problem document whatever the accept header, and no vary', async () => {
        for (const accept of [undefined, 'application/json', 'text/html', 'application/problem+json;q=0']) {
            const res = await get(always, '/conflict', accept);
            expect(problemOf({ headers: res.headers, payload: res.body })).toStrictEqual({
                type: 'about:blank',
                title: 'Conflict',
                status: 409,
                detail: 'taken',
                instance: '/conflict'
            });
            expect(res.headers.vary).toBeUndefined();
        }
    });

    it('percent-encodes in instance what a path cannot carry as it is', async () => {
        const res = await get(always, '/odd|path^with`chars%zz', undefined);
        expect(res.status).toBe(404);
        expect(problemOf({ headers: res.headers, payload: res.body }).instance).toBe('/odd%7Cpath%5Ewith%60chars%25zz');
    });
});

describe('the response stays an error for what comes after the plugin', () => {
    it('a later onPreResponse extension still sees the HttpError, and hapi logs the real 500', async () => {
        const server = await createProblemServer(files, { mode: 'always' });
        const seen: unknown[] = [];
        server.ext('onPreResponse', (request, h) => {
            seen.push(errors.isHttpError(request.response, 404));
            // The README's recipe: a page in place of a 404.
            return errors.isHttpError(request.response, 404) ? h.response('custom page').code(404) : h.continue;
        });
        const logged: Error[] = [];
        server.events.on({ name: 'request', channels: 'error' }, (_request, event) => {
            logged.push(event.error as Error);
        });
        const sent: unknown[] = [];
        server.events.on('response', (request) => {
            sent.push((request.plugins as Record<string, unknown>)['tracewire-problem-details']);
        });

        expect((await server.inject('/nowhere')).payload).toBe('custom page');
        const failure = await server.inject('/plain');
        expect(JSON.parse(failure.payload)).toMatchObject({ status: 500 });
        expect(seen).toStrictEqual([true, false]);
        expect(logged.map((error) => error.message)).toStrictEqual(['password=hunter2']);
        expect(errors.isHttpError(logged[0], 500)).toBe(true);
        expect(sent).toStrictEqual([{ type: 'about:blank' }, { type: 'about:blank' }]);
    });

    it('records the type it sent in request.plugins, for the server span', async () => {
        let sent: unknown;
        negotiating.events.once('response', (request) => {
            sent = (request.plugins as Record<string, unknown>)['tracewire-problem-details'];
        });
        await inject(negotiating, 'typed', 'application/problem+json');
        expect(sent).toStrictEqual({ type: 'https://example.com/probs/out-of-credit' });
    });
});

describe('options', () => {
    it('instanceFromPath: false leaves instance to the errors that set one', async () => {
        const server = await createProblemServer(files, { mode: 'always', instanceFromPath: false });
        expect(problemOf(await server.inject('/conflict'))).toStrictEqual({
            type: 'about:blank',
            title: 'Conflict',
            status: 409,
            detail: 'taken'
        });
    });

    it('null and undefined mean the default', async () => {
        const server = await createProblemServer(files, { mode: null, typeBase: undefined, instanceFromPath: null });
        expect((await server.inject('/conflict')).headers['content-type']).toBe('application/json; charset=utf-8');
        expect(
            problemOf(await server.inject({ url: '/conflict', headers: { accept: 'application/problem+json' } }))
        ).toMatchObject({
            instance: '/conflict'
        });
    });

    const refused: [string, unknown, RegExp][] = [
        [
            'a mode it does not know',
            { mode: 'sometimes' },
            /problemDetails option mode must be 'negotiate' or 'always', got string "sometimes"/
        ],
        ['a relative typeBase', { typeBase: 'probs/' }, /problemDetails option typeBase must be an absolute URI/],
        [
            'a typeBase nothing resolves against',
            { typeBase: 'urn:example:probs' },
            /option typeBase must be an absolute URI/
        ],
        ['a typeBase that is not a string', { typeBase: 7 }, /option typeBase .* got number 7/],
        [
            'an instanceFromPath that is not a boolean',
            { instanceFromPath: 'yes' },
            /option instanceFromPath must be a boolean/
        ],
        [
            'an unknown option',
            { mode: 'always', typebase: 'x' },
            /unknown option\(s\) typebase; the options are mode, typeBase and instanceFromPath/
        ],
        ['options that are not an object', 'always', /problemDetails options must be an object/]
    ];
    for (const [what, options, message] of refused) {
        it(`refuses ${what} at registration, naming the option`, async () => {
            // hapi keeps a plugin's name registered even when its registration failed: a server each.
            const registering = Hapi.server().register({ plugin: problemDetails, options: options as never });
            await expect(registering).rejects.toThrow(TypeError);
            await expect(Hapi.server().register({ plugin: problemDetails, options: options as never })).rejects.toThrow(
                message
            );
        });
    }

    it('refuses a second registration on one server rather than keeping either options silently', async () => {
        const server = await createProblemServer(files, {});
        await expect(server.register({ plugin: problemDetails, options: { mode: 'always' } })).rejects.toThrow(
            /already registered/
        );
    });
});
