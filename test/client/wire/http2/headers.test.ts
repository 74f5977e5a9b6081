import { describe, expect, it } from 'vitest';
import { destinationOf } from '../../../../src/client/wire/destination.js';
import { errorCodeName } from '../../../../src/client/wire/http2/error-codes.js';
import { requestHeaders, responseFields } from '../../../../src/client/wire/http2/headers.js';

/**
 * The fields of an HTTP/2 exchange made from HTTP/1.1's shape (RFC 9113 8.3), as pure functions:
 * the pseudo-header fields of a request for each kind of destination, a response's fields and raw
 * list without its pseudo-header fields, and the names of the error codes messages give.
 */

describe('HTTP/2 headers: the pseudo-header fields of a request', () => {
    const cases: [string, Record<string, string>][] = [
        ['https://example.test/a?b=1', { ':scheme': 'https', ':authority': 'example.test', ':path': '/a?b=1' }],
        ['http://example.test/', { ':scheme': 'http', ':authority': 'example.test', ':path': '/' }],
        ['https://example.test:8443/', { ':authority': 'example.test:8443' }],
        ['http://example.test:443/', { ':authority': 'example.test:443' }],
        ['https://[::1]/', { ':authority': '[::1]' }],
        ['https://[::1]:8443/x', { ':authority': '[::1]:8443', ':path': '/x' }]
    ];
    for (const [url, expected] of cases) {
        it(`${url}: ${JSON.stringify(expected)}`, () => {
            expect(requestHeaders('GET', destinationOf(new URL(url)), {})).toMatchObject({
                ':method': 'GET',
                ...expected
            });
        });
    }

    it('takes :authority from a host field, which is not sent as one', () => {
        const fields = requestHeaders('PUT', destinationOf(new URL('https://127.0.0.1:1/')), { host: 'named.test' });
        expect(fields[':authority']).toBe('named.test');
        expect(fields.host).toBeUndefined();
    });
});

describe('HTTP/2 headers: a response', () => {
    it('drops the pseudo-header fields from the fields and from the raw list, which keeps repeats and order', () => {
        const { headers, rawHeaders } = responseFields(
            { ':status': '200', a: 'x, y', 'set-cookie': ['1', '2'] } as never,
            [':status', '200', 'a', 'x', 'set-cookie', '1', 'a', 'y', 'set-cookie', '2']
        );
        expect(headers).toEqual({ a: 'x, y', 'set-cookie': ['1', '2'] });
        expect(rawHeaders).toEqual(['a', 'x', 'set-cookie', '1', 'a', 'y', 'set-cookie', '2']);
    });
});

describe('HTTP/2 headers: error code names', () => {
    it('names the codes of RFC 9113 and numbers the others', () => {
        expect(errorCodeName(0)).toBe('NO_ERROR');
        expect(errorCodeName(7)).toBe('REFUSED_STREAM');
        expect(errorCodeName(13)).toBe('HTTP_1_1_REQUIRED');
        expect(errorCodeName(undefined)).toBe('NO_ERROR');
        expect(errorCodeName(0xabc)).toBe('error code 2748');
    });
});
