import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import * as http2 from 'node:http2';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
    type CallMessage,
    CLIENT_CHANNELS,
    CLIENT_TRACING_CHANNELS,
    Client,
    type HopMessage,
    type RequestUri
} from '../../../src/client/index.js';
import { refusedUrl, startHttp, type TestServer } from '../helpers.js';
import { expectReleased, timersBefore } from '../wire/http2/released.js';
import { type Http2TestServer, startHttp2 } from '../wire/http2/servers.js';
import { rejection } from '../wire/http2/settling.js';

/**
 * docs/observability.md "Tracing channels": a tracer that is not OpenTelemetry, written from that page
 * alone, follows calls and their hops with `tracewire:client:call` and `tracewire:client:hop`: spans
 * nested as the calls were made, and its span active wherever the call runs its listeners.
 */

interface TestSpan {
    readonly name: string;
    readonly parent: TestSpan | undefined;
    readonly message: CallMessage | HopMessage;
    error?: unknown;
    ended: boolean;
    /** Whether the span was the active one as its message's last event was told. */
    endedActive?: boolean;
}

// The tracer: an AsyncLocalStorage bound to both channels' `start`, a span per message.
function minimalTracer() {
    const active = new AsyncLocalStorage<TestSpan>();
    const spans: TestSpan[] = [];
    const spanOf = new WeakMap<object, TestSpan>();
    const open = (name: string, message: CallMessage | HopMessage): TestSpan => {
        const span: TestSpan = { name, parent: active.getStore(), message, ended: false };
        spans.push(span);
        spanOf.set(message, span);
        return span;
    };
    const call = tracingChannel<TestSpan, CallMessage>(CLIENT_TRACING_CHANNELS.call);
    const hop = tracingChannel<TestSpan, HopMessage>(CLIENT_TRACING_CHANNELS.hop);
    call.start.bindStore(active, (message) => open(`${message.method} ${message.url}`, message));
    hop.start.bindStore(active, (message) => open(`hop ${message.number} ${message.reason}`, message));
    const handlers = {
        start() {},
        end() {},
        asyncStart() {},
        error(message: CallMessage | HopMessage) {
            spanOf.get(message)!.error = message.error;
        },
        asyncEnd(message: CallMessage | HopMessage) {
            spanOf.get(message)!.ended = true;
        }
    };
    // Not part of the tracer: whether each span is the active one at its end.
    const endedActive = (message: CallMessage | HopMessage) => {
        spanOf.get(message)!.endedActive = active.getStore() === spanOf.get(message);
    };
    call.subscribe(handlers);
    hop.subscribe(handlers);
    call.asyncEnd.subscribe(endedActive as (message: unknown) => void);
    hop.asyncEnd.subscribe(endedActive as (message: unknown) => void);
    const stop = () => {
        call.unsubscribe(handlers);
        hop.unsubscribe(handlers);
        call.asyncEnd.unsubscribe(endedActive as (message: unknown) => void);
        hop.asyncEnd.unsubscribe(endedActive as (message: unknown) => void);
        call.start.unbindStore(active);
        hop.start.unbindStore(active);
    };
    return { active, spans, stop };
}

let tracer: ReturnType<typeof minimalTracer>;
beforeEach(() => {
    tracer = minimalTracer();
});
afterEach(() => tracer.stop());

/** The spans under `parent`, in the order they started. */
const childrenOf = (parent: TestSpan | undefined) => tracer.spans.filter((span) => span.parent === parent);
const names = (spans: TestSpan[]) => spans.map((span) => span.name);

/** A caller's own span, as an application's request handler would have one. */
function outer(name: string): TestSpan {
    return { name, parent: undefined, message: {} as CallMessage, ended: false };
}

