import Boom from '@hapi/boom';
import { describe, expect, it } from 'vitest';
import { errors } from '../../src/index.js';

const { HttpError, isHttpError, toHttpError } = errors;

describe('an HttpError: its properties and shape', () => {
    it('has exactly the enumerable keys data, isHttpError, isServer, output', () => {
        const error = errors.notFound('missing', { path: '/a' });
        expect(Object.keys(error)).toStrictEqual(['data', 'isHttpError', 'isServer', 'output']);
    });

    it('serialises to JSON with the same keys', () => {
        const json = JSON.parse(JSON.stringify(errors.badRequest('bad')));
        expect(Object.keys(json)).toStrictEqual(['data', 'isHttpError', 'isServer', 'output']);
        expect(json).toStrictEqual({
            data: null,
            isHttpError: true,
            isServer: false,
            output: { statusCode: 400, headers: {}, payload: { statusCode: 400, error: 'Bad Request', message: 'bad' } }
        });
    });

    it('keeps isBoom, reformat and typeof non-enumerable', () => {
        const error = errors.conflict('c');
        for (const name of ['isBoom', 'reformat', 'typeof']) {
            expect(Object.getOwnPropertyDescriptor(error, name)?.enumerable).toBe(false);
        }
        expect((error as unknown as { isBoom: boolean }).isBoom).toBe(true);
        expect(typeof error.reformat).toBe('function');
    });

    it('is a plain Error, yet instanceof HttpError', () => {
        const error = errors.notFound();
        expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
        expect(error.constructor).toBe(Error);
        expect(error).toBeInstanceOf(HttpError);
        expect(new Error('x')).not.toBeInstanceOf(HttpError);
    });

    it('instanceof a subclass holds for the errors that subclass made, and only those', () => {
        class NotFoundError extends HttpError {}
        class GoneError extends HttpError {}
        class MissingPageError extends NotFoundError {}
        const made = new NotFoundError('no such page', { statusCode: 404 });
        const deeper = new MissingPageError('no such page either', { statusCode: 404 });
        const decorated = new NotFoundError(new Error('wrapped'), { statusCode: 404 });
        for (const error of [made, deeper, decorated]) {
            expect(error instanceof NotFoundError).toBe(true);
            expect(error instanceof HttpError).toBe(true);
            expect(error instanceof GoneError).toBe(false);
            expect(isHttpError(error, 404)).toBe(true);
        }

        expect(deeper instanceof MissingPageError).toBe(true);
        expect(made instanceof MissingPageError).toBe(false);
        expect(made.typeof).toBe(NotFoundError);
        for (const other of [errors.notFound(), new HttpError('x', { statusCode: 404 }), new GoneError('gone')]) {
            expect(other instanceof NotFoundError).toBe(false);
            expect(other instanceof HttpError).toBe(true);
        }

        expect(new Error('plain') instanceof NotFoundError).toBe(false);
        expect((null as unknown as object) instanceof NotFoundError).toBe(false);
    });

    it('lets output be edited, and reformat() rebuilds the payload from the status (payload edits lost)', () => {
        const error = errors.badRequest('bad');
        error.output.payload.extra = 'lost';
        error.output.payload.message = 'changed';
        error.output.headers['X-Kept'] = '1';
        error.output.statusCode = 503;
        error.reformat();
        expect(error.output.payload).toStrictEqual({
            statusCode: 503,
            error: 'Service Unavailable',
            message: 'An internal server error occurred'
        });
        expect(error.output.headers).toStrictEqual({ 'X-Kept': '1' });
        expect(error.isServer).toBe(true);
        error.reformat(true);
        expect(error.output.payload.message).toBe('bad');
    });

    it("reformat() gives 'Unknown' as the text of a status without one", () => {
        const error = errors.badRequest();
        error.output.statusCode = 499;
        error.reformat();
        expect(error.output.payload).toStrictEqual({ statusCode: 499, error: 'Unknown' });
    });

    it('takes a status text from Node for a status the table does not list', () => {
        expect(new HttpError('x', { statusCode: 426 }).output.payload.error).toBe('Upgrade Required');
    });
});

