import { describe, expectTypeOf, it } from 'vitest';
import { errors } from '../../src/index.js';

// These assertions are checked by `tsc --noEmit` (the test directory is part of tsconfig.json).
interface MyData {
    id: number;
    tags: string[];
}

describe('the TypeScript types of the errors API', () => {
    it('types data from the factory type argument', () => {
        const data: MyData = { id: 1, tags: [] };
        expectTypeOf(errors.notFound<MyData>('x', data).data).toEqualTypeOf<MyData>();
        expectTypeOf(errors.badGateway('x', data).data).toEqualTypeOf<MyData>();
        expectTypeOf(errors.methodNotAllowed<MyData>('x', data, 'GET').data).toEqualTypeOf<MyData>();
        expectTypeOf(errors.internal('x', data, 503).data).toEqualTypeOf<MyData>();
        expectTypeOf(new errors.HttpError<MyData>('x', { data }).data).toEqualTypeOf<MyData>();
    });

    it('types data as null when none is given', () => {
        expectTypeOf(errors.badRequest().data).toEqualTypeOf<null>();
    });

    it('narrows with the isHttpError type guard', () => {
        const value: unknown = errors.forbidden();
        if (errors.isHttpError(value)) {
            expectTypeOf(value).toEqualTypeOf<errors.HttpError<unknown>>();
            expectTypeOf(value.output.statusCode).toEqualTypeOf<number>();
            expectTypeOf(value.output.payload.error).toEqualTypeOf<string>();
        }
        const withData: unknown = errors.notFound<MyData>('x', { id: 1, tags: [] });
        if (errors.isHttpError<MyData>(withData, 404)) {
            expectTypeOf(withData.data).toEqualTypeOf<MyData>();
        }
        expectTypeOf(errors.isHttpError).guards.toEqualTypeOf<errors.HttpError<unknown>>();
    });

    it('types toHttpError and the factories', () => {
        expectTypeOf(errors.toHttpError(new Error('x'), { data: 'd' })).toEqualTypeOf<errors.HttpError<string>>();
        expectTypeOf(errors.notFound).toEqualTypeOf<errors.HttpErrorFactory>();
        expectTypeOf(errors.unauthorized).parameter(1).toEqualTypeOf<string | readonly string[] | null | undefined>();
    });
});
