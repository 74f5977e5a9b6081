import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
    Client,
    type ClientEmitter,
    type ClientWithEvents,
    client,
    type HopRequest,
    type HopResponse,
    type Http2Request,
    type Http2StreamFailure,
    isHttp2Request,
    isProxyRefusal,
    isReadFailure,
    isRedirectFailure,
    isRequestFailure,
    isResponseError,
    type RedirectHop,
    type TimeoutPhase
} from '../../../src/client/index.js';
import type { ProblemDetails } from '../../../src/errors/index.js';
import { errors } from '../../../src/index.js';

/*
 * The typed uses of the client as the README and docs/client.md show them, without a cast: these
 * assertions are checked by `tsc --noEmit` (the test directory is part of tsconfig.json); what the
 * guards find at run time is test/client/contract/failure-data.test.ts, the HTTP/2 request's members
 * test/client/wire/http2/surface.test.ts.
 */

interface User {
    name: string;
}

describe('the types of a client made with events: true', () => {
    it('has events, and so has every client derived from it unless events: false turns them off', () => {
        const api = client.defaults({ events: true, baseUrl: 'https://api.example.com/' });
        expectTypeOf(api).toEqualTypeOf<ClientWithEvents>();
        expectTypeOf(api.events).toEqualTypeOf<ClientEmitter>();

        const derived = api.defaults({ timeout: 1_000 }).defaults({ headers: { 'x-a': '1' } });
        expectTypeOf(derived.events).toEqualTypeOf<ClientEmitter>();
        expectTypeOf(api.defaults({ events: true }).events).toEqualTypeOf<ClientEmitter>();
        expectTypeOf(api.defaults({ events: null }).events).toEqualTypeOf<ClientEmitter>();
        expectTypeOf(new Client().defaults({ events: true }).events).toEqualTypeOf<ClientEmitter>();

        // What the types say is what the clients have.
        expect(derived.events).toBe(api.events);
        expect(api.defaults({ events: null }).events).toBe(api.events);
        const off = api.defaults({ events: false });
        expectTypeOf(off.events).toEqualTypeOf<ClientEmitter | undefined>();
        expect(off.events).toBeUndefined();
    });

    it('a client without events, or whose events option is any boolean, may have none', () => {
        expectTypeOf(client.events).toEqualTypeOf<ClientEmitter | undefined>();
        expectTypeOf(client.defaults({ baseUrl: 'https://api.example.com/' }).events).toEqualTypeOf<
            ClientEmitter | undefined
        >();
        const flag = process.env.TRACEWIRE_EVENTS === '1';
        expectTypeOf(client.defaults({ events: flag }).events).toEqualTypeOf<ClientEmitter | undefined>();
        const traced = client.defaults({ events: true });
        expectTypeOf(traced.defaults({ events: flag }).events).toEqualTypeOf<ClientEmitter | undefined>();
        expect(traced.defaults({ events: false }).events).toBeUndefined();
    });

    it('types the listeners of its events: the request, the error and the details', () => {
        const api = client.defaults({ events: true });
        api.events.on('preRequest', (uri, options) => {
            expectTypeOf(uri.headers).toEqualTypeOf<Record<string, string | number | readonly string[]>>();
            expectTypeOf(options.headers).toEqualTypeOf<Record<string, string | number | readonly string[]>>();
        });
        api.events.on('request', (req) => expectTypeOf(req).toEqualTypeOf<HopRequest>());
        api.events.on('response', (err, details) => {
            expectTypeOf(err).toEqualTypeOf<errors.HttpError | undefined>();
            expectTypeOf(details.req).toEqualTypeOf<HopRequest | undefined>();
        });
        expect(api.events.listenerCount('request')).toBe(1);
        api.events.removeAllListeners();
    });
});