describe('new HttpError(messageOrError, {statusCode, data, decorate, ctor})', () => {
    it('defaults to 500 with data null and typeof HttpError', () => {
        const error = new HttpError('oops');
        expect(error.output.statusCode).toBe(500);
        expect(error.data).toBeNull();
        expect(error.typeof).toBe(HttpError);
        expect(error.message).toBe('oops');
        expect(error.stack?.split('\n')[1]).toContain('http-error.test.ts');
    });

    it('takes no message, or null, as an empty message', () => {
        expect(new HttpError(undefined, { statusCode: 400 }).output.payload).toStrictEqual({
            statusCode: 400,
            error: 'Bad Request'
        });
        expect(new HttpError(null, { statusCode: 400 }).message).toBe('');
    });

    it('applies statusCode, data and decorate', () => {
        const data = { id: 1 };
        const error = new HttpError('x', { statusCode: 409, data, decorate: { code: 'E_DUP' } });
        expect(error.output.payload).toStrictEqual({ statusCode: 409, error: 'Conflict', message: 'x' });
        expect(error.data).toBe(data);
        expect((error as unknown as { code: string }).code).toBe('E_DUP');
        expect(error.isServer).toBe(false);
    });

    it('crops the stack at ctor and records it as typeof', () => {
        function myFactory() {
            return new HttpError('x', { statusCode: 400, ctor: myFactory });
        }
        function caller() {
            return myFactory();
        }
        const error = caller();
        expect(error.typeof).toBe(myFactory);
        expect(error.stack?.split('\n')[1]).toMatch(/at caller /);
    });

    it('decorates an Error given as message in place, as toHttpError does, and accepts its options', () => {
        const cause = new RangeError('too big');
        const error = new HttpError(cause, { statusCode: 413, message: 'upload', data: 'd', decorate: { a: 1 } });
        expect(error).toBe(cause);
        expect(Object.getPrototypeOf(error)).toBe(RangeError.prototype);
        expect(error).toBeInstanceOf(HttpError);
        expect(error.message).toBe('upload: too big');
        expect(error.output.payload).toStrictEqual({
            statusCode: 413,
            error: 'Request Entity Too Large',
            message: 'upload: too big'
        });
        expect(error.data).toBe('d');
        expect(error.typeof).toBe(HttpError);
        expect(new HttpError(new Error('e')).output.statusCode).toBe(500);
    });

    it('honours override: false when the Error given is already an HttpError', () => {
        const original = errors.notFound('gone');
        const error = new HttpError(original, { statusCode: 410, message: 'x', override: false });
        expect(error.output.statusCode).toBe(404);
        expect(error.message).toBe('gone');
    });

    it.each([
        [123, 'number 123'],
        [{}, 'an object (Object)'],
        [['a'], 'an array'],
        [true, 'boolean true']
    ])('refuses %j as message with a TypeError naming it', (value, description) => {
        expect(() => new HttpError(value as unknown as string)).toThrow(
            new TypeError(`HttpError message must be a string or an Error, got ${description}`)
        );
    });

    it.each([
        [302, 'number 302'],
        [600, 'number 600'],
        [399, 'number 399'],
        ['abc', 'string "abc"'],
        ['404', 'string "404"'],
        [404.5, 'number 404.5'],
        [Number.NaN, 'number NaN']
    ])('refuses statusCode %j with a RangeError naming the value', (statusCode, description) => {
        expect(() => new HttpError('x', { statusCode: statusCode as number })).toThrow(
            new RangeError(`HttpError statusCode must be an integer from 400 to 599, got ${description}`)
        );
    });

    it('accepts the bounds 400 and 599', () => {
        expect(new HttpError('x', { statusCode: 400 }).isServer).toBe(false);
        expect(new HttpError('x', { statusCode: 599 }).isServer).toBe(true);
    });
});

