import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';

/**
 * The proxies of these tests are real ones, written here: a forward proxy (absolute-form requests,
 * forwarded to the origin) and a CONNECT proxy (a byte tunnel), in one server as in real life. Like
 * a real proxy they resolve every host name themselves (here: all to 127.0.0.1) and consume the
 * `proxy-authorization` header; they forward everything else as it came, so an origin sees exactly
 * what the client sent through them.
 */
export interface TestProxy {
    /** `http://127.0.0.1:port`, or with `user:pass@` when the proxy wants credentials. */
    url: string;
    port: number;
    /** Absolute-form requests received: their target and headers (proxy-authorization included). */
    forwarded: { url: string; headers: http.IncomingHttpHeaders }[];
    /** CONNECT requests received: target and headers. */
    tunnels: { target: string; headers: http.IncomingHttpHeaders }[];
    /** TCP connections accepted from clients. */
    connections: number;
    /** The client connections open now. */
    open: Set<net.Socket>;
    close(): Promise<void>;
}

/** `tls`: the proxy speaks TLS to its clients (an `https://` proxy) with this key and certificate. */
export async function startProxy(credentials?: string, tls?: { key: Buffer; cert: Buffer }): Promise<TestProxy> {
    const sockets = new Set<net.Socket>();
    const expected = credentials === undefined ? undefined : `Basic ${Buffer.from(credentials).toString('base64')}`;
    const proxy: Omit<TestProxy, 'url' | 'port' | 'close'> = {
        forwarded: [],
        tunnels: [],
        connections: 0,
        open: new Set()
    };
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
        proxy.forwarded.push({ url: req.url ?? '', headers: req.headers });
        if (expected !== undefined && req.headers['proxy-authorization'] !== expected) {
            res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' });
            res.end('credentials needed');
            return;
        }

        const target = new URL(req.url ?? '');
        const { 'proxy-authorization': _consumed, ...headers } = req.headers;
        const upstream = http.request(
            {
                host: '127.0.0.1',
                port: target.port,
                path: target.pathname + target.search,
                method: req.method,
                headers
            },
            (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                answer.pipe(res);
            }
        );
        upstream.on('error', () => res.destroy());
        req.pipe(upstream);
    };
    const server = tls === undefined ? http.createServer(onRequest) : https.createServer(tls, onRequest);
    server.on('connection', (socket: net.Socket) => {
        proxy.connections++;
        sockets.add(socket);
        proxy.open.add(socket);
        socket.on('close', () => {
            sockets.delete(socket);
            proxy.open.delete(socket);
        });
    });
    server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
        proxy.tunnels.push({ target: req.url ?? '', headers: req.headers });
        socket.on('error', () => socket.destroy());
        if (expected !== undefined && req.headers['proxy-authorization'] !== expected) {
            socket.end(
                'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n'
            );
            return;
        }

        const port = Number((req.url ?? '').split(':').pop());
        const upstream = net.connect(port, '127.0.0.1', () => {
            socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
            upstream.write(head);
            upstream.pipe(socket);
            socket.pipe(upstream);
        });
        sockets.add(upstream);
        upstream.on('error', () => socket.destroy());
        upstream.on('close', () => socket.destroy());
        socket.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return Object.assign(proxy, {
        url: `${tls === undefined ? 'http' : 'https'}://${credentials === undefined ? '' : `${credentials}@`}127.0.0.1:${port}`,
        port,
        close: () => {
            for (const socket of sockets) {
                socket.destroy();
            }

            return new Promise<void>((resolve) => server.close(() => resolve()));
        }
    });
}
