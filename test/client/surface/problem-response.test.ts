import { STATUS_CODES } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { client, type ResponseErrorData } from '../../../src/client/index.js';
import { errors } from '../../../src/index.js';
import { MockNetwork } from '../../../src/testing/index.js';
import { expectValidProblem } from '../../errors/problem-schema.js';
import { seeded } from '../../seeded.js';

/*
 * A helper's 4xx/5xx answered as `application/problem+json` carries its document in `data.problem`
 * (docs/problem-details.md, "The client: `data.problem`"). The responses are scripted by a MockNetwork
 * (docs/testing.md): the helper reads them above the transport seam as it reads a server's. The body of
 * each response is registered under a path of its own and sent as given.
 */

interface Reply {
    status: number;
    contentType?: string;
    body: string | Buffer;
    encoding?: string;
}

const origin = 'http://problems.test';
const mock = new MockNetwork();
const api = client.defaults({ mock });
let nextPath = 0;

afterAll(() => {
    mock.close();
});

/** The URL of a response with this status, content type and body. */
function serve(reply: Reply): string {
    const path = `/r${nextPath++}`;
    const headers: Record<string, string> = {};
    if (reply.contentType !== undefined) {
        headers['content-type'] = reply.contentType;
    }

    if (reply.encoding !== undefined) {
        headers['content-encoding'] = reply.encoding;
    }

    mock.origin(origin).get(path).reply(reply.status, reply.body, headers);
    return `${origin}${path}`;
}

const problemJson = 'application/problem+json';

/** The RFC 9457 example (section 3), as a server sends it. */
const outOfCredit = {
    type: 'https://example.com/probs/out-of-credit',
    title: 'You do not have enough credit.',
    status: 403,
    detail: 'Your current balance is 30, but that costs 50.',
    instance: '/account/12345/msgs/abc',
    balance: 30,
    accounts: ['/account/12345', '/account/67890']
};

/** The error a helper rejects with, checked to be the usual one for its status: the problem never changes it. */
async function rejection(url: string, options: Parameters<typeof client.get>[1] = {}, status = 403) {
    const err = await api.get(url, options).then(
        () => {
            throw new Error('expected a rejection');
        },
        (failure: unknown) => failure
    );
    expect(errors.isHttpError(err, status)).toBe(true);
    const error = err as errors.HttpError<ResponseErrorData>;
    expect(error.message).toBe(`Response Error: ${status} ${STATUS_CODES[status]}`);
    expect(error.data.isResponseError).toBe(true);
    if (error.data.problem !== undefined) {
        expectValidProblem(error.data.problem);
    }

    return error;
}

describe('data.problem: the problem document of a rejected response', () => {
    it('reads the document of an application/problem+json body, extension members included', async () => {
        const body = JSON.stringify(outOfCredit);
        const err = await rejection(serve({ status: 403, contentType: problemJson, body }));
        expect(err.data.problem).toStrictEqual(outOfCredit);
        // Without `json`, the payload is the raw body as ever: the document was read from a copy.
        expect(err.data.payload).toStrictEqual(Buffer.from(body));
        expect(Object.keys(err.data)).toStrictEqual(['isResponseError', 'headers', 'payload', 'res', 'problem']);
    });

    it('reads every problem document the problemDetails plugin can send, the same on both sides', async () => {
        for (const made of [
            errors.notFound('No user 7'),
            errors.unauthorized('expired', 'Bearer', { realm: 'api' }),
            errors.badGateway('hidden', null, { detail: 'The ledger did not answer' }),
            errors.conflict('taken', null, { type: 'https://example.com/probs/taken', extensions: { id: [1, null] } })
        ]) {
            const document = errors.toProblem(made, { instance: '/users/7' });
            const status = made.output.statusCode;
            const err = await rejection(
                serve({ status, contentType: problemJson, body: JSON.stringify(document) }),
                {},
                status
            );
            expect(err.data.problem).toStrictEqual(document);
        }
    });

    it('takes the media type in any case and with parameters', async () => {
        for (const contentType of [
            'application/problem+json; charset=utf-8',
            'Application/Problem+JSON',
            ' application/problem+json ;charset="utf-8"'
        ]) {
            const err = await rejection(serve({ status: 403, contentType, body: JSON.stringify(outOfCredit) }));
            expect(err.data.problem, contentType).toStrictEqual(outOfCredit);
        }
    });

    it("reuses the value json parsed (true, 'strict', 'force'), leaving the payload as json gave it", async () => {
        const body = JSON.stringify(outOfCredit);
        for (const json of [true, 'strict', 'force'] as const) {
            const err = await rejection(serve({ status: 403, contentType: problemJson, body }), { json });
            expect(err.data.payload, String(json)).toStrictEqual(outOfCredit);
            expect(err.data.problem).toStrictEqual(outOfCredit);
            // A copy: editing the document leaves the payload as it was.
            expect(err.data.problem).not.toBe(err.data.payload);
        }
    });

    it('reads a gzip body after decoding it, and counts its bound on the decoded bytes', async () => {
        const small = gzipSync(JSON.stringify(outOfCredit));
        const err = await rejection(serve({ status: 403, contentType: problemJson, body: small, encoding: 'gzip' }), {
            gunzip: true
        });
        expect(err.data.problem).toStrictEqual(outOfCredit);

        // 20 KB on the wire, 1 MB decoded: over the bound, not read.
        const bomb = gzipSync(JSON.stringify({ ...outOfCredit, padding: ' '.repeat(1_000_000) }));
        expect(bomb.length).toBeLessThan(errors.problemReadLimits.bodyBytes);
        const big = await rejection(serve({ status: 403, contentType: problemJson, body: bomb, encoding: 'gzip' }), {
            gunzip: true
        });
        expect(big.data.problem).toBeUndefined();
    });

    it('keeps a 5xx document as it came: the client reads what the server chose to send', async () => {
        const document = { type: 'https://example.com/probs/maintenance', status: 503, retryIn: 30 };
        const err = await rejection(
            serve({ status: 503, contentType: problemJson, body: JSON.stringify(document) }),
            {},
            503
        );
        expect(err.data.problem).toStrictEqual(document);
    });
});

