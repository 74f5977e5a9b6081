import Boom from '@hapi/boom';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import { describe, expect, it } from 'vitest';
import {
    ATTR_ERROR_TYPE as OUR_ERROR_TYPE,
    ATTR_HTTP_RESPONSE_STATUS_CODE as OUR_STATUS_CODE
} from '../../src/errors/span-attributes.js';
import { errors } from '../../src/index.js';

describe('toSpanAttributes(err): the span attributes of an HttpError', () => {
    it('spells the two attribute names as the OpenTelemetry semantic conventions do', () => {
        expect(OUR_STATUS_CODE).toBe(ATTR_HTTP_RESPONSE_STATUS_CODE);
        expect(OUR_ERROR_TYPE).toBe(ATTR_ERROR_TYPE);
    });

    it('gives the status code and the status as error.type for our errors', () => {
        expect(errors.toSpanAttributes(errors.notFound('x'))).toStrictEqual({
            [ATTR_HTTP_RESPONSE_STATUS_CODE]: 404,
            [ATTR_ERROR_TYPE]: '404'
        });
        expect(errors.toSpanAttributes(errors.internal('x', null, 503))).toStrictEqual({
            'http.response.status_code': 503,
            'error.type': '503'
        });
    });

    it("gives the same for hapi's own errors", () => {
        expect(errors.toSpanAttributes(Boom.tooManyRequests())).toStrictEqual({
            'http.response.status_code': 429,
            'error.type': '429'
        });
    });

    it('follows an edited output.statusCode', () => {
        const error = errors.badRequest();
        error.output.statusCode = 422;
        expect(errors.toSpanAttributes(error)?.[ATTR_ERROR_TYPE]).toBe('422');
    });

    it('is undefined for anything that is not an HttpError', () => {
        for (const value of [
            new Error('x'),
            undefined,
            null,
            { isHttpError: true, output: { statusCode: 400 } },
            'x'
        ]) {
            expect(errors.toSpanAttributes(value)).toBeUndefined();
        }
    });
});
