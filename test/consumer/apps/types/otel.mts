// tracewire/instrumentation needs the OpenTelemetry API (its peer), not @hapi/hapi.
import { context, trace } from '@opentelemetry/api';
import { client } from 'tracewire';
import { instrumentClient, requestContext, TracewireInstrumentation, tracing } from 'tracewire/instrumentation';

export const instrumentation = new TracewireInstrumentation({ optionalMetrics: true });
export const handle = instrumentClient(client.defaults({ events: true }), {
    requestHook: (span) => span.setAttribute('app', 'consumer')
});
export const active = trace.getSpan(context.active());
export const pluginName: string = tracing.name;
export const parentOf = requestContext;