describe('data.problem is left unset, and the rejection unchanged, for what is not a problem document', () => {
    it('another content type: application/json, text/plain, +xml, none, a longer name', async () => {
        const body = JSON.stringify(outOfCredit);
        for (const contentType of [
            'application/json',
            'text/plain',
            'application/problem+xml',
            'application/problem+jsonx',
            'application/problem',
            'problem+json',
            undefined
        ]) {
            for (const json of [undefined, true] as const) {
                const err = await rejection(serve({ status: 403, body, ...(contentType && { contentType }) }), {
                    json
                });
                expect(err.data.problem, `${contentType} json ${json}`).toBeUndefined();
                expect(Object.keys(err.data)).not.toContain('problem');
            }
        }
    });

    it('a body that is not JSON, empty, or JSON but not an object', async () => {
        for (const body of [
            '<html>Bad Gateway</html>',
            '',
            '{"type":',
            '[{"type":"about:blank"}]',
            '"x"',
            '42',
            'null'
        ]) {
            for (const json of [undefined, true] as const) {
                const err = await rejection(serve({ status: 403, contentType: problemJson, body }), { json });
                expect(err.data.problem, `${body} json ${json}`).toBeUndefined();
            }
        }
    });

    it('members of the wrong type are ignored (RFC 9457, 3.1): what is left is a document about:blank', async () => {
        const body = JSON.stringify({ type: 42, title: ['x'], status: '403', detail: {}, instance: 'a b', code: 7 });
        const err = await rejection(serve({ status: 403, contentType: problemJson, body }));
        expect(err.data.problem).toStrictEqual({ type: 'about:blank', code: 7 });
    });

    it('a body over problemReadLimits.bodyBytes is not read, json or not; one of exactly the bound is', async () => {
        const limit = errors.problemReadLimits.bodyBytes;
        const sized = (bytes: number): string => {
            const head = JSON.stringify({ ...outOfCredit, padding: '' });
            return `${head.slice(0, -2)}${' '.repeat(bytes - head.length)}"}`;
        };
        expect(Buffer.byteLength(sized(limit))).toBe(limit);
        const atLimit = await rejection(serve({ status: 403, contentType: problemJson, body: sized(limit) }));
        expect(atLimit.data.problem).toMatchObject({ type: outOfCredit.type });
        for (const json of [undefined, true] as const) {
            const over = await rejection(serve({ status: 403, contentType: problemJson, body: sized(limit + 1) }), {
                json
            });
            expect(over.data.problem, `json ${json}`).toBeUndefined();
        }
    });

    it('a 10 MB document: the rejection carries its body, not a document', async () => {
        const body = JSON.stringify({ ...outOfCredit, detail: 'x'.repeat(10 * 1024 * 1024) });
        for (const json of [undefined, true] as const) {
            const err = await rejection(serve({ status: 403, contentType: problemJson, body }), { json });
            expect(err.data.problem).toBeUndefined();
            expect(json ? (err.data.payload as { detail: string }).detail.length : Buffer.byteLength(body)).toBe(
                json ? 10 * 1024 * 1024 : body.length
            );
        }
    });

    it('deep nesting: 100,000 levels are over the bound; 30,000 within it leave the nested member out', async () => {
        const nested = (levels: number): string =>
            `{"type":"https://example.com/probs/deep","nested":${'['.repeat(levels)}${']'.repeat(levels)}}`;
        for (const json of [undefined, true] as const) {
            const deep = await rejection(serve({ status: 403, contentType: problemJson, body: nested(100_000) }), {
                json
            });
            expect(deep.data.problem).toBeUndefined();
            const within = await rejection(serve({ status: 403, contentType: problemJson, body: nested(30_000) }), {
                json
            });
            expect(within.data.problem).toStrictEqual({ type: 'https://example.com/probs/deep' });
        }
    });

    it('names that would change a prototype are never kept, and Object.prototype stays clean', async () => {
        const body =
            '{"type":"about:blank","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},' +
            '"nested":{"__proto__":{"polluted":true},"ok":1}}';
        const err = await rejection(serve({ status: 403, contentType: problemJson, body }));
        expect(err.data.problem).toStrictEqual({ type: 'about:blank', nested: { ok: 1 } });
        expect(Object.getPrototypeOf(err.data.problem)).toBe(Object.prototype);
        expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    });

    it('a successful response is resolved as ever, whatever its content type', async () => {
        const { payload } = await api.get(serve({ status: 200, contentType: problemJson, body: '{"type":"x"}' }));
        expect(payload).toStrictEqual(Buffer.from('{"type":"x"}'));
    });
});

