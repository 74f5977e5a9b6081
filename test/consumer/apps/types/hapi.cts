import Hapi = require('@hapi/hapi');

import { problemDetails } from 'tracewire/errors';
import { staticFiles } from 'tracewire/static';

export async function start(): Promise<Hapi.Server> {
    const server = Hapi.server();
    await server.register([staticFiles, problemDetails]);
    return server;
}
