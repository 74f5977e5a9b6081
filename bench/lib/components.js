// Which tracewire components are built: each section runs only the parts whose component exists,
// so the harness works while the library is still being written.
import * as tracewire from 'tracewire';

export async function detectComponents() {
    const { client, errors, staticFiles } = tracewire;
    const instrumentation = await import('tracewire/instrumentation').catch(() => ({}));
    return {
        errors:
            typeof errors?.notFound === 'function' &&
            typeof errors.toHttpError === 'function' &&
            typeof errors.HttpError === 'function',
        client: typeof client?.request === 'function' && typeof client.defaults === 'function',
        static: isHapiPlugin(staticFiles),
        instrumentation: typeof instrumentation.instrumentClient === 'function'
    };
}

function isHapiPlugin(value) {
    return typeof value?.register === 'function' || typeof value?.plugin?.register === 'function';
}

export function describeComponents(components) {
    return Object.entries(components)
        .map(([name, present]) => `${name}: ${present ? 'present' : 'missing'}`)
        .join(', ');
}