describe('toHttpError(err, {statusCode, message, decorate, override})', () => {
    it('decorates a plain Error in place with status 500 by default', () => {
        const err = new Error('failed');
        const error = toHttpError(err);
        expect(error).toBe(err);
        // The key order of @hapi/boom's decorated errors.
        expect(Object.keys(error)).toStrictEqual(['isHttpError', 'isServer', 'data', 'output']);
        expect(error.data).toBeNull();
        expect(error.isServer).toBe(true);
        expect(error.typeof).toBe(toHttpError);
        expect(error.output.payload).toStrictEqual({
            statusCode: 500,
            error: 'Internal Server Error',
            message: 'An internal server error occurred'
        });
        expect(error.message).toBe('failed');
    });

    it('keeps the stack of the original error', () => {
        const err = new Error('x');
        const stack = err.stack;
        expect(toHttpError(err, { statusCode: 400 }).stack).toBe(stack);
    });

    it('prefixes the message to the error’s own, or uses it when the error has none', () => {
        expect(toHttpError(new Error('inner'), { statusCode: 400, message: 'outer' }).message).toBe('outer: inner');
        const error = toHttpError(new Error(), { statusCode: 400, message: 'only' });
        expect(error.message).toBe('only');
        expect(error.output.payload.message).toBe('only');
    });

    it('adds no message by default', () => {
        expect(toHttpError(new Error(), { statusCode: 400 }).output.payload).toStrictEqual({
            statusCode: 400,
            error: 'Bad Request'
        });
    });

    it('sets data and decorate', () => {
        const error = toHttpError(new Error('x'), { statusCode: 422, data: [1], decorate: { field: 'name' } });
        expect(error.data).toStrictEqual([1]);
        expect((error as unknown as { field: string }).field).toBe('name');
    });

    it('keeps data the error already has', () => {
        const err = Object.assign(new Error('x'), { data: 'mine' });
        expect(toHttpError(err).data).toBe('mine');
    });

    it('returns an HttpError unchanged when neither statusCode nor message is given', () => {
        const error = errors.methodNotAllowed('no', null, 'GET');
        const before = error.output;
        expect(toHttpError(error)).toBe(error);
        expect(error.output).toBe(before);
        expect(error.typeof).toBe(errors.methodNotAllowed);
    });

    it('applies statusCode and message to an HttpError by default (override: true)', () => {
        const error = toHttpError(errors.notFound('gone'), { statusCode: 410, message: 'moved' });
        expect(error.output.payload).toStrictEqual({ statusCode: 410, error: 'Gone', message: 'moved: gone' });
        expect(error.typeof).toBe(errors.notFound);
        const explicit = toHttpError(errors.notFound('gone'), { statusCode: 500, override: true });
        expect(explicit.output.statusCode).toBe(500);
        expect(explicit.isServer).toBe(true);
    });

    it('keeps the headers of an HttpError whose status stays, and drops them when it changes', () => {
        const kept = toHttpError(errors.methodNotAllowed('no', null, ['GET']), { message: 'PUT' });
        expect(kept.output.headers).toStrictEqual({ Allow: 'GET' });
        expect(kept.output.payload.message).toBe('PUT: no');
        const dropped = toHttpError(errors.methodNotAllowed('no', null, ['GET']), { statusCode: 400 });
        expect(dropped.output.headers).toStrictEqual({});
    });

    it('ignores statusCode and message with override: false on an HttpError, yet applies data and decorate', () => {
        const error = toHttpError(errors.notFound('gone'), {
            statusCode: 500,
            message: 'x',
            override: false,
            data: 'd',
            decorate: { tag: 1 }
        });
        expect(error.output.statusCode).toBe(404);
        expect(error.message).toBe('gone');
        expect(error.data).toBe('d');
        expect((error as unknown as { tag: number }).tag).toBe(1);
    });

    it('applies statusCode to a plain Error even with override: false', () => {
        expect(toHttpError(new Error('x'), { statusCode: 403, override: false }).output.statusCode).toBe(403);
    });

    it.each([
        [null, 'null'],
        [undefined, 'undefined'],
        ['message', 'string "message"'],
        [{ message: 'fake' }, 'an object (Object)'],
        [Object.create(null), 'an object (no prototype)'],
        [Symbol('s'), 'symbol']
    ])('rejects the non-Error %s with a clear TypeError', (value, description) => {
        expect(() => toHttpError(value as unknown as Error)).toThrow(
            new TypeError(`toHttpError() expects an Error instance, got ${description}`)
        );
    });

    it('refuses a statusCode outside 400–599 on a plain Error and on an HttpError', () => {
        expect(() => toHttpError(new Error('x'), { statusCode: 302 })).toThrow(/got number 302/);
        expect(() => toHttpError(errors.notFound(), { statusCode: 600 })).toThrow(RangeError);
    });

    it('refuses a message option that is not a string', () => {
        expect(() => toHttpError(new Error('x'), { message: 42 as unknown as string })).toThrow(
            'toHttpError() option message must be a string, got number 42'
        );
    });

    it('refuses to prefix a read-only message with a clear error', () => {
        class Frozen extends Error {
            override get message() {
                return 'fixed';
            }
        }
        expect(() => toHttpError(new Frozen(), { message: 'p' })).toThrow(
            'Cannot prefix the message of Error: its message property is read-only'
        );
        const err = new Error('own');
        Object.defineProperty(err, 'message', { value: 'own', writable: false });
        expect(() => toHttpError(err, { message: 'p' })).toThrow(TypeError);
    });

    it("decorates hapi's own error objects too, replacing reformat with this library's", () => {
        const boom = Boom.notFound('hapi');
        const error = toHttpError(boom, { statusCode: 500 });
        expect(error.isHttpError).toBe(true);
        expect(error.output.payload).toStrictEqual({
            statusCode: 500,
            error: 'Internal Server Error',
            message: 'An internal server error occurred'
        });
    });
});

