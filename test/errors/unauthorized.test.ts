import { describe, expect, it } from 'vitest';
import { errors } from '../../src/index.js';

const header = (error: errors.HttpError<unknown>) => error.output.headers['WWW-Authenticate'];

describe('unauthorized(message, scheme, attributes)', () => {
    describe('rule 1: without scheme and attributes', () => {
        it('has the payload {statusCode: 401, error, message} and no headers', () => {
            const error = errors.unauthorized('bad token');
            expect(error.output.payload).toStrictEqual({
                statusCode: 401,
                error: 'Unauthorized',
                message: 'bad token'
            });
            expect(error.output.headers).toStrictEqual({});
            expect(error.isMissing).toBeUndefined();
            expect(error.typeof).toBe(errors.unauthorized);
            expect(error.stack?.split('\n')[1]).toContain('unauthorized.test.ts');
        });

        it('takes no message at all', () => {
            const error = errors.unauthorized();
            expect(error.output.payload).toStrictEqual({ statusCode: 401, error: 'Unauthorized' });
            expect(error.output.headers).toStrictEqual({});
        });

        it('treats an empty scheme list and empty string attributes as unset', () => {
            expect(errors.unauthorized('m', [], '').output.headers).toStrictEqual({});
        });
    });

    describe('rule 2: scheme string and attributes object', () => {
        it('sends key="value" pairs, then error="message", and copies them to payload.attributes', () => {
            const error = errors.unauthorized('expired', 'Bearer', { realm: 'api', scope: 'read' });
            expect(header(error)).toBe('Bearer realm="api", scope="read", error="expired"');
            expect(error.output.payload).toStrictEqual({
                statusCode: 401,
                error: 'Unauthorized',
                message: 'expired',
                attributes: { realm: 'api', scope: 'read', error: 'expired' }
            });
            expect(error.isMissing).toBeUndefined();
        });

        it('turns null and undefined values into an empty string and keeps other values', () => {
            const error = errors.unauthorized('m', 'Custom', { a: null, b: undefined, n: 5, t: true });
            expect(header(error)).toBe('Custom a="", b="", n="5", t="true", error="m"');
            expect(error.output.payload.attributes).toStrictEqual({ a: '', b: '', n: 5, t: true, error: 'm' });
        });

        it('escapes " and \\ inside quoted values (message included)', () => {
            const error = errors.unauthorized('say "no" \\ now', 'Basic', { realm: 'the "best" \\ realm' });
            expect(header(error)).toBe('Basic realm="the \\"best\\" \\\\ realm", error="say \\"no\\" \\\\ now"');
            expect(error.output.payload.attributes).toStrictEqual({
                realm: 'the "best" \\ realm',
                error: 'say "no" \\ now'
            });
        });

        it('allows a tab and Latin-1 characters in a value', () => {
            expect(header(errors.unauthorized(null, 'Basic', { realm: 'caf\u00e9\there' }))).toBe(
                'Basic realm="caf\u00e9\there"'
            );
        });

        it.each([
            ['a line feed', 'a\nb', 'U+000A'],
            ['a carriage return', 'a\rb', 'U+000D'],
            ['a NUL', 'a\u0000b', 'U+0000'],
            ['DEL', 'a\u007fb', 'U+007F']
        ])('refuses %s in a value with a clear error', (_what, value, code) => {
            expect(() => errors.unauthorized(null, 'Basic', { realm: value })).toThrow(
                new TypeError(
                    `unauthorized(): attribute realm contains a control character (${code}) that cannot go in a header`
                )
            );
        });

        it('refuses a control character in the message and a character beyond U+00FF', () => {
            expect(() => errors.unauthorized('line\r\nX-Injected: 1', 'Basic', {})).toThrow(
                /message contains a control character \(U\+000D\)/
            );
            expect(() => errors.unauthorized(null, 'Basic', { realm: '\u65e5' })).toThrow(
                /attribute realm contains a character beyond U\+00FF \(U\+65E5\)/
            );
        });

        it('refuses an attribute name that is not a header token', () => {
            expect(() => errors.unauthorized(null, 'Basic', { 'bad name': 'x' })).toThrow(
                'unauthorized(): attribute name "bad name" is not a valid header token'
            );
        });

        it('refuses a control character in the scheme', () => {
            expect(() => errors.unauthorized(null, 'Basic\n', {})).toThrow(/scheme contains a control character/);
        });

        it('sends the message as the only pair when the scheme has no attributes', () => {
            const error = errors.unauthorized('invalid', 'Bearer');
            expect(header(error)).toBe('Bearer error="invalid"');
            expect(error.output.payload.attributes).toStrictEqual({ error: 'invalid' });
            expect(error.isMissing).toBeUndefined();
        });
    });

    describe('rule 3: scheme string and attributes string', () => {
        it('sends the scheme, a space and the string as it is; payload.attributes is the string', () => {
            const error = errors.unauthorized(null, 'Negotiate', 'YIIBhwYGKwYBBQUCoIIB');
            expect(header(error)).toBe('Negotiate YIIBhwYGKwYBBQUCoIIB');
            expect(error.output.payload).toStrictEqual({
                statusCode: 401,
                error: 'Unauthorized',
                attributes: 'YIIBhwYGKwYBBQUCoIIB'
            });
        });

        it('does not escape a pre-formatted string', () => {
            expect(header(errors.unauthorized(undefined, 'Basic', 'realm="x"'))).toBe('Basic realm="x"');
        });

        it('refuses a message together with string attributes', () => {
            expect(() => errors.unauthorized('bad', 'Negotiate', 'abc')).toThrow(
                'unauthorized(): a message cannot be combined with string attributes (rule 3)'
            );
        });

        it('refuses a control character in the string', () => {
            expect(() => errors.unauthorized(null, 'Negotiate', 'a\nb')).toThrow(
                /attributes contains a control character/
            );
        });
    });

    describe('rule 4: attributes without a message', () => {
        it('leaves out the error pair and sets isMissing (enumerable, after output)', () => {
            const error = errors.unauthorized(null, 'Basic', { realm: 'site' });
            expect(header(error)).toBe('Basic realm="site"');
            expect(error.output.payload).toStrictEqual({
                statusCode: 401,
                error: 'Unauthorized',
                attributes: { realm: 'site' }
            });
            expect(error.isMissing).toBe(true);
            expect(Object.keys(error)).toStrictEqual(['data', 'isHttpError', 'isServer', 'output', 'isMissing']);
        });

        it('sets isMissing for string attributes and for an empty attributes object', () => {
            expect(errors.unauthorized(null, 'Negotiate', 'abc').isMissing).toBe(true);
            expect(errors.unauthorized(undefined, 'Basic', {}).isMissing).toBe(true);
        });

        it('sets isMissing for a bare scheme without a message, as hapi auth strategies expect', () => {
            const error = errors.unauthorized(null, 'Basic');
            expect(header(error)).toBe('Basic');
            expect(error.isMissing).toBe(true);
            expect(error.output.payload).toStrictEqual({ statusCode: 401, error: 'Unauthorized' });
        });
    });

    describe('rule 5: scheme or attributes set the WWW-Authenticate header', () => {
        it('sends string attributes without a scheme as the whole challenge', () => {
            const error = errors.unauthorized(null, null, 'Basic realm="x"');
            expect(error.output.headers).toStrictEqual({ 'WWW-Authenticate': 'Basic realm="x"' });
            expect(error.output.payload.attributes).toBe('Basic realm="x"');
            expect(error.isMissing).toBe(true);
        });

        it('refuses an attributes object without a scheme, which cannot form a challenge', () => {
            expect(() => errors.unauthorized('m', undefined, { realm: 'x' })).toThrow(
                'unauthorized(): an attributes object needs a scheme to form the WWW-Authenticate header'
            );
        });

        it("joins a list of challenges with ', ' (the scheme array form)", () => {
            const error = errors.unauthorized('who are you', ['Basic realm="a"', 'Bearer']);
            expect(error.output.headers).toStrictEqual({ 'WWW-Authenticate': 'Basic realm="a", Bearer' });
            expect(error.output.payload).toStrictEqual({
                statusCode: 401,
                error: 'Unauthorized',
                message: 'who are you'
            });
            expect(error.isMissing).toBeUndefined();
            // A list of whole challenges is hapi's answer once every strategy missed, not a miss itself.
            expect(errors.unauthorized(null, ['Bearer']).isMissing).toBeUndefined();
        });

        it('refuses attributes with a list of challenges and a control character in an entry', () => {
            expect(() => errors.unauthorized(null, ['Basic'], { realm: 'x' })).toThrow(
                'unauthorized(): attributes cannot be combined with a list of challenges'
            );
            expect(() => errors.unauthorized(null, ['Basic', 'Bearer\r\n'])).toThrow(/scheme\[1\] contains a control/);
            expect(() => errors.unauthorized(null, [42 as unknown as string])).toThrow(
                'unauthorized(): scheme[0] must be a string'
            );
        });
    });

    describe('reformat() keeps the 401 attributes', () => {
        it('rebuilds payload.attributes after the payload was replaced', () => {
            const error = errors.unauthorized('m', 'Bearer', { realm: 'r' });
            error.output.payload = { statusCode: 0, error: 'edited' };
            error.reformat();
            expect(error.output.payload).toStrictEqual({
                statusCode: 401,
                error: 'Unauthorized',
                message: 'm',
                attributes: { realm: 'r', error: 'm' }
            });
        });

        it('drops the attributes and isMissing when toHttpError() changes the status', () => {
            const error = errors.toHttpError(errors.unauthorized(null, 'Basic', { realm: 'r' }), { statusCode: 403 });
            expect(error.output.payload).toStrictEqual({ statusCode: 403, error: 'Forbidden' });
            expect(error.output.headers).toStrictEqual({});
            expect(error.isMissing).toBeUndefined();
        });
    });

    describe('an Error given as the message', () => {
        it('leaves an Error given as the message untouched when its challenge is refused', () => {
            const failure = new Error('line\r\nbreak');
            expect(() => errors.unauthorized(failure, 'Bearer', { realm: 'api' })).toThrow(
                /message contains a control character/
            );
            expect(errors.isHttpError(failure)).toBe(false);
            expect(Object.keys(failure)).toStrictEqual([]);
        });

        it('decorates an Error given as the message with the challenge and its attributes', () => {
            const failure = new Error('expired');
            const error = errors.unauthorized(failure, 'Bearer', { realm: 'api' });
            expect(error).toBe(failure);
            expect(header(error)).toBe('Bearer realm="api", error="expired"');
            expect(error.output.payload.attributes).toStrictEqual({ realm: 'api', error: 'expired' });
            expect(error.typeof).toBe(errors.unauthorized);
        });
    });
});
