import Boom from '@hapi/boom';
import Hapi from '@hapi/hapi';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_DETAILS_PLUGIN } from '../../src/errors/problem-plugin.js';
import {
    ATTR_PROBLEM_TYPE,
    ATTR_ERROR_TYPE as OUR_ERROR_TYPE,
    ATTR_HTTP_RESPONSE_STATUS_CODE as OUR_STATUS_CODE,
    receivedProblemType,
    sentProblemType
} from '../../src/errors/span-attributes.js';
import { client, errors, problemDetails } from '../../src/index.js';
import { refusedUrl, startHttp, type TestServer } from '../client/helpers.js';

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

describe('problem types on spans: the attribute and what the instrumentation reads for it', () => {
    it('names the attribute tracewire.problem.type, which no semantic convention defines or collides with', async () => {
        expect(ATTR_PROBLEM_TYPE).toBe('tracewire.problem.type');
        // Every name the conventions define, the incubating ones included (typed loosely: the union is too large for tsc).
        const stable: Record<string, unknown> = await import('@opentelemetry/semantic-conventions');
        const incubating: Record<string, unknown> = await import('@opentelemetry/semantic-conventions/incubating');
        const names = [...Object.values(stable), ...Object.values(incubating)].filter(
            (value): value is string => typeof value === 'string'
        );
        expect(names.length).toBeGreaterThan(1000);
        expect(names.filter((name) => /problem/i.test(name) || name.startsWith('tracewire.'))).toStrictEqual([]);
    });

    describe('receivedProblemType(err): the type a client-side HttpError carries', () => {
        let server: TestServer;

        beforeAll(async () => {
            server = await startHttp((req, res) => {
                if (req.url === '/typed') {
                    res.writeHead(403, { 'content-type': 'application/problem+json' });
                    res.end('{"type":"https://example.com/probs/out-of-credit","status":403}');
                } else if (req.url === '/untyped') {
                    res.writeHead(404, { 'content-type': 'application/problem+json' }).end('{"title":"Not Found"}');
                } else {
                    res.writeHead(404, { 'content-type': 'application/json' }).end('{"type":"not-a-problem"}');
                }
            });
        });

        afterAll(async () => {
            await server.close();
        });

        const rejection = (path: string, options?: { json: boolean }): Promise<unknown> =>
            client.get(`${server.url}${path}`, options).then(
                () => {
                    throw new Error('expected a rejection');
                },
                (err: unknown) => err
            );

        it('gives the type of the document a rejected response carried, json or not', async () => {
            expect(receivedProblemType(await rejection('/typed'))).toBe('https://example.com/probs/out-of-credit');
            expect(receivedProblemType(await rejection('/typed', { json: true }))).toBe(
                'https://example.com/probs/out-of-credit'
            );
        });

        it('gives about:blank for a document that named no type, as it means (RFC 9457, 3.1.1)', async () => {
            expect(receivedProblemType(await rejection('/untyped'))).toBe('about:blank');
        });

        it('is undefined for a response that was no problem document, and for a network failure', async () => {
            expect(receivedProblemType(await rejection('/plain', { json: true }))).toBeUndefined();
            expect(receivedProblemType(await client.get(refusedUrl).catch((err: unknown) => err))).toBeUndefined();
        });

        it("is undefined for an HttpError that is not a client's response error, and for what is no HttpError", () => {
            const serverSide = errors.badRequest('x', { problem: { type: 'https://example.com/probs/x' } });
            const lookalike = { isResponseError: true, problem: { type: 'https://example.com/probs/x' } };
            for (const value of [serverSide, lookalike, { data: lookalike }, new Error('x'), null, undefined, 'x']) {
                expect(receivedProblemType(value)).toBeUndefined();
            }
        });

        it('never calls an accessor and never throws, whatever the error holds', () => {
            let called = false;
            const getter = errors.badRequest('x');
            Object.defineProperty(getter, 'data', {
                get() {
                    called = true;
                    return { isResponseError: true, problem: { type: 'x' } };
                }
            });
            const trap = errors.badRequest(
                'x',
                new Proxy(
                    {},
                    {
                        getOwnPropertyDescriptor() {
                            throw new Error('hostile');
                        }
                    }
                )
            );
            const problemGetter = errors.badRequest('x', {
                isResponseError: true,
                get problem() {
                    called = true;
                    return { type: 'x' };
                }
            });
            const wrongType = errors.badRequest('x', { isResponseError: true, problem: { type: 42 } });
            for (const value of [getter, trap, problemGetter, wrongType]) {
                expect(receivedProblemType(value)).toBeUndefined();
            }

            expect(called).toBe(false);
        });
    });

    describe('sentProblemType(request): the type the problemDetails plugin sent', () => {
        async function sent(
            options: { mode?: 'always' } | undefined,
            path: string,
            accept?: string
        ): Promise<string | undefined> {
            const server = Hapi.server({ debug: false });
            if (options !== undefined) {
                await server.register({ plugin: problemDetails, options });
            }

            server.route([
                {
                    method: 'GET',
                    path: '/typed',
                    handler: () => errors.conflict('taken', null, { type: 'taken' })
                },
                { method: 'GET', path: '/plain', handler: () => errors.notFound('no') },
                { method: 'GET', path: '/fine', handler: () => 'ok' }
            ]);
            let type: string | undefined = 'unset';
            server.events.on('response', (request) => {
                type = sentProblemType(request);
            });
            await server.inject({ url: path, headers: accept === undefined ? {} : { accept } });
            return type;
        }

        it('gives the type of the document sent, as sent (a relative type as given, without typeBase)', async () => {
            expect(await sent({ mode: 'always' }, '/typed')).toBe('taken');
            expect(await sent({ mode: 'always' }, '/plain')).toBe('about:blank');
            expect(await sent({}, '/plain', 'application/problem+json')).toBe('about:blank');
        });

        it('is undefined when no problem document was sent: the classic payload, a success, no plugin', async () => {
            expect(await sent({}, '/plain')).toBeUndefined();
            expect(await sent({ mode: 'always' }, '/fine')).toBeUndefined();
            expect(await sent(undefined, '/plain', 'application/problem+json')).toBeUndefined();
        });

        it('never calls an accessor and never throws, whatever request.plugins holds', () => {
            let called = false;
            const hostile = [
                null,
                undefined,
                { plugins: {} },
                { plugins: { [PROBLEM_DETAILS_PLUGIN]: { type: 42 } } },
                {
                    plugins: {
                        get [PROBLEM_DETAILS_PLUGIN]() {
                            called = true;
                            return { type: 'x' };
                        }
                    }
                },
                {
                    plugins: new Proxy(
                        {},
                        {
                            getOwnPropertyDescriptor() {
                                throw new Error('hostile');
                            }
                        }
                    )
                }
            ];
            for (const request of hostile) {
                expect(sentProblemType(request)).toBeUndefined();
            }

            expect(called).toBe(false);
            expect(sentProblemType({ plugins: { [PROBLEM_DETAILS_PLUGIN]: { type: 'https://example.com/p' } } })).toBe(
                'https://example.com/p'
            );
        });
    });
});
