import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
    CLIENT_CHANNELS,
    client,
    type PreRequestMessage,
    type RequestMessage,
    type ResponseMessage
} from '../../../src/client/index.js';
import type { HttpError } from '../../../src/errors/index.js';
import { MockNetwork } from '../../../src/testing/index.js';
import { refusedUrl, settle } from '../helpers.js';

type Seen =
    | { name: 'preRequest'; message: PreRequestMessage }
    | { name: 'request'; message: RequestMessage }
    | { name: 'response'; message: ResponseMessage };

// The root client's origin is a MockNetwork installed for the process (docs/testing.md): the channels are
// published above the transport seam, for a mocked exchange as for one on the network. /moved redirects to
// /, /slow answers 50 ms late, anything else says hello; the refused connection is the network's own.
const origin = 'http://channels.test';
const mock = new MockNetwork();
mock.origin(origin).get('/moved').reply(302, '', { location: '/' }).persist();
mock.origin(origin).get('/slow').reply(200, 'late').delay(50).persist();
mock.origin(origin)
    .get(() => true)
    .reply(200, 'hello')
    .persist();
mock.allowNetwork(new URL(refusedUrl).origin);
const seen: Seen[] = [];
const listeners = {
    preRequest: (message: unknown) => seen.push({ name: 'preRequest', message: message as PreRequestMessage }),
    request: (message: unknown) => seen.push({ name: 'request', message: message as RequestMessage }),
    response: (message: unknown) => seen.push({ name: 'response', message: message as ResponseMessage })
};

function listen(): void {
    for (const name of ['preRequest', 'request', 'response'] as const) {
        subscribe(CLIENT_CHANNELS[name], listeners[name]);
    }
}

function stopListening(): void {
    for (const name of ['preRequest', 'request', 'response'] as const) {
        unsubscribe(CLIENT_CHANNELS[name], listeners[name]);
    }
}

beforeAll(() => {
    mock.install();
});

afterEach(() => {
    stopListening();
    seen.length = 0;
});

afterAll(() => {
    mock.close();
});

