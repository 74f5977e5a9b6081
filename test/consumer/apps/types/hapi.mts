// With @hapi/hapi: the plugins register, and tracewire/static adds h.file() and the handlers to hapi's types.
import Hapi from '@hapi/hapi';
import { staticFiles as fromRoot, problemDetails } from 'tracewire';
import { tracing, withRequestContext } from 'tracewire/instrumentation';
import { staticFiles } from 'tracewire/static';

export async function start(): Promise<Hapi.Server> {
    const server = Hapi.server({ plugins: { static: { etagsCacheMaxSize: 100 } } });
    await server.register([staticFiles, tracing]);
    await server.register({ plugin: fromRoot });
    await server.register({
        plugin: problemDetails,
        options: { mode: 'always', typeBase: 'https://example.com/probs/' }
    });
    server.route({
        method: 'GET',
        path: '/file',
        handler: (request, h) => withRequestContext(request, () => h.file('a.txt'))
    });
    server.route({ method: 'GET', path: '/{p*}', handler: { directory: { path: '.' } } });
    return server;
}
