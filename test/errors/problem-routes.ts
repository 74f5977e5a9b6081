import * as Fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Boom from '@hapi/boom';
import Hapi from '@hapi/hapi';
import Joi from 'joi';
import { expect } from 'vitest';
import { errors, staticFiles } from '../../src/index.js';
import { expectValidProblem } from './problem-schema.js';

/** One error instance thrown by every request of its route: answering it must never change it. */
export const sharedError = errors.notFound('shared instance');

/**
 * Routes that fail in every way a hapi application's requests fail: HttpErrors of each kind, a
 * plain Error, boom's errors, hapi's validation (joi) and payload errors, the static plugin's 404
 * and 403. `files` is the directory the static routes serve (`public/hello.txt`, and
 * `secret.txt` beside `public/`).
 */
export function addFailingRoutes(server: Hapi.Server, files: string): void {
    server.validator(Joi);
    const fail = (error: Error) => () => {
        throw error;
    };
    server.route([
        { method: 'GET', path: '/conflict', handler: () => errors.conflict('taken', { id: 7, secret: 'hunter2' }) },
        {
            method: 'GET',
            path: '/typed',
            handler: () =>
                errors.forbidden(
                    'Your current balance is 30, but that costs 50.',
                    { account: 'internal-id-9' },
                    {
                        type: 'out-of-credit',
                        title: 'You do not have enough credit.',
                        extensions: { balance: 30, accounts: ['/account/12345', '/account/67890'] }
                    }
                )
        },
        { method: 'GET', path: '/auth', handler: () => errors.unauthorized('expired', 'Bearer', { realm: 'api' }) },
        { method: 'GET', path: '/allow', handler: () => errors.methodNotAllowed('read only', null, ['GET', 'HEAD']) },
        {
            method: 'GET',
            path: '/retry',
            handler: () => {
                const error = errors.tooManyRequests('slow down', null, { extensions: { limit: 100 } });
                error.output.headers['Retry-After'] = '120';
                error.output.headers.Vary = 'Origin';
                return error;
            }
        },
        {
            method: 'GET',
            path: '/own-headers/{vary}',
            handler: (request) => {
                const error = errors.notAcceptable('not here');
                error.output.headers['Content-Type'] = 'text/plain';
                error.output.headers.Vary = decodeURIComponent((request.params as { vary: string }).vary);
                return error;
            }
        },
        {
            method: 'GET',
            path: '/gateway',
            handler: fail(errors.badGateway('upstream 10.0.0.7 refused', { host: 'db1' }))
        },
        { method: 'GET', path: '/plain', handler: fail(new Error('password=hunter2')) },
        { method: 'GET', path: '/boom-503', handler: fail(Boom.serverUnavailable('db 10.0.0.7 down')) },
        {
            method: 'GET',
            path: '/maintenance',
            handler: () => errors.serverUnavailable('db down', null, { detail: 'Back at 14:00 UTC' })
        },
        { method: 'GET', path: '/shared', handler: () => sharedError },
        {
            method: 'POST',
            path: '/validated',
            options: { validate: { payload: Joi.object({ name: Joi.string().required() }) } },
            handler: () => 'ok'
        },
        {
            method: 'POST',
            path: '/detailed',
            options: {
                validate: {
                    payload: Joi.object({ name: Joi.string().required(), age: Joi.number() }),
                    failAction: (_request, _h, err) => {
                        throw err;
                    }
                }
            },
            handler: () => 'ok'
        },
        { method: 'POST', path: '/small', options: { payload: { maxBytes: 10 } }, handler: () => 'ok' },
        { method: 'GET', path: '/files/{path*}', handler: { directory: { path: join(files, 'public') } } },
        {
            method: 'GET',
            path: '/escape',
            handler: (_request, h) => h.file(join(files, 'secret.txt'), { confine: join(files, 'public') })
        }
    ]);
}

/** A directory for the static routes; remove it with `Fs.rmSync(dir, { recursive: true })`. */
export function createFiles(): string {
    const dir = Fs.mkdtempSync(join(tmpdir(), 'tracewire-problem-'));
    Fs.mkdirSync(join(dir, 'public'));
    Fs.writeFileSync(join(dir, 'public', 'hello.txt'), 'hello');
    Fs.writeFileSync(join(dir, 'secret.txt'), 'outside');
    return dir;
}

/** A server with the static plugin, the failing routes, and the problem-details plugin with `options` when given. */
export async function createProblemServer(files: string, options?: errors.ProblemDetailsOptions) {
    const server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    await server.register(staticFiles);
    if (options !== undefined) {
        await server.register({ plugin: errors.problemDetails, options });
    }

    addFailingRoutes(server, files);
    return server;
}

/** Every request the failing routes answer with an error, by name. */
export const failingRequests: Record<string, Hapi.ServerInjectOptions> = {
    conflict: { url: '/conflict' },
    typed: { url: '/typed' },
    auth: { url: '/auth' },
    allow: { url: '/allow' },
    retry: { url: '/retry' },
    gateway: { url: '/gateway' },
    plain: { url: '/plain' },
    'boom-503': { url: '/boom-503' },
    maintenance: { url: '/maintenance' },
    shared: { url: '/shared' },
    'no-route': { url: '/nowhere/at/all' },
    'validation-default': { method: 'POST', url: '/validated', payload: { age: 3 } },
    'validation-detailed': { method: 'POST', url: '/detailed', payload: { age: 'old' } },
    'invalid-json': {
        method: 'POST',
        url: '/detailed',
        payload: '{bad',
        headers: { 'content-type': 'application/json' }
    },
    'unsupported-type': {
        method: 'POST',
        url: '/detailed',
        payload: 'x',
        headers: { 'content-type': 'application/x-tracewire-unknown' }
    },
    'too-large': { method: 'POST', url: '/small', payload: 'x'.repeat(100) },
    'static-404': { url: '/files/missing.txt' },
    'static-403': { url: '/escape' }
};

/** The problem document of a response, held to RFC 9457's schema and its media type. */
export function problemOf(res: { headers: Record<string, unknown>; payload: string }): Record<string, unknown> {
    expect(res.headers['content-type']).toBe('application/problem+json');
    const document = JSON.parse(res.payload) as Record<string, unknown>;
    expectValidProblem(document);
    return document;
}