describe('tracing channels over HTTP/1.1', () => {
    let server: TestServer;
    let attempts = 0;
    beforeAll(async () => {
        server = await startHttp((req, res) => {
            if (req.url === '/moved') {
                res.writeHead(302, { location: '/target' }).end();
            } else if (req.url === '/slow') {
                setTimeout(() => res.end('late'), 50);
            } else if (req.url === '/cached') {
                res.writeHead(200, { 'cache-control': 'max-age=60' }).end('kept');
            } else if (req.url === '/stale') {
                const headers = { 'cache-control': 'max-age=0, stale-while-revalidate=60', etag: '"s"' };
                if (req.headers['if-none-match'] === '"s"') {
                    res.writeHead(304, headers).end();
                } else {
                    res.writeHead(200, headers).end('stale soon');
                }
            } else if (req.url === '/flaky' && attempts++ === 0) {
                res.writeHead(503).end('try again');
            } else {
                res.end(`answered ${req.url}`);
            }
        });
    });
    afterAll(() => server.close());

    it('a redirect: the call under the caller, its two hops under the call, each active in its own events', async () => {
        const api = new Client().defaults({ events: true, redirects: 1 });
        const inEvents: { event: string; url: string; span: string | undefined }[] = [];
        const record = (event: string) => (uri: RequestUri) =>
            inEvents.push({ event, url: uri.pathname, span: tracer.active.getStore()?.name });
        api.events!.on('preRequest', record('preRequest'));
        api.events!.on('response', (_err, details) => record('response')(details.uri));
        const caller = outer('handler');
        const after = await tracer.active.run(caller, async () => {
            const { payload } = await api.get(`${server.url}/moved`);
            expect(String(payload)).toBe('answered /target');
            return tracer.active.getStore();
        });
        // The caller's code after the call runs in the caller's span, not in the call's.
        expect(after).toBe(caller);

        const [call, ...others] = childrenOf(caller);
        expect(others).toEqual([]);
        expect(call!.name).toBe(`GET ${server.url}/moved`);
        expect(names(childrenOf(call))).toEqual(['hop 1 initial', 'hop 2 redirect']);
        expect(tracer.spans.every((span) => span.ended && span.error === undefined)).toBe(true);
        expect(tracer.spans.every((span) => span.endedActive)).toBe(true);
        expect(inEvents).toEqual([
            { event: 'preRequest', url: '/moved', span: 'hop 1 initial' },
            { event: 'response', url: '/moved', span: 'hop 1 initial' },
            { event: 'preRequest', url: '/target', span: 'hop 2 redirect' },
            { event: 'response', url: '/target', span: 'hop 2 redirect' }
        ]);

        const message = call!.message as CallMessage;
        expect(message).toMatchObject({ method: 'GET', url: `${server.url}/moved`, hops: 2 });
        expect(message.options.redirects).toBe(1);
        expect(message.response?.statusCode).toBe(200);
        expect(message.result).toEqual({ res: message.response, payload: Buffer.from('answered /target') });
        expect(message.timings).toBe(message.response?.timings);
        const [first, second] = childrenOf(call).map((span) => span.message as HopMessage);
        expect(first!.response?.statusCode).toBe(302);
        expect(first!.req).toBeDefined();
        expect(first!.timings.response).toBeGreaterThan(0);
        expect(second).toMatchObject({ call: message, method: 'GET', url: `${server.url}/target`, fromCache: false });
    });

    it('a retry: the hop that got a 503 and the retry that succeeded, both under the call', async () => {
        attempts = 0;
        const api = new Client().defaults({ retry: { limit: 1, backoff: () => 0 } });
        const { res } = await api.get(`${server.url}/flaky`);
        expect(res.statusCode).toBe(200);

        const [call] = childrenOf(undefined);
        expect(names(childrenOf(call))).toEqual(['hop 1 initial', 'hop 2 retry']);
        const [failed, retried] = childrenOf(call).map((span) => span.message as HopMessage);
        expect(failed!.response?.statusCode).toBe(503);
        expect(retried!.response?.statusCode).toBe(200);
    });

    it('a failed call: the error on the call and on its hop, each ended once', async () => {
        const api = new Client();
        const err = await rejection(api.get(refusedUrl));
        const [call] = childrenOf(undefined);
        expect(call!.error).toBe(err);
        const [hop] = childrenOf(call);
        expect(hop!.error).toBe(err);
        expect(tracer.spans.every((span) => span.ended)).toBe(true);
        expect(tracer.spans).toHaveLength(2);
    });

    it('a call answered by its cache: a hop from the cache, without a request', async () => {
        const api = new Client().defaults({ cache: true });
        await api.get(`${server.url}/cached`);
        await api.get(`${server.url}/cached`);
        const calls = childrenOf(undefined);
        expect(calls).toHaveLength(2);
        const hit = childrenOf(calls[1]).map((span) => span.message as HopMessage);
        expect(hit).toHaveLength(1);
        expect(hit[0]).toMatchObject({ fromCache: true, reason: 'initial' });
        expect(hit[0]!.req).toBeUndefined();
        expect(hit[0]!.response?.headers['cache-status']).toMatch(/^tracewire; hit/);
    });

    it('a stale response served while the cache revalidates it: the revalidation a hop of the call that served it, after it settled', async () => {
        const api = new Client().defaults({ cache: true });
        await api.get(`${server.url}/stale`);
        const { res } = await api.get(`${server.url}/stale`);
        expect(res.headers['cache-status']).toMatch(/^tracewire; hit; .*detail=stale-while-revalidate/);
        const [, served] = childrenOf(undefined);
        // The call settled with the stale response; its revalidation, which nobody waits for, comes after.
        await expect.poll(() => names(childrenOf(served))).toEqual(['hop 1 initial', 'hop 2 revalidation']);
        const [stale, revalidation] = childrenOf(served);
        await expect.poll(() => revalidation!.ended).toBe(true);
        expect(stale!.message).toMatchObject({ fromCache: true, reason: 'initial' });
        const message = revalidation!.message as HopMessage;
        expect(message).toMatchObject({ call: served!.message, fromCache: false, reason: 'revalidation' });
        expect(message.req).toBeDefined();
        expect(message.response?.statusCode).toBe(304);
        expect(revalidation!.error).toBeUndefined();
    });

    it('the plain channels: a subscriber that comes while a traced call is under way gets none of its messages', async () => {
        const seen: unknown[] = [];
        const listener = (message: unknown) => seen.push(message);
        const call = new Client().get(`${server.url}/slow`);
        subscribe(CLIENT_CHANNELS.response, listener);
        try {
            await call;
            expect(seen).toEqual([]);
            await new Client().get(`${server.url}/slow`);
            expect(seen).toHaveLength(1);
        } finally {
            unsubscribe(CLIENT_CHANNELS.response, listener);
        }
    });

    it('concurrent calls: each call is the parent of its own hops only', async () => {
        const api = new Client().defaults({ redirects: 1 });
        const callers = ['a', 'b', 'c'].map(outer);
        await Promise.all(callers.map((caller) => tracer.active.run(caller, () => api.get(`${server.url}/moved`))));
        for (const caller of callers) {
            const [call, ...more] = childrenOf(caller);
            expect(more).toEqual([]);
            expect(names(childrenOf(call))).toEqual(['hop 1 initial', 'hop 2 redirect']);
        }
    });
});