describe('data.problem on a seeded mix of hostile bodies', () => {
    /** A body a hostile or broken server may send: JSON of odd shapes, broken JSON, bytes, sizes around the bound. */
    function hostileBody(random: () => number): string | Buffer {
        const limit = errors.problemReadLimits.bodyBytes;
        const pick = Math.floor(random() * 10);
        const member = (): string =>
            JSON.stringify(
                [
                    'about:blank',
                    'a b',
                    42,
                    null,
                    [1, [2, [3]]],
                    { __proto__: 1 },
                    'x'.repeat(Math.floor(random() * 10_000)),
                    -0,
                    1e308,
                    true
                ][Math.floor(random() * 10)]
            );
        switch (pick) {
            case 0:
                return Buffer.from(
                    Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256))
                );
            case 1:
                return `{"type":${member()}`.slice(0, Math.floor(random() * 20));
            case 2:
                return `${'['.repeat(Math.floor(random() * 40_000))}`;
            case 3:
                return JSON.stringify({ type: 'about:blank', pad: ' '.repeat(limit - 40 + Math.floor(random() * 80)) });
            case 4:
                return `[${member()}]`;
            default: {
                const names = [
                    'type',
                    'title',
                    'status',
                    'detail',
                    'instance',
                    '__proto__',
                    'constructor',
                    'a',
                    'errors'
                ];
                const members = Array.from(
                    { length: Math.floor(random() * 8) },
                    () => `${JSON.stringify(names[Math.floor(random() * names.length)])}:${member()}`
                );
                return `{${members.join(',')}}`;
            }
        }
    }

    // 150 rounds of a mocked origin and a real client: seconds alone, far more beside a loaded suite (its own bound below).
    it('never changes the rejection, answers only documents of the schema, and leaves Object.prototype alone', async () => {
        const random = seeded(39);
        const contentTypes = [problemJson, `${problemJson}; charset=utf-8`, 'application/json', 'text/html'];
        let documents = 0;
        for (let round = 0; round < 150; round++) {
            const status = [400, 403, 404, 422, 500, 502, 503][Math.floor(random() * 7)]!;
            const contentType = contentTypes[Math.floor(random() * contentTypes.length)]!;
            const json = [undefined, true, 'force'][Math.floor(random() * 3)] as undefined | true | 'force';
            const body = hostileBody(random);
            const err = await rejection(serve({ status, contentType, body }), { json }, status);
            if (err.data.problem !== undefined) {
                documents++;
                expect(contentType.startsWith(problemJson)).toBe(true);
            }

            if (json === undefined) {
                expect(err.data.payload).toStrictEqual(Buffer.from(body));
            }
        }

        expect(documents).toBeGreaterThan(10);
        expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    }, 60_000);
});
