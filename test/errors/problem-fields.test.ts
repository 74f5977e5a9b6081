import Boom from '@hapi/boom';
import { describe, expect, it } from 'vitest';
import { errors } from '../../src/index.js';

/** `cause` exactly as ES2022 sets it on `new Error(message, { cause })`. */
function expectEs2022Cause(error: Error, cause: unknown): void {
    const reference = new Error('reference', { cause });
    expect(Object.getOwnPropertyDescriptor(error, 'cause')).toStrictEqual(
        Object.getOwnPropertyDescriptor(reference, 'cause')
    );
    expect(Object.getOwnPropertyDescriptor(error, 'cause')).toStrictEqual({
        value: cause,
        writable: true,
        enumerable: false,
        configurable: true
    });
}

const problem = {
    type: 'https://example.com/probs/out-of-credit',
    title: 'You do not have enough credit.',
    instance: '/account/12345/msgs/abc',
    extensions: { balance: 30, accounts: ['/account/12345', '/account/67890'] }
};

describe('factories given problem fields', () => {
    it('leave the output, the keys and the JSON of the error exactly as without them', () => {
        const plain = errors.forbidden('Your balance is 30', { id: 7 });
        const withProblem = errors.forbidden('Your balance is 30', { id: 7 }, problem);
        expect(withProblem.output).toStrictEqual(plain.output);
        expect(Object.keys(withProblem)).toStrictEqual(Object.keys(plain));
        expect(JSON.stringify(withProblem)).toBe(JSON.stringify(plain));
        expect(errors.toProblem(withProblem)).toStrictEqual({
            type: 'https://example.com/probs/out-of-credit',
            title: 'You do not have enough credit.',
            status: 403,
            detail: 'Your balance is 30',
            instance: '/account/12345/msgs/abc',
            balance: 30,
            accounts: ['/account/12345', '/account/67890']
        });
    });

    it('are taken by every kind of factory, as its last argument', () => {
        const type = 'https://example.com/probs/x';
        const made = [
            errors.notFound('a', null, { type }),
            errors.badGateway('a', null, { type }),
            errors.methodNotAllowed('a', null, 'GET', { type }),
            errors.unauthorized('a', 'Bearer', { realm: 'api' }, { type }),
            errors.internal('a', null, 503, { type }),
            errors.badImplementation('a', null, { type }),
            new errors.HttpError('a', { statusCode: 409, type }),
            errors.toHttpError(new Error('a'), { statusCode: 400, type })
        ];
        for (const error of made) {
            expect(errors.toProblem(error).type).toBe(type);
        }
    });

    it('decorate an Error handed to a factory in place, and give that same error back', () => {
        const original = new Error('quota exceeded');
        const error = errors.tooManyRequests(original, { user: 1 }, { type: 'https://example.com/probs/quota' });
        expect(error).toBe(original);
        expect(errors.toProblem(error)).toMatchObject({ type: 'https://example.com/probs/quota', status: 429 });
    });

    it("add to boom's errors and hapi's through toHttpError without changing their status or payload", () => {
        const boom = Boom.notFound('no such user');
        const payload = structuredClone(boom.output.payload);
        errors.toHttpError(boom, { type: 'https://example.com/probs/no-user', extensions: { user: 7 } });
        expect(boom.output.payload).toStrictEqual(payload);
        expect(errors.toProblem(boom)).toStrictEqual({
            type: 'https://example.com/probs/no-user',
            title: 'Not Found',
            status: 404,
            detail: 'no such user',
            user: 7
        });
    });

    it('merge fields given again over the ones an error has', () => {
        const error = errors.conflict('taken', null, { type: 'https://example.com/probs/taken', title: 'Taken' });
        errors.toHttpError(error, { title: 'Name taken', override: false });
        expect(errors.toProblem(error)).toMatchObject({ type: 'https://example.com/probs/taken', title: 'Name taken' });
    });

    it('treat null and undefined as not set', () => {
        const error = errors.notFound('x', null, {
            type: null,
            title: undefined,
            detail: null,
            instance: null,
            extensions: null,
            cause: null
        });
        expect(errors.toProblem(error)).toStrictEqual({
            type: 'about:blank',
            title: 'Not Found',
            status: 404,
            detail: 'x'
        });
        expect(Object.hasOwn(error, 'cause')).toBe(false);
        expect(errors.toProblem(errors.notFound('x', null, null))).toMatchObject({ type: 'about:blank' });
    });

    describe('refuse, with a TypeError naming the option, what a problem document cannot carry', () => {
        const cases: [string, Record<string, unknown>, RegExp][] = [
            ['a type that is not a URI reference', { type: 'out of credit' }, /option type must be a URI reference/],
            ['an empty type', { type: '' }, /option type must be a URI reference/],
            ['a type that is not a string', { type: 42 }, /option type must be a URI reference.*number 42/],
            ['a non-ASCII type', { type: 'https://example.com/probs/crédit' }, /option type/],
            ['an instance with a space', { instance: '/a b' }, /option instance must be a URI reference/],
            ['brackets outside an IP literal', { instance: '/items[0]' }, /option instance must be a URI reference/],
            [
                'a fragment with a second #',
                { type: 'https://example.com/p#a#b' },
                /option type must be a URI reference/
            ],
            ['a relative type whose first segment has a colon', { type: '1-out:credit' }, /option type/],
            ['a title that is not a string', { title: ['x'] }, /option title must be a string, got an array/],
            ['a detail that is not a string', { detail: 5 }, /option detail must be a string/],
            ['extensions that are an array', { extensions: [1] }, /option extensions must be a plain object/],
            ['extensions that are a Map', { extensions: new Map() }, /option extensions must be a plain object.*Map/],
            ['an extension named like a member of RFC 9457', { extensions: { status: 1 } }, /cannot hold status/],
            [
                'an extension named __proto__',
                { extensions: JSON.parse('{"__proto__": {"polluted": true}}') },
                /__proto__/
            ],
            [
                'an extension named constructor, which a deep merge follows to a prototype',
                { extensions: { constructor: { prototype: { polluted: true } } } },
                /cannot hold a member named constructor/
            ],
            ['an extension named prototype', { extensions: { prototype: { polluted: true } } }, /named prototype/],
            [
                'a BigInt extension',
                { extensions: { big: 10n } },
                /extensions\.big is bigint 10, which JSON cannot carry/
            ],
            [
                'a function deep in an extension',
                { extensions: { a: [{ f() {} }] } },
                /extensions\.a\[0\]\.f is function/
            ],
            ['a non-finite number', { extensions: { n: Number.NaN } }, /extensions\.n is number NaN/]
        ];
        for (const [what, options, message] of cases) {
            it(what, () => {
                expect(() => errors.badRequest('x', null, options)).toThrow(TypeError);
                expect(() => errors.badRequest('x', null, options)).toThrow(message);
            });
        }

        it('an extension that holds a cycle', () => {
            const cyclic: Record<string, unknown> = {};
            cyclic.self = cyclic;
            expect(() => errors.badRequest('x', null, { extensions: { cyclic } })).toThrow(
                /nests deeper than 32 levels/
            );
        });

        it('and leave an Error handed over untouched when they refuse', () => {
            const original = new Error('x');
            expect(() => errors.notFound(original, null, { type: 'not a uri' })).toThrow(TypeError);
            expect(Object.keys(original)).toStrictEqual([]);
            expect(errors.isHttpError(original)).toBe(false);
        });
    });

    it('accept every form of URI reference: absolute, relative, an IP literal, a URN, a fragment', () => {
        for (const type of [
            'https://example.com/probs/out-of-credit',
            'http://[::1]:8080/probs/x',
            'urn:example:problem:out-of-credit',
            'tag:example.com,2026:out-of-credit',
            'out-of-credit',
            './probs/x?v=1#section',
            '/probs/%C3%A9t%C3%A9'
        ]) {
            expect(errors.toProblem(errors.badRequest('x', null, { type })).type).toBe(type);
        }
    });

    it('accept extension values JSON turns into something (a Date), and null', () => {
        const when = new Date(0);
        const error = errors.badRequest('x', null, { extensions: { when, none: null } });
        expect(JSON.parse(JSON.stringify(errors.toProblem(error)))).toMatchObject({
            when: '1970-01-01T00:00:00.000Z',
            none: null
        });
    });
});

