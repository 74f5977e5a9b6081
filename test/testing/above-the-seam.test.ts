import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ATTR_NETWORK_PROTOCOL_VERSION, ATTR_URL_FULL } from '@opentelemetry/semantic-conventions';
import { afterEach, describe, expect, it } from 'vitest';
import { ATTR_HTTP2_SESSION_END, ATTR_RESEND_REASON, instrumentClient } from '../../instrumentation/index.js';
import {
    CLIENT_CHANNELS,
    Client,
    type RequestMessage,
    type ResponseMessage,
    type TimedResponse
} from '../../src/client/index.js';
import { MockNetwork } from '../../src/testing/index.js';
import { setupOtel } from '../instrumentation/otel.js';

/**
 * What runs above the transport seam runs for a mocked exchange as for one on the network
 * (docs/testing.md, "What runs for real"): the timings (the connection's phases not measured: there
 * was none), the diagnostics channels, and the instrumentation's spans with the protocol as mocked.
 * The rest (redirects, retries, the cache, decoding, re-sends) is held to a real server's outcome by
 * parity.test.ts.
 */

const origin = 'https://api.test';
let cleanups: (() => unknown)[] = [];
afterEach(async () => {
    for (const cleanup of cleanups.reverse()) {
        await cleanup();
    }

    cleanups = [];
});

function mocked(): { mock: MockNetwork; api: Client } {
    const mock = new MockNetwork();
    cleanups.push(() => mock.close());
    return { mock, api: new Client().defaults({ mock, events: true }) };
}

describe('timings', () => {
    it('every phase of the exchange is timed, none of a connection: lookup, connect and TLS did not happen', async () => {
        const { mock, api } = mocked();
        mock.origin(origin).get('/').reply(200, 'x'.repeat(1000)).delay({ headers: 60, body: 40 }).times(2);
        for (const http2 of [false, true]) {
            const { res } = await api.get(`${origin}/`, { http2 });
            const { timings } = res;
            expect([timings.lookup, timings.connect, timings.secureConnect]).toEqual([undefined, undefined, undefined]);
            expect([timings.phases.dns, timings.phases.tcp, timings.phases.tls]).toEqual([
                undefined,
                undefined,
                undefined
            ]);
            for (const moment of [timings.socket, timings.upload, timings.response, timings.end]) {
                expect(moment).toBeTypeOf('number');
            }

            expect(timings.phases.firstByte).toBeGreaterThanOrEqual(55);
            expect(timings.phases.download).toBeGreaterThanOrEqual(35);
            expect(timings.phases.total).toBeGreaterThanOrEqual(95);
        }
    });
});

describe('diagnostics channels', () => {
    it('publish every mocked hop as any other: preRequest, request, response with its timings', async () => {
        const { mock } = mocked();
        mock.origin(origin).get('/a').reply(200, 'a');
        const seen: string[] = [];
        const onRequest = (message: unknown) => seen.push(`request ${(message as RequestMessage).req.method}`);
        const onResponse = (message: unknown) => {
            const { err, details } = message as ResponseMessage;
            seen.push(`response ${details.res?.statusCode} ${err} ${details.timings === details.res?.timings}`);
        };
        const onPreRequest = (message: unknown) => seen.push(`preRequest ${(message as { uri: URL }).uri.pathname}`);
        subscribe(CLIENT_CHANNELS.preRequest, onPreRequest);
        subscribe(CLIENT_CHANNELS.request, onRequest);
        subscribe(CLIENT_CHANNELS.response, onResponse);
        try {
            await new Client().defaults({ mock }).get(`${origin}/a`);
        } finally {
            unsubscribe(CLIENT_CHANNELS.preRequest, onPreRequest);
            unsubscribe(CLIENT_CHANNELS.request, onRequest);
            unsubscribe(CLIENT_CHANNELS.response, onResponse);
        }

        expect(seen).toEqual(['preRequest /a', 'request GET', 'response 200 undefined true']);
    });
});

describe('spans', () => {
    function traced(): { mock: MockNetwork; api: Client; spans: () => ReadableSpan[] } {
        const otel = setupOtel();
        const { mock, api } = mocked();
        const instrumentation = instrumentClient(api, {
            tracerProvider: otel.tracerProvider,
            meterProvider: otel.meterProvider
        });
        cleanups.push(async () => {
            instrumentation.disable();
            await otel.shutdown();
        });
        return { mock, api, spans: () => otel.spans() };
    }

    it('network.protocol.version says the protocol the mock answered in', async () => {
        const { mock, api, spans } = traced();
        mock.origin(origin).get('/one').reply(200, 'one');
        mock.origin(origin).get('/two').reply(200, 'two');
        mock.origin('https://old.test', { http2: false }).get('/').reply(200, 'old');
        await api.get(`${origin}/one`);
        await api.get(`${origin}/two`, { http2: true });
        await api.get('https://old.test/', { http2: true });
        await expect.poll(() => spans().length).toBe(3);
        const versions = Object.fromEntries(
            spans().map((span) => [span.attributes[ATTR_URL_FULL], span.attributes[ATTR_NETWORK_PROTOCOL_VERSION]])
        );
        expect(versions).toEqual({
            'https://api.test/one': '1.1',
            'https://api.test/two': '2',
            'https://old.test/': '1.1'
        });
    });

    it("a mocked GOAWAY: the failed hop's span says how its session ended, the re-sent one's why it was sent again", async () => {
        const { mock, api, spans } = traced();
        mock.origin(origin).get('/').fault('goaway');
        mock.origin(origin).get('/').reply(200, 'again');
        const { res } = await api.get(`${origin}/`, { http2: true });
        expect((res as TimedResponse).statusCode).toBe(200);
        await expect.poll(() => spans().length).toBe(2);
        const [failed, resent] = spans().sort(
            (a, b) => a.startTime[1] - b.startTime[1] + (a.startTime[0] - b.startTime[0]) * 1e9
        );
        expect(failed?.attributes[ATTR_HTTP2_SESSION_END]).toBe('goaway');
        expect(resent?.attributes[ATTR_RESEND_REASON]).toBe('http2-goaway');
    });
});
