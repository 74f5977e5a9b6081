import { mkdtempSync, rmSync } from 'node:fs';
import * as http2 from 'node:http2';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedCertificate } from '../../helpers.js';

/**
 * `node:http2` servers on loopback for the HTTP/2 tests (README "HTTP/2"): over TLS with ALPN (the
 * test certificate), or cleartext for h2c (on a port or a UNIX socket), with the compatibility
 * handler `(req, res)` or the raw `stream` event, and the sessions and connections they hold, so a
 * test can make one misbehave and check that none is left open.
 */
export interface Http2TestServer {
    readonly url: string;
    readonly port: number;
    /** The UNIX socket it listens on, with `socketPath`. */
    readonly socketPath: string | undefined;
    readonly server: http2.Http2SecureServer | http2.Http2Server;
    /** Every session the server accepted, in order. */
    readonly sessions: http2.ServerHttp2Session[];
    /** Every TCP connection the server accepted (TLS or not), in order. */
    readonly connections: Socket[];
    /** Every stream the server received, in order. */
    readonly streams: http2.ServerHttp2Stream[];
    /** The index in `sessions` of the session a stream came on. */
    sessionOf(stream: http2.ServerHttp2Stream): number;
    /** The sessions not closed yet. */
    openSessions(): number;
    /** The connections not closed yet. */
    openConnections(): number;
    close(): Promise<void>;
}

export interface Http2ServerOptions {
    /** Cleartext (h2c) rather than TLS. */
    h2c?: boolean;
    /** Listen on a UNIX socket (h2c) instead of a port. */
    unix?: boolean;
    /** The loopback address to listen on: 127.0.0.1 unless given (`::1` for IPv6). */
    host?: string;
    /** Also answer HTTP/1.1 (ALPN `http/1.1`). */
    allowHTTP1?: boolean;
    /** The server's SETTINGS. */
    settings?: http2.Settings;
    /** What a stream of a session may buffer, in MiB (the server's `maxSessionMemory`). */
    maxSessionMemory?: number;
}

export type Http2Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

export async function startHttp2(
    handler: Http2Handler | undefined,
    options: Http2ServerOptions = {}
): Promise<Http2TestServer> {
    const common = {
        settings: options.settings ?? {},
        ...(options.maxSessionMemory === undefined ? {} : { maxSessionMemory: options.maxSessionMemory })
    };
    const server = options.h2c
        ? http2.createServer(common)
        : http2.createSecureServer({
              ...selfSignedCertificate(),
              ...common,
              allowHTTP1: options.allowHTTP1 ?? false
          });
    if (handler !== undefined) {
        server.on('request', handler);
    }

    const sessions: http2.ServerHttp2Session[] = [];
    const connections: Socket[] = [];
    const streams: http2.ServerHttp2Stream[] = [];
    server.on('session', (session) => {
        sessions.push(session);
        session.on('error', () => {});
    });
    const sessionOfStream = new Map<http2.ServerHttp2Stream, number>();
    server.on('stream', (stream) => {
        streams.push(stream);
        sessionOfStream.set(stream, sessions.indexOf(stream.session as http2.ServerHttp2Session));
        // A stream the client resets must not throw on the server.
        stream.on('error', () => {});
    });
    server.on(options.h2c ? 'connection' : 'secureConnection', (socket: Socket) => connections.push(socket));
    // A session the client resets or a test destroys must not throw on the server.
    server.on('sessionError', () => {});
    let socketPath: string | undefined;
    let dir: string | undefined;
    if (options.unix) {
        dir = mkdtempSync(join(tmpdir(), 'tracewire-h2-'));
        socketPath = join(dir, 'server.sock');
        await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    } else {
        await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
    }

    const port = socketPath === undefined ? (server.address() as AddressInfo).port : 0;
    const host = options.host?.includes(':') ? `[${options.host}]` : (options.host ?? '127.0.0.1');
    return {
        url: socketPath === undefined ? `${options.h2c ? 'http' : 'https'}://${host}:${port}` : 'http://localhost',
        port,
        socketPath,
        server,
        sessions,
        connections,
        streams,
        sessionOf: (stream) => sessionOfStream.get(stream) ?? -1,
        openSessions: () => sessions.filter((session) => !session.closed && !session.destroyed).length,
        openConnections: () => connections.filter((socket) => !socket.destroyed).length,
        close: () =>
            new Promise<void>((resolve) => {
                for (const session of sessions) {
                    session.destroy();
                }

                for (const socket of connections) {
                    socket.destroy();
                }

                server.close(() => {
                    if (dir !== undefined) {
                        rmSync(dir, { recursive: true, force: true });
                    }

                    resolve();
                });
            })
    };
}

/**
 * A TCP relay between the client and a server, to make a connection go silent: `freeze()` stops
 * carrying bytes either way on the connections open now (as a dead network path does: nothing is
 * closed, nothing answers); the connections made after it are carried as usual.
 */
export interface Relay {
    readonly url: string;
    readonly port: number;
    /** Client connections accepted. */
    readonly connections: number;
    /** Connections open now (either side). */
    openConnections(): number;
    freeze(): void;
    close(): Promise<void>;
}

/**
 * `delay`: the milliseconds each chunk from the server waits before the relay passes it on, or a
 * function of the connection's index (0 for the first) that says it per connection.
 */
export async function startRelay(
    target: { port: number; url: string },
    delay: number | ((connection: number) => number) = 0
): Promise<Relay> {
    const pairs = new Set<[Socket, Socket]>();
    const frozen = new WeakSet<Socket>();
    let connections = 0;
    const server: Server = createServer((client) => {
        const serverDelay = typeof delay === 'number' ? delay : delay(connections);
        connections++;
        const upstream = connect(target.port, '127.0.0.1');
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        const closeBoth = () => {
            client.destroy();
            upstream.destroy();
            pairs.delete(pair);
        };
        for (const [from, to, wait] of [
            [client, upstream, 0],
            [upstream, client, serverDelay]
        ] as const) {
            from.on('error', closeBoth);
            from.on('close', closeBoth);
            from.on('data', (chunk: Buffer) => {
                if (frozen.has(from)) {
                    return;
                }

                if (wait === 0) {
                    to.write(chunk);
                } else {
                    setTimeout(() => to.write(chunk), wait);
                }
            });
        }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `${target.url.slice(0, target.url.indexOf(':'))}://127.0.0.1:${port}`,
        port,
        get connections() {
            return connections;
        },
        openConnections: () => pairs.size,
        freeze: () => {
            // Bytes read from now on are dropped: the connection is dead to both ends, yet open.
            for (const [client, upstream] of pairs) {
                frozen.add(client);
                frozen.add(upstream);
            }
        },
        close: () =>
            new Promise<void>((resolve) => {
                for (const [client, upstream] of pairs) {
                    client.destroy();
                    upstream.destroy();
                }

                server.close(() => resolve());
            })
    };
}