describe('diagnostics channels', () => {
    it('have the documented names', () => {
        expect(CLIENT_CHANNELS).toEqual({
            preRequest: 'tracewire:client:preRequest',
            request: 'tracewire:client:request',
            response: 'tracewire:client:response',
            cacheStoreError: 'tracewire:client:cacheStoreError'
        });
    });

    it('carry every hop of the root client: preRequest { uri, options }, request { req, uri }, response { err, details }', async () => {
        listen();
        const promise = client.request('GET', `${origin}/`, { route: '/' });
        const res = await promise;
        res.resume();
        expect(seen.map((event) => event.name)).toEqual(['preRequest', 'request', 'response']);
        const [pre, request, response] = seen as unknown as [
            { message: PreRequestMessage },
            { message: RequestMessage },
            { message: ResponseMessage }
        ];
        expect(pre.message.uri.href).toBe(`${origin}/`);
        expect(pre.message.uri.method).toBe('GET');
        expect(pre.message.uri.redirectCount).toBe(0);
        expect(pre.message.options.route).toBe('/');
        expect(request.message.req).toBe(promise.req);
        expect(request.message.uri).toBe(pre.message.uri);
        expect(response.message.err).toBeUndefined();
        expect(response.message.details.uri).toBe(pre.message.uri);
        expect(response.message.details.req).toBe(promise.req);
        expect(response.message.details.res).toBe(res);
        expect(typeof response.message.details.start).toBe('number');
    });

    it('carry the same values, in the same order, as the events of an events client', async () => {
        listen();
        const events = client.defaults({ events: true });
        const order: string[] = [];
        const emitted: unknown[] = [];
        events.events!.on('preRequest', (uri, options) => {
            order.push('event preRequest');
            emitted.push(uri, options);
        });
        events.events!.on('request', (req) => {
            order.push('event request');
            emitted.push(req);
        });
        events.events!.on('response', (err, details) => {
            order.push('event response');
            emitted.push(err, details);
        });
        const ordered = (name: string) => () => order.push(`channel ${name}`);
        const channelOrder = { pre: ordered('preRequest'), req: ordered('request'), res: ordered('response') };
        subscribe(CLIENT_CHANNELS.preRequest, channelOrder.pre);
        subscribe(CLIENT_CHANNELS.request, channelOrder.req);
        subscribe(CLIENT_CHANNELS.response, channelOrder.res);
        try {
            await events.get(`${origin}/`);
        } finally {
            unsubscribe(CLIENT_CHANNELS.preRequest, channelOrder.pre);
            unsubscribe(CLIENT_CHANNELS.request, channelOrder.req);
            unsubscribe(CLIENT_CHANNELS.response, channelOrder.res);
        }

        expect(order).toEqual([
            'event preRequest',
            'channel preRequest',
            'event request',
            'channel request',
            'event response',
            'channel response'
        ]);
        const [pre, request, response] = seen as unknown as [
            { message: PreRequestMessage },
            { message: RequestMessage },
            { message: ResponseMessage }
        ];
        expect(emitted).toEqual([
            pre.message.uri,
            pre.message.options,
            request.message.req,
            response.message.err,
            response.message.details
        ]);
        expect(emitted[0]).toBe(pre.message.uri);
        expect(emitted[4]).toBe(response.message.details);
    });

    it('give each redirect hop its own preRequest, request and response', async () => {
        listen();
        await client.get(`${origin}/moved`, { redirects: 1 });
        expect(seen.map((event) => event.name)).toEqual([
            'preRequest',
            'request',
            'response',
            'preRequest',
            'request',
            'response'
        ]);
        const hops = seen.filter((event) => event.name === 'preRequest').map((event) => event.message.uri);
        expect(hops.map((uri) => uri.redirectCount)).toEqual([0, 1]);
        const responses = seen.filter((event) => event.name === 'response');
        expect(responses.map((event) => event.message.details.res?.statusCode)).toEqual([302, 200]);
        expect(responses[1]!.message.details.uri).toBe(hops[1]);
    });

    it('publish exactly one response per hop on failure: a refused connection, a timeout, an abort', async () => {
        listen();
        await expect(client.get(refusedUrl)).rejects.toMatchObject({ output: { statusCode: 502 } });
        await expect(client.get(`${origin}/slow`, { timeout: 1 })).rejects.toMatchObject({
            output: { statusCode: 504 }
        });
        const controller = new AbortController();
        const aborted = client.get(`${origin}/slow`, { signal: controller.signal });
        controller.abort();
        await expect(aborted).rejects.toMatchObject({ output: { statusCode: 500 } });
        await settle();

        const responses = seen.filter((event) => event.name === 'response').map((event) => event.message);
        expect(responses).toHaveLength(3);
        expect(seen.filter((event) => event.name === 'preRequest')).toHaveLength(3);
        expect(responses.map((message) => (message.err?.data as { code?: string } | undefined)?.code)).toEqual([
            'ECONNREFUSED',
            'ETIMEDOUT',
            'ABORT_ERR'
        ]);
        expect(responses.every((message) => message.details.res === undefined)).toBe(true);
    });

    it('let a preRequest subscriber add a header, as an event listener can', async () => {
        const addHeader = (message: unknown) => {
            (message as PreRequestMessage).uri.headers['x-from-channel'] = 'yes';
        };
        subscribe(CLIENT_CHANNELS.preRequest, addHeader);
        try {
            await client.get(`${origin}/`);
        } finally {
            unsubscribe(CLIENT_CHANNELS.preRequest, addHeader);
        }

        expect(mock.requests.at(-1)!.headers['x-from-channel']).toBe('yes');
    });

    it('are published whenever any one of them has a subscriber', async () => {
        subscribe(CLIENT_CHANNELS.response, listeners.response);
        await client.get(`${origin}/`);
        expect(seen.map((event) => event.name)).toEqual(['response']);
    });

    it('leave out a request that began before the first subscriber: never a response without its preRequest', async () => {
        const promise = client.request('GET', `${origin}/slow`);
        listen();
        (await promise).resume();
        await client.get(`${origin}/`);
        expect(seen.map((event) => event.name)).toEqual(['preRequest', 'request', 'response']);
        expect((seen[0]!.message as PreRequestMessage).uri.pathname).toBe('/');
    });

    it('publish nothing without a subscriber', async () => {
        const channels = Object.values(CLIENT_CHANNELS).map((name) => channel(name));
        expect(channels.some((c) => c.hasSubscribers)).toBe(false);
        await client.get(`${origin}/`);
        expect(seen).toHaveLength(0);
    });

    it('still get the preRequest and one response when an event listener throws in preRequest', async () => {
        listen();
        const events = client.defaults({ events: true });
        events.events!.on('preRequest', () => {
            throw new Error('listener broke');
        });
        const error = (await events.get(`${origin}/`).catch((err: unknown) => err)) as HttpError;
        expect(error.message).toBe('Request could not be created: listener broke');
        expect(seen.map((event) => event.name)).toEqual(['preRequest', 'response']);
        expect((seen[1]!.message as ResponseMessage).err).toBe(error);
    });

    it('never let a throwing subscriber break a request: Node reports its error as an uncaughtException', async () => {
        const thrown = new Error('subscriber broke');
        const throwing = () => {
            throw thrown;
        };
        // Vitest fails a run on any uncaughtException: stand in for its handlers while this one is expected.
        const handlers = process.listeners('uncaughtException');
        process.removeAllListeners('uncaughtException');
        const reported: unknown[] = [];
        process.on('uncaughtException', (err) => reported.push(err));
        for (const name of Object.values(CLIENT_CHANNELS)) {
            subscribe(name, throwing);
        }

        try {
            const { res, payload } = await client.get(`${origin}/`);
            expect(res.statusCode).toBe(200);
            expect(String(payload)).toBe('hello');
            await settle();
        } finally {
            for (const name of Object.values(CLIENT_CHANNELS)) {
                unsubscribe(name, throwing);
            }

            process.removeAllListeners('uncaughtException');
            for (const handler of handlers) {
                process.on('uncaughtException', handler);
            }
        }

        expect(reported).toEqual([thrown, thrown, thrown]);
    });
});