describe('tracing channels without a subscriber', () => {
    it('a call that began while neither channel had one publishes nothing, even once one subscribes', async () => {
        tracer.stop();
        const server = await startHttp((_req, res) => res.end('plain'));
        try {
            const call = new Client().get(server.url);
            tracer = minimalTracer();
            await call;
            expect(tracer.spans).toEqual([]);
            await new Client().get(server.url);
            expect(names(tracer.spans)).toEqual([`GET ${server.url}/`, 'hop 1 initial']);
        } finally {
            await server.close();
        }
    });
});

describe('tracing channels over HTTP/2', () => {
    let server: Http2TestServer;
    let timers = 0;
    beforeEach(async () => {
        timers = timersBefore();
        server = await startHttp2(undefined);
    });
    afterEach(() => server.close());

    it('concurrent calls on one session, each stream refused once and sent again: every hop under its own call', async () => {
        const refused = new Set<string>();
        server.server.on('stream', (stream, headers) => {
            const path = String(headers[':path']);
            if (!refused.has(path)) {
                refused.add(path);
                stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
            } else if (path.startsWith('/moved')) {
                stream.respond({ ':status': 302, location: `/target${path.slice('/moved'.length)}` });
                stream.end();
            } else {
                stream.respond({ ':status': 200 });
                stream.end(`answered ${path}`);
            }
        });
        const api = new Client().defaults({
            events: true,
            http2: { idleTimeout: 100 },
            rejectUnauthorized: false,
            redirects: 1
        });
        // Every response event, with the span active in it: the span of the hop it reports.
        const inResponses: { hop: string | undefined; url: string }[] = [];
        api.events!.on('response', (_err, details) =>
            inResponses.push({
                hop: (tracer.active.getStore()?.message as HopMessage | undefined)?.uri?.href,
                url: details.uri.href
            })
        );
        const callers = ['a', 'b', 'c'].map(outer);
        const payloads = await Promise.all(
            callers.map((caller) => tracer.active.run(caller, () => api.get(`${server.url}/moved/${caller.name}`)))
        );
        expect(payloads.map(({ payload }) => String(payload))).toEqual([
            'answered /target/a',
            'answered /target/b',
            'answered /target/c'
        ]);
        // The streams shared one session, whose callbacks run in the context of the call that opened it.
        expect(server.sessions).toHaveLength(1);

        for (const caller of callers) {
            const [call, ...more] = childrenOf(caller);
            expect(more).toEqual([]);
            const hops = childrenOf(call);
            expect(names(hops)).toEqual(['hop 1 initial', 'hop 2 resend', 'hop 3 redirect', 'hop 4 resend']);
            const [first, resend] = hops.map((span) => span.message as HopMessage);
            expect(first!.resent).toBe('http2-refused-stream');
            expect(resend!.resendReason).toBe('http2-refused-stream');
            expect(first!.error).toBeDefined();
            expect(hops.every((span) => span.ended && span.endedActive)).toBe(true);
            expect(call!.endedActive).toBe(true);
        }

        expect(inResponses).toHaveLength(12);
        for (const { hop, url } of inResponses) {
            expect(hop).toBe(url);
        }

        await expectReleased(api, [server], timers, { serversClose: false });
    });
});
