import Boom from '@hapi/boom';
import { describe, expect, it } from 'vitest';
import { errors } from '../../src/index.js';
import { expectValidProblem, isValidProblem } from './problem-schema.js';

/** toProblem(), held to the schema of RFC 9457 every time. */
function problemOf(err: unknown, context?: errors.ProblemContext): errors.ProblemDetails {
    const document = errors.toProblem(err, context);
    expectValidProblem(document);
    return document;
}

describe('the schema fixture', () => {
    it('is the schema of RFC 9457: it refuses wrong types and URI references that are not', () => {
        expect(isValidProblem({ type: 'about:blank', status: 404 })).toBe(true);
        expect(isValidProblem({ status: '404' })).toBe(false);
        expect(isValidProblem({ status: 600 })).toBe(false);
        expect(isValidProblem({ type: 'not a uri' })).toBe(false);
        expect(isValidProblem({ instance: 7 })).toBe(false);
        expect(isValidProblem([])).toBe(false);
    });
});

describe('toProblem(): the mapping of an error to its problem document', () => {
    it('gives an error without problem fields type about:blank, the reason phrase as title, its message as detail', () => {
        expect(problemOf(errors.notFound('No user 7'))).toStrictEqual({
            type: 'about:blank',
            title: 'Not Found',
            status: 404,
            detail: 'No user 7'
        });
    });

    it('takes the title of about:blank from the registry of reason phrases, not the classic error text', () => {
        const titles = [
            [errors.clientTimeout(), 'Request Timeout', 'Request Time-out'],
            [errors.entityTooLarge(), 'Content Too Large', 'Request Entity Too Large'],
            [errors.uriTooLong(), 'URI Too Long', 'Request-URI Too Large'],
            [errors.rangeNotSatisfiable(), 'Range Not Satisfiable', 'Requested Range Not Satisfiable'],
            [errors.badData(), 'Unprocessable Content', 'Unprocessable Entity'],
            [errors.gatewayTimeout(), 'Gateway Timeout', 'Gateway Time-out'],
            [errors.teapot(), "I'm a Teapot", "I'm a Teapot"],
            [
                new errors.HttpError('x', { statusCode: 431 }),
                'Request Header Fields Too Large',
                'Request Header Fields Too Large'
            ],
            [new errors.HttpError('x', { statusCode: 499 }), 'Unknown', 'Unknown']
        ] as const;
        for (const [error, title, classic] of titles) {
            expect(problemOf(error).title).toBe(title);
            expect(error.output.payload.error).toBe(classic);
        }
    });

    it("has no detail without a message, nor for boom's copy of the status text", () => {
        expect(problemOf(errors.forbidden())).toStrictEqual({ type: 'about:blank', title: 'Forbidden', status: 403 });
        expect(problemOf(Boom.forbidden())).toStrictEqual({ type: 'about:blank', title: 'Forbidden', status: 403 });
    });

    it('never shows the message of a 5xx, even one boom shows or reformat(true) put back', () => {
        const hidden = [
            errors.badGateway('upstream 10.0.0.7 refused'),
            errors.internal('password=hunter2'),
            Boom.serverUnavailable('db 10.0.0.7 down'),
            Boom.badImplementation('secret'),
            errors.toHttpError(new Error('stack detail'), { statusCode: 500 })
        ];
        const debugged = errors.badGateway('10.0.0.8 too');
        debugged.reformat(true);
        hidden.push(debugged);
        for (const error of hidden) {
            const document = problemOf(error);
            expect(document.detail).toBeUndefined();
            expect(JSON.stringify(document)).not.toMatch(/10\.0\.0|hunter2|secret|stack detail/);
        }
    });

    it('never shows data, of a 4xx or a 5xx', () => {
        const data = { password: 'hunter2', path: '/srv/private' };
        for (const error of [errors.badRequest('x', data), errors.internal('x', data), errors.notFound(null, data)]) {
            expect(JSON.stringify(problemOf(error))).not.toMatch(/hunter2|private/);
        }
    });

    it('shows a detail given explicitly, also for a 5xx', () => {
        const error = errors.serverUnavailable('db down at 10.0.0.7', null, { detail: 'Maintenance until 14:00 UTC' });
        expect(problemOf(error)).toStrictEqual({
            type: 'about:blank',
            title: 'Service Unavailable',
            status: 503,
            detail: 'Maintenance until 14:00 UTC'
        });
    });

    it("takes a 4xx's detail from the payload the classic answer would show, edits included", () => {
        const error = errors.badRequest('internal wording');
        error.output.payload.message = 'public wording';
        expect(problemOf(error).detail).toBe('public wording');
    });

    it("carries what the classic payload shows beyond its three members: a 401's attributes, hapi's validation", () => {
        expect(problemOf(errors.unauthorized('expired', 'Bearer', { realm: 'api' }))).toStrictEqual({
            type: 'about:blank',
            title: 'Unauthorized',
            status: 401,
            detail: 'expired',
            attributes: { realm: 'api', error: 'expired' }
        });
        expect(problemOf(errors.unauthorized(null, 'Negotiate', 'abc=='))).toMatchObject({ attributes: 'abc==' });

        const validation = Boom.badRequest('"name" is required');
        validation.output.payload.validation = { source: 'payload', keys: ['name'] };
        expect(problemOf(validation)).toMatchObject({ validation: { source: 'payload', keys: ['name'] } });
    });

    it('lets the error’s extensions follow the payload’s members and never replace a member of RFC 9457', () => {
        const error = errors.badRequest('x', null, { extensions: { attributes: 'mine', extra: 1 } });
        Object.assign(error.output.payload, { attributes: 'payload', type: 'https://evil.example/', status: 200 });
        expect(problemOf(error)).toStrictEqual({
            type: 'about:blank',
            title: 'Bad Request',
            status: 400,
            detail: 'x',
            attributes: 'mine',
            extra: 1
        });
    });

    it('never carries a member named __proto__, constructor or prototype, which would change the prototype of a client that merges the document', () => {
        const error = errors.badRequest('x');
        for (const name of ['__proto__', 'constructor', 'prototype']) {
            Object.defineProperty(error.output.payload, name, { value: { polluted: true }, enumerable: true });
        }

        expect(Object.keys(error.output.payload)).toEqual(
            expect.arrayContaining(['__proto__', 'constructor', 'prototype'])
        );
        const document = problemOf(error);
        expect(Object.getPrototypeOf(document)).toBe(Object.prototype);
        expect(Object.keys(document)).toEqual(['type', 'title', 'status', 'detail']);
        expect(JSON.stringify(document)).not.toContain('polluted');
    });

    it('resolves a relative type against typeBase and sends an absolute one as given', () => {
        const relative = errors.forbidden('x', null, { type: 'out-of-credit' });
        expect(problemOf(relative, { typeBase: 'https://example.com/probs/' }).type).toBe(
            'https://example.com/probs/out-of-credit'
        );
        expect(problemOf(relative).type).toBe('out-of-credit');
        const absolute = errors.forbidden('x', null, { type: 'HTTPS://Example.com/a/../b' });
        expect(problemOf(absolute, { typeBase: 'https://example.com/probs/' }).type).toBe('HTTPS://Example.com/a/../b');
        expect(problemOf(errors.forbidden(), { typeBase: 'https://example.com/probs/' }).type).toBe('about:blank');
    });

    it("gives the context's instance to an error without its own", () => {
        expect(problemOf(errors.notFound(), { instance: '/users/7' }).instance).toBe('/users/7');
        const own = errors.notFound(null, null, { instance: 'urn:uuid:8a0e4d5c-0c52-4f5e-8f44-6a1b0b9e3f10' });
        expect(problemOf(own, { instance: '/users/7' }).instance).toBe('urn:uuid:8a0e4d5c-0c52-4f5e-8f44-6a1b0b9e3f10');
    });

    it('answers a value that is not an HttpError as the 500 hapi would send for it', () => {
        for (const value of [new Error('secret'), 'string', undefined, null, { output: 1 }]) {
            expect(problemOf(value, { instance: '/x' })).toStrictEqual({
                type: 'about:blank',
                title: 'Internal Server Error',
                status: 500,
                instance: '/x'
            });
        }
    });

    it('gives a value that is not an HttpError no instance without a context', () => {
        expect(problemOf(new Error('x'))).toStrictEqual({
            type: 'about:blank',
            title: 'Internal Server Error',
            status: 500
        });
    });

    it('takes no extension member from a payload a handler replaced with something not an object', () => {
        const error = errors.badRequest('x');
        (error.output as { payload: unknown }).payload = 'plain text';
        expect(problemOf(error)).toStrictEqual({ type: 'about:blank', title: 'Bad Request', status: 400 });
    });

    it('leaves out a status a hand-edited output made impossible', () => {
        const error = errors.notFound();
        error.output.statusCode = 999;
        expect(problemOf(error).status).toBeUndefined();
    });

    it('refuses a context it cannot use, naming the option', () => {
        expect(() => errors.toProblem(errors.notFound(), { typeBase: 'probs/' })).toThrow(
            /toProblem\(\) option typeBase must be an absolute URI/
        );
        expect(() => errors.toProblem(errors.notFound(), { typeBase: 'urn:example:probs' })).toThrow(TypeError);
        expect(() => errors.toProblem(errors.notFound(), { instance: 'a b' })).toThrow(
            /toProblem\(\) option instance must be a URI reference/
        );
    });
});
