import Hapi from '@hapi/hapi';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracing } from '../../instrumentation/index.js';
import { errors, problemDetails, staticFiles } from '../../src/index.js';
import { setupOtel } from '../instrumentation/otel.js';
import { problemOf } from './problem-routes.js';

const otel = setupOtel();
let server: Hapi.Server;

beforeAll(async () => {
    server = Hapi.server({ host: '127.0.0.1', port: 0, debug: false });
    await server.register({
        plugin: tracing,
        options: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }
    });
    await server.register(staticFiles);
    await server.register({ plugin: problemDetails, options: { mode: 'always' } });
    server.route([
        {
            method: 'GET',
            path: '/broken',
            handler: () => {
                throw errors.badImplementation('Database exploded');
            }
        },
        {
            method: 'GET',
            path: '/typed',
            handler: () => errors.conflict('taken', null, { type: 'https://example.com/probs/taken' })
        }
    ]);
    await server.start();
});

afterAll(async () => {
    await server.stop();
    await otel.shutdown();
});

async function fetchSpan(path: string) {
    otel.reset();
    const res = await fetch(`${server.info.uri}${path}`);
    const payload = await res.text();
    // The span ends on hapi's `response` event, right after the last byte is written.
    await expect.poll(() => otel.spans().length).toBe(1);
    return { headers: Object.fromEntries(res.headers), payload, span: otel.spans()[0]! };
}

describe('the problem-details plugin with the tracing plugin', () => {
    it('a 5xx sent as a problem document is still recorded with its real message on the server span', async () => {
        const { headers, payload, span } = await fetchSpan('/broken');
        expect(problemOf({ headers, payload })).toStrictEqual({
            type: 'about:blank',
            title: 'Internal Server Error',
            status: 500,
            instance: '/broken'
        });
        expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Database exploded' });
        expect(span.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });
        // Its exception is a log record (test/instrumentation/server-log-events.test.ts), not a span event.
        expect(span.events).toStrictEqual([]);
    });

    it('a 4xx keeps the attributes of its status', async () => {
        const { span } = await fetchSpan('/typed');
        expect(span.attributes).toMatchObject({ 'http.response.status_code': 409, 'error.type': '409' });
    });
});
