import Boom from '@hapi/boom';
import Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors } from '../../src/index.js';

const hidden = 'An internal server error occurred';

/** Routes whose handlers throw or return errors of this library. */
function addRoutes(server: Hapi.Server): void {
    server.route([
        {
            method: 'GET',
            path: '/thrown',
            handler: () => {
                throw errors.conflict('taken', { id: 1 });
            }
        },
        { method: 'GET', path: '/returned', handler: () => errors.teapot('short and stout') },
        {
            method: 'GET',
            path: '/auth',
            handler: () => {
                throw errors.unauthorized('expired', 'Bearer', { realm: 'api' });
            }
        },
        { method: 'GET', path: '/allow', handler: () => errors.methodNotAllowed('read only', null, ['GET', 'HEAD']) },
        {
            method: 'GET',
            path: '/server',
            handler: () => {
                throw errors.badGateway('upstream 10.0.0.7 refused');
            }
        },
        {
            method: 'GET',
            path: '/wrapped',
            handler: () => {
                throw errors.internal('query failed', new Error('password=hunter2'));
            }
        },
        {
            method: 'GET',
            path: '/reboomed',
            handler: () => {
                throw Boom.boomify(errors.notFound('x'), { statusCode: 410 });
            }
        },
        {
            method: 'GET',
            path: '/boomified',
            handler: () => {
                throw Boom.boomify(errors.forbidden('no'));
            }
        }
    ]);
}

describe('HttpErrors answered by a real hapi server', () => {
    let server: Hapi.Server;
    const seen: { isHttpError: boolean; is404: boolean; attributes: unknown }[] = [];

    beforeAll(async () => {
        server = Hapi.server({ host: '127.0.0.1', port: 0 });
        addRoutes(server);
        server.ext('onPreResponse', (request, h) => {
            if (request.path === '/nowhere') {
                seen.push({
                    isHttpError: errors.isHttpError(request.response),
                    is404: errors.isHttpError(request.response, 404),
                    attributes: errors.toSpanAttributes(request.response)
                });
            }
            return h.continue;
        });
        await server.start();
    });

    afterAll(async () => {
        await server.stop();
    });

    it('renders a thrown error with its exact status and payload', async () => {
        const res = await server.inject('/thrown');
        expect(res.statusCode).toBe(409);
        expect(JSON.parse(res.payload)).toStrictEqual({ statusCode: 409, error: 'Conflict', message: 'taken' });
        expect(res.headers['content-type']).toMatch(/^application\/json/);
    });

    it('renders a returned error the same way', async () => {
        const res = await server.inject('/returned');
        expect(res.statusCode).toBe(418);
        expect(res.result).toStrictEqual({ statusCode: 418, error: "I'm a Teapot", message: 'short and stout' });
    });

    it('sends the WWW-Authenticate header and payload attributes of a 401', async () => {
        const res = await server.inject('/auth');
        expect(res.statusCode).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="expired"');
        expect(res.result).toStrictEqual({
            statusCode: 401,
            error: 'Unauthorized',
            message: 'expired',
            attributes: { realm: 'api', error: 'expired' }
        });
    });

    it('sends the Allow header of a 405', async () => {
        const res = await server.inject('/allow');
        expect(res.statusCode).toBe(405);
        expect(res.headers.allow).toBe('GET, HEAD');
    });

    it('hides the message of a 5xx, also of a decorated Error', async () => {
        const gateway = await server.inject('/server');
        expect(gateway.statusCode).toBe(502);
        expect(gateway.result).toStrictEqual({ statusCode: 502, error: 'Bad Gateway', message: hidden });
        expect(gateway.payload).not.toContain('10.0.0.7');

        const wrapped = await server.inject('/wrapped');
        expect(wrapped.statusCode).toBe(500);
        expect(wrapped.result).toStrictEqual({ statusCode: 500, error: 'Internal Server Error', message: hidden });
    });

    it("answers isHttpError() true for hapi's own 404 of an unknown route in onPreResponse", async () => {
        const res = await server.inject('/nowhere');
        expect(res.statusCode).toBe(404);
        expect(seen).toStrictEqual([
            {
                isHttpError: true,
                is404: true,
                attributes: { 'http.response.status_code': 404, 'error.type': '404' }
            }
        ]);
    });

    it("keeps working through hapi's own Boom.boomify", async () => {
        const boomified = await server.inject('/boomified');
        expect(boomified.statusCode).toBe(403);
        expect(boomified.result).toStrictEqual({ statusCode: 403, error: 'Forbidden', message: 'no' });

        const reboomed = await server.inject('/reboomed');
        expect(reboomed.statusCode).toBe(410);
        expect(reboomed.result).toMatchObject({ statusCode: 410, error: 'Gone', message: 'x' });
    });

    it('keeps isBoom out of the keys after Boom.boomify re-decorates the error', () => {
        const error = Boom.boomify(errors.notFound('x'), { statusCode: 410 });
        expect(Object.keys(error)).toStrictEqual(['data', 'isHttpError', 'isServer', 'output']);
        expect(errors.isHttpError(error, 410)).toBe(true);
    });

    it('renders errors over a real listening socket', async () => {
        const base = server.info.uri;
        expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

        const auth = await fetch(`${base}/auth`);
        expect(auth.status).toBe(401);
        expect(auth.headers.get('www-authenticate')).toBe('Bearer realm="api", error="expired"');
        expect(await auth.json()).toStrictEqual({
            statusCode: 401,
            error: 'Unauthorized',
            message: 'expired',
            attributes: { realm: 'api', error: 'expired' }
        });

        const allow = await fetch(`${base}/allow`);
        expect(allow.status).toBe(405);
        expect(allow.headers.get('allow')).toBe('GET, HEAD');
        expect(await allow.json()).toStrictEqual({
            statusCode: 405,
            error: 'Method Not Allowed',
            message: 'read only'
        });

        const failure = await fetch(`${base}/server`);
        expect(failure.status).toBe(502);
        expect(await failure.json()).toStrictEqual({ statusCode: 502, error: 'Bad Gateway', message: hidden });
    });
});
