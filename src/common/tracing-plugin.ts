/**
 * The name of the `tracing` hapi plugin of tracewire/instrumentation, which is also where it keeps
 * a request's server span (`request.plugins[TRACING_PLUGIN]`). Defined here so that the static
 * plugin reads that span by name without depending on the instrumentation.
 */
export const TRACING_PLUGIN = 'tracewire-tracing';
