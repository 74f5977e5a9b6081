import { describe, expect, it } from 'vitest';
import { errors } from '../../src/index.js';

type Factory = (message?: string, data?: unknown) => errors.HttpError<unknown>;

// README, "Errors": every factory with its status and exact `error` text.
const table: [name: string, factory: Factory, statusCode: number, text: string][] = [
    ['badRequest', errors.badRequest, 400, 'Bad Request'],
    ['unauthorized', errors.unauthorized as Factory, 401, 'Unauthorized'],
    ['paymentRequired', errors.paymentRequired, 402, 'Payment Required'],
    ['forbidden', errors.forbidden, 403, 'Forbidden'],
    ['notFound', errors.notFound, 404, 'Not Found'],
    ['methodNotAllowed', errors.methodNotAllowed, 405, 'Method Not Allowed'],
    ['notAcceptable', errors.notAcceptable, 406, 'Not Acceptable'],
    ['proxyAuthRequired', errors.proxyAuthRequired, 407, 'Proxy Authentication Required'],
    ['clientTimeout', errors.clientTimeout, 408, 'Request Time-out'],
    ['conflict', errors.conflict, 409, 'Conflict'],
    ['resourceGone', errors.resourceGone, 410, 'Gone'],
    ['lengthRequired', errors.lengthRequired, 411, 'Length Required'],
    ['preconditionFailed', errors.preconditionFailed, 412, 'Precondition Failed'],
    ['entityTooLarge', errors.entityTooLarge, 413, 'Request Entity Too Large'],
    ['uriTooLong', errors.uriTooLong, 414, 'Request-URI Too Large'],
    ['unsupportedMediaType', errors.unsupportedMediaType, 415, 'Unsupported Media Type'],
    ['rangeNotSatisfiable', errors.rangeNotSatisfiable, 416, 'Requested Range Not Satisfiable'],
    ['expectationFailed', errors.expectationFailed, 417, 'Expectation Failed'],
    ['teapot', errors.teapot, 418, "I'm a Teapot"],
    ['badData', errors.badData, 422, 'Unprocessable Entity'],
    ['locked', errors.locked, 423, 'Locked'],
    ['failedDependency', errors.failedDependency, 424, 'Failed Dependency'],
    ['tooEarly', errors.tooEarly, 425, 'Too Early'],
    ['preconditionRequired', errors.preconditionRequired, 428, 'Precondition Required'],
    ['tooManyRequests', errors.tooManyRequests, 429, 'Too Many Requests'],
    ['illegal', errors.illegal, 451, 'Unavailable For Legal Reasons'],
    ['badImplementation', errors.badImplementation, 500, 'Internal Server Error'],
    ['notImplemented', errors.notImplemented, 501, 'Not Implemented'],
    ['badGateway', errors.badGateway, 502, 'Bad Gateway'],
    ['serverUnavailable', errors.serverUnavailable, 503, 'Service Unavailable'],
    ['gatewayTimeout', errors.gatewayTimeout, 504, 'Gateway Time-out']
];

const hidden = 'An internal server error occurred';

/** The first stack frame, which must be in this file rather than inside the library. */
function firstFrame(error: Error): string {
    return error.stack?.split('\n')[1] ?? '';
}

describe('every factory has its status and error text', () => {
    it('covers all 31 factories of the table and the errors namespace has each of them', () => {
        expect(table).toHaveLength(31);
        for (const [name, factory] of table) {
            expect((errors as Record<string, unknown>)[name]).toBe(factory);
        }
    });

    describe.each(table)('%s', (_name, factory, statusCode, text) => {
        const isServer = statusCode >= 500;

        it(`is ${statusCode} ${text} with the payload {statusCode, error, message}`, () => {
            const error = factory('boom');
            expect(error.output.statusCode).toBe(statusCode);
            expect(error.output.payload).toStrictEqual({
                statusCode,
                error: text,
                message: isServer ? hidden : 'boom'
            });
            expect(error.message).toBe('boom');
        });

        it('omits message from the payload when none is given', () => {
            const error = factory();
            expect(error.message).toBe('');
            expect(error.output.payload).toStrictEqual(
                isServer ? { statusCode, error: text, message: hidden } : { statusCode, error: text }
            );
        });

        it('has no headers, typeof the factory, and isServer per the status', () => {
            const error = factory('x');
            expect(error.output.headers).toStrictEqual({});
            expect(error.typeof).toBe(factory);
            expect(error.isServer).toBe(isServer);
            expect(error.isHttpError).toBe(true);
            expect(error).toBeInstanceOf(Error);
            expect(error).toBeInstanceOf(errors.HttpError);
            expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
            expect(errors.isHttpError(error, statusCode)).toBe(true);
        });

        it('keeps data, and null when none is given', () => {
            expect(factory('x').data).toBeNull();
            if (factory !== errors.unauthorized) {
                const data = { id: 7 };
                expect(factory('x', data).data).toBe(data);
            }
        });

        it('starts its stack at the caller, not inside the library', () => {
            const frame = firstFrame(factory('x'));
            expect(frame).toContain('factories.test.ts');
            expect(frame).not.toMatch(/src[\\/]errors/);
        });
    });
});