describe('cause', () => {
    it('is set as ES2022 sets it on a new error given one: own, writable, not enumerable', () => {
        const inner = new Error('ECONNRESET');
        const error = errors.badGateway('upstream failed', null, { cause: inner });
        expectEs2022Cause(error, inner);
        expect(Object.keys(error)).toStrictEqual(['data', 'isHttpError', 'isServer', 'output']);
        expect(JSON.stringify(error)).not.toContain('ECONNRESET');
    });

    it('is set by the constructor and by unauthorized, and may be any value, as with Error', () => {
        expectEs2022Cause(new errors.HttpError('x', { statusCode: 502, cause: 'socket hang up' }), 'socket hang up');
        const inner = new Error('token expired');
        expectEs2022Cause(errors.unauthorized('expired', 'Bearer', null, { cause: inner }), inner);
        expectEs2022Cause(errors.methodNotAllowed('x', null, 'GET', { cause: 0 }), 0);
    });

    it('names the Error a new error is made around as its data', () => {
        const inner = Boom.notFound('row 7');
        const error = errors.internal('lookup failed', inner);
        expect(error).not.toBe(inner);
        expect(error.data).toBe(inner);
        expectEs2022Cause(error, inner);

        const failure = new TypeError('bad input');
        expectEs2022Cause(errors.badRequest('rejected', failure), failure);
        expectEs2022Cause(new errors.HttpError('x', { statusCode: 500, data: failure }), failure);
    });

    it('prefers the cause given to the Error given as data', () => {
        const data = new Error('data');
        const cause = new Error('cause');
        expectEs2022Cause(errors.badRequest('x', data, { cause }), cause);
    });

    it('is absent from an error made around nothing, as on a plain Error', () => {
        for (const error of [errors.notFound('x'), errors.notFound('x', { id: 1 }), new errors.HttpError('x')]) {
            expect(Object.getOwnPropertyDescriptor(error, 'cause')).toBeUndefined();
        }
    });

    it('is refused where no new error is made: the Error given keeps its own cause', () => {
        const original = new Error('x', { cause: 'its own' });
        expect(() => errors.notFound(original, null, { cause: 'other' })).toThrow(/cause applies to a new error only/);
        expect(() => errors.internal('x', original, 500, { cause: 'other' })).toThrow(TypeError);
        expect(() => new errors.HttpError(original, { cause: 'other' })).toThrow(TypeError);
        expect(() => errors.toHttpError(original, { cause: 'other' } as unknown as errors.ToHttpErrorOptions)).toThrow(
            TypeError
        );
        expect(original.cause).toBe('its own');
        expect(errors.isHttpError(original)).toBe(false);
    });

    it("keeps a decorated Error's own cause, as boom's decoration does", () => {
        const original = new Error('x', { cause: 'its own' });
        expect(errors.internal('wrapped', original).cause).toBe('its own');
        expect(errors.toHttpError(original, { statusCode: 503 }).cause).toBe('its own');
    });
});