describe('the types of isHttp2Request', () => {
    it("narrows the request event's req to the HTTP/2 request, and leaves a ClientRequest otherwise", () => {
        const api = client.defaults({ events: true, http2: true });
        api.events.on('request', (req) => {
            if (isHttp2Request(req)) {
                expectTypeOf(req).toExtend<Http2Request>();
                expectTypeOf(req.stream).toEqualTypeOf<ClientHttp2Stream | undefined>();
                expectTypeOf(req.socket).toEqualTypeOf<Socket | null>();
                expectTypeOf(req.reusedSocket).toEqualTypeOf<boolean>();
                expectTypeOf(req.closed).toEqualTypeOf<boolean>();
                expectTypeOf(req.getHeader(':path')).toEqualTypeOf<string | number | string[] | undefined>();
            } else {
                expectTypeOf(req).toEqualTypeOf<ClientRequest>();
            }
        });
        api.events.removeAllListeners();
    });

    it('narrows details.req and promise.req, which may be undefined, the same way', () => {
        const api = client.defaults({ events: true, http2: true });
        api.events.on('response', (_err, details) => {
            if (isHttp2Request(details.req)) {
                expectTypeOf(details.req).toExtend<Http2Request>();
                expectTypeOf(details.req.stream).toEqualTypeOf<ClientHttp2Stream | undefined>();
            } else {
                expectTypeOf(details.req).toEqualTypeOf<ClientRequest | undefined>();
            }
        });
        api.events.removeAllListeners();

        const narrow = (promise: ReturnType<Client['request']>) => {
            if (isHttp2Request(promise.req)) {
                expectTypeOf(promise.req).toExtend<Http2Request>();
                expectTypeOf(promise.req.stream).toEqualTypeOf<ClientHttp2Stream | undefined>();
            } else {
                expectTypeOf(promise.req).toEqualTypeOf<ClientRequest | undefined>();
            }
        };
        expectTypeOf(narrow).toBeFunction();
    });
});

describe('the types of the data of a failure', () => {
    it('isRequestFailure: code, phase, http2, attempts and res, as the docs name them', () => {
        const err: unknown = new Error('x');
        if (isRequestFailure(err)) {
            expectTypeOf(err).toExtend<errors.HttpError>();
            expectTypeOf(err.data.code).toEqualTypeOf<string | undefined>();
            expectTypeOf(err.data.phase).toEqualTypeOf<TimeoutPhase | undefined>();
            expectTypeOf(err.data.attempts).toEqualTypeOf<number | undefined>();
            expectTypeOf(err.data.http2).toEqualTypeOf<Http2StreamFailure | undefined>();
            expectTypeOf(err.data.res).toEqualTypeOf<HopResponse | undefined>();
            expectTypeOf(err.data.message).toEqualTypeOf<string>();
            const session = err.data.http2?.session;
            if (session?.event === 'goaway') {
                expectTypeOf(session.errorCode).toEqualTypeOf<number>();
                expectTypeOf(session.lastStreamId).toEqualTypeOf<number>();
            } else if (session !== undefined) {
                expectTypeOf(session.pingTimeout).toEqualTypeOf<number>();
            }
        }
    });

    it("isResponseError: a helper's 4xx/5xx response, its payload typed as the caller says", () => {
        const err: unknown = new Error('x');
        if (isResponseError<User>(err)) {
            expectTypeOf(err.data.isResponseError).toEqualTypeOf<true>();
            expectTypeOf(err.data.payload).toEqualTypeOf<User>();
            expectTypeOf(err.data.headers).toEqualTypeOf<IncomingHttpHeaders>();
            expectTypeOf(err.data.res).toEqualTypeOf<HopResponse>();
            expectTypeOf(err.data.problem).toEqualTypeOf<ProblemDetails | undefined>();
        }

        if (isResponseError(err)) {
            expectTypeOf(err.data.payload).toEqualTypeOf<unknown>();
        }
    });

    it('isReadFailure, isProxyRefusal, isRedirectFailure: the other shapes of data', () => {
        const err: unknown = new Error('x');
        if (isReadFailure(err)) {
            expectTypeOf(err.data.res).toEqualTypeOf<HopResponse | undefined>();
            expectTypeOf(err.data.payload).toEqualTypeOf<Buffer | undefined>();
        }

        if (isProxyRefusal(err)) {
            expectTypeOf(err.data.statusCode).toEqualTypeOf<number>();
            expectTypeOf(err.data.headers).toEqualTypeOf<IncomingHttpHeaders>();
        }

        if (isRedirectFailure(err)) {
            expectTypeOf(err.data[0]).toEqualTypeOf<RedirectHop | undefined>();
            expectTypeOf(err.data.attempts).toEqualTypeOf<number | undefined>();
        }
    });

    it('leaves errors.isHttpError as it was: its Data is the caller to name', () => {
        expectTypeOf(errors.isHttpError).guards.toEqualTypeOf<errors.HttpError<unknown>>();
        const err: unknown = new Error('x');
        if (errors.isHttpError(err)) {
            expectTypeOf(err.data).toEqualTypeOf<unknown>();
        }
    });
});
