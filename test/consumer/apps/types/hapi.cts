import Hapi = require('@hapi/hapi');

import { staticFiles } from 'tracewire/static';

export async function start(): Promise<Hapi.Server> {
    const server = Hapi.server();
    await server.register(staticFiles);
    return server;
}
