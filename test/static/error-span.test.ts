import * as Hapi from '@hapi/hapi';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { notFound } from '../../src/errors/index.js';
import { staticFiles } from '../../src/static/index.js';
import { hasContextManager, loadOpenTelemetry } from '../../src/static/open-telemetry.js';

afterEach(() => {
    // Each test starts without a global context manager, as a process without an SDK does.
    context.disable();
});

/** A server whose only route fails with a 404 HttpError. */
async function failingServer(): Promise<Hapi.Server> {
    const server = Hapi.server();
    await server.register(staticFiles);
    server.route({
        method: 'GET',
        path: '/missing',
        handler: () => {
            throw notFound('gone');
        }
    });
    return server;
}

/** Injects `/missing` inside an active server span and returns that span once ended. */
async function injectInSpan(server: Hapi.Server) {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: exporter })] });
    const span = provider.getTracer('upstream').startSpan('upstream server span', { kind: SpanKind.SERVER });
    const res = await context.with(trace.setSpan(context.active(), span), () => server.inject('/missing'));
    span.end();
    return { res, span: exporter.getFinishedSpans()[0]! };
}

describe('annotateErrorSpan is added where a span can be active: with a global context manager', () => {
    it('finds a context manager only while one is registered', async () => {
        await loadOpenTelemetry();
        expect(hasContextManager()).toBe(false);
        context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
        expect(hasContextManager()).toBe(true);
        context.disable();
        expect(hasContextManager()).toBe(false);
    });

    it('annotates errors when the context manager is registered before the plugin', async () => {
        context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
        const server = await failingServer();
        const { res, span } = await injectInSpan(server);
        expect(res.statusCode).toBe(404);
        expect(span.attributes).toEqual({ 'http.response.status_code': 404, 'error.type': '404' });
    });

    it('annotates errors when the context manager is registered after the plugin but before the server starts', async () => {
        const server = await failingServer();
        context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
        await server.initialize();
        const { res, span } = await injectInSpan(server);
        expect(res.statusCode).toBe(404);
        expect(span.attributes).toEqual({ 'http.response.status_code': 404, 'error.type': '404' });
        await server.stop();
    });

    it('answers errors as before without any context manager', async () => {
        const server = await failingServer();
        await server.initialize();
        const res = await server.inject('/missing');
        expect(res.statusCode).toBe(404);
        expect(JSON.parse(res.payload)).toMatchObject({ statusCode: 404, message: 'gone' });
        await server.stop();
    });
});
