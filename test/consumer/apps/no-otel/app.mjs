// The client, the errors and the static plugin in an app without any OpenTelemetry package.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Hapi from '@hapi/hapi';
import { client, errors, staticFiles } from 'tracewire';

writeFileSync('hello.txt', 'hello');
const server = Hapi.server();
await server.register(staticFiles);
server.route({ method: 'GET', path: '/hello', handler: (_request, h) => h.file('hello.txt', { confine: false }) });
server.route({
    method: 'GET',
    path: '/missing',
    handler: () => {
        throw errors.notFound('no such thing');
    }
});
const file = await server.inject('/hello');
const missing = await server.inject('/missing');

const upstream = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
);
await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const { payload } = await client.get(`http://127.0.0.1:${upstream.address().port}/`, { json: true });
upstream.close();

console.log(
    JSON.stringify({
        file: { status: file.statusCode, type: file.headers['content-type'], body: file.payload },
        missing: missing.statusCode,
        payload
    })
);