describe('every 5xx hides its message from the end user', () => {
    const serverErrors = table.filter(([, , statusCode]) => statusCode >= 500);

    it.each(serverErrors)('%s shows the fixed text while error.message keeps the message', (_name, factory) => {
        const error = factory('db password is hunter2');
        expect(error.output.payload.message).toBe(hidden);
        expect(error.message).toBe('db password is hunter2');
    });

    it.each(serverErrors)(
        '%s shows the message after reformat(true) and hides it again after reformat(false) and reformat()',
        (_name, factory) => {
            const error = factory('detail');
            error.reformat(true);
            expect(error.output.payload.message).toBe('detail');
            error.reformat(false);
            expect(error.output.payload.message).toBe(hidden);
            error.reformat(true);
            error.reformat();
            expect(error.output.payload.message).toBe(hidden);
        }
    );

    it('internal() with any 5xx statusCode hides the message too', () => {
        const error = errors.internal('secret', null, 507);
        expect(error.output.payload).toStrictEqual({ statusCode: 507, error: 'Insufficient Storage', message: hidden });
    });

    it('reformat(true) on a 5xx without a message shows no message', () => {
        const error = errors.badGateway();
        error.reformat(true);
        expect(error.output.payload).toStrictEqual({ statusCode: 502, error: 'Bad Gateway' });
    });
});

describe('methodNotAllowed sets the Allow header', () => {
    it('takes allow as a string', () => {
        const error = errors.methodNotAllowed('no', { route: '/x' }, 'GET');
        expect(error.output.headers).toStrictEqual({ Allow: 'GET' });
        expect(error.data).toStrictEqual({ route: '/x' });
        expect(error.output.payload).toStrictEqual({ statusCode: 405, error: 'Method Not Allowed', message: 'no' });
    });

    it("joins an array of methods with ', '", () => {
        expect(errors.methodNotAllowed(undefined, undefined, ['GET', 'HEAD', 'POST']).output.headers.Allow).toBe(
            'GET, HEAD, POST'
        );
    });

    it('sets no Allow header without allow', () => {
        expect(errors.methodNotAllowed('no').output.headers).toStrictEqual({});
    });
});

describe('internal(message, data, statusCode = 500)', () => {
    it('defaults to 500 with typeof internal and data', () => {
        const error = errors.internal('broken', { step: 2 });
        expect(error.output.statusCode).toBe(500);
        expect(error.typeof).toBe(errors.internal);
        expect(error.data).toStrictEqual({ step: 2 });
        expect(error.isServer).toBe(true);
        expect(firstFrame(error)).toContain('factories.test.ts');
    });

    it('decorates an Error given as data in place, prefixing the message', () => {
        const cause = new TypeError('x is undefined');
        const error = errors.internal('render failed', cause, 503);
        expect(error).toBe(cause);
        expect(error.message).toBe('render failed: x is undefined');
        expect(error.output.statusCode).toBe(503);
        expect(error.output.payload.message).toBe(hidden);
        expect(error.data).toBeNull();
        expect(error.typeof).toBe(errors.internal);
        expect(Object.getPrototypeOf(error)).toBe(TypeError.prototype);
        expect(error).toBeInstanceOf(errors.HttpError);
    });

    it('decorates an Error given as data without a message, keeping its own message', () => {
        const cause = new Error('disk full');
        expect(errors.internal(null, cause).message).toBe('disk full');
        expect(errors.badImplementation(undefined, new Error('y')).typeof).toBe(errors.badImplementation);
    });

    it('keeps an HttpError given as data as the data of a new error', () => {
        const inner = errors.notFound('gone');
        const error = errors.badGateway('upstream', inner);
        expect(error).not.toBe(inner);
        expect(error.data).toBe(inner);
        expect(inner.output.statusCode).toBe(404);
    });

    it('refuses a statusCode outside 400–599', () => {
        expect(() => errors.internal('x', null, 600)).toThrow(RangeError);
        expect(() => errors.internal('x', null, 600)).toThrow(/600/);
    });
});

describe('a factory given an Error as message decorates it', () => {
    it('turns the Error into that status', () => {
        const cause = new Error('nope');
        const error = errors.forbidden(cause, { who: 'me' });
        expect(error).toBe(cause);
        expect(error.output.payload).toStrictEqual({ statusCode: 403, error: 'Forbidden', message: 'nope' });
        expect(error.data).toStrictEqual({ who: 'me' });
        expect(error.typeof).toBe(errors.forbidden);
    });
});