describe('isHttpError(err, statusCode?)', () => {
    it('is true for our errors and checks the status when given', () => {
        const error = errors.notFound();
        expect(isHttpError(error)).toBe(true);
        expect(isHttpError(error, 404)).toBe(true);
        expect(isHttpError(error, 500)).toBe(false);
    });

    it("is true for hapi's own Boom errors, with and without a status", () => {
        expect(isHttpError(Boom.forbidden())).toBe(true);
        expect(isHttpError(Boom.forbidden(), 403)).toBe(true);
        expect(isHttpError(Boom.forbidden(), 404)).toBe(false);
        expect(Boom.forbidden()).toBeInstanceOf(HttpError);
    });

    it('is false for plain errors and for non-Errors', () => {
        for (const value of [new Error('x'), null, undefined, 404, 'error', [], () => 1]) {
            expect(isHttpError(value)).toBe(false);
            expect(value instanceof HttpError).toBe(false);
        }
    });

    it('is false for plain objects that fake the flags', () => {
        const output = { statusCode: 404, headers: {}, payload: {} };
        expect(isHttpError({ isHttpError: true, output })).toBe(false);
        expect(isHttpError({ isBoom: true, output }, 404)).toBe(false);
        expect(isHttpError(Object.create(Error.prototype))).toBe(false);
    });

    it('is false for an Error with a flag but no output', () => {
        expect(isHttpError(Object.assign(new Error('x'), { isHttpError: true }))).toBe(false);
        expect(isHttpError(Object.assign(new Error('x'), { isBoom: true, output: null }))).toBe(false);
    });

    it('agrees with instanceof HttpError', () => {
        for (const value of [errors.teapot(), Boom.teapot(), new Error(), {}]) {
            expect(value instanceof HttpError).toBe(isHttpError(value));
        }
    });
});
