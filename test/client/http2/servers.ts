import * as http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { selfSignedCertificate } from '../helpers.js';

/**
 * `node:http2` servers on loopback for the HTTP/2 tests (README "HTTP/2"): over TLS with ALPN (the
 * test certificate), or cleartext for h2c, with the compatibility handler `(req, res)` or the raw
 * `stream` event, and the sessions they hold, so a test can make one misbehave.
 */
export interface Http2TestServer {
    readonly url: string;
    readonly port: number;
    readonly server: http2.Http2SecureServer | http2.Http2Server;
    /** Every session the server accepted, in order. */
    readonly sessions: http2.ServerHttp2Session[];
    /** Every TCP connection the server accepted (TLS or not), in order. */
    readonly connections: Socket[];
    close(): Promise<void>;
}

export interface Http2ServerOptions {
    /** Cleartext (h2c) rather than TLS. */
    h2c?: boolean;
    /** Also answer HTTP/1.1 (ALPN `http/1.1`). */
    allowHTTP1?: boolean;
    /** The server's SETTINGS. */
    settings?: http2.Settings;
    /** Offer only these ALPN protocols (TLS), e.g. `['http/1.1']` for a server without HTTP/2. */
    alpn?: string[];
}

export type Http2Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

let certificate: { key: Buffer; cert: Buffer } | undefined;

export async function startHttp2(
    handler: Http2Handler | undefined,
    options: Http2ServerOptions = {}
): Promise<Http2TestServer> {
    certificate ??= selfSignedCertificate();
    const server = options.h2c
        ? http2.createServer({ settings: options.settings ?? {} })
        : http2.createSecureServer({
              ...certificate,
              allowHTTP1: options.allowHTTP1 ?? false,
              settings: options.settings ?? {},
              ...(options.alpn === undefined ? {} : { ALPNProtocols: options.alpn })
          });
    if (handler !== undefined) {
        server.on('request', handler);
    }

    const sessions: http2.ServerHttp2Session[] = [];
    const connections: Socket[] = [];
    server.on('session', (session) => sessions.push(session));
    server.on(options.h2c ? 'connection' : 'secureConnection', (socket: Socket) => connections.push(socket));
    // A session the client resets or a test destroys must not throw on the server.
    server.on('sessionError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `${options.h2c ? 'http' : 'https'}://127.0.0.1:${port}`,
        port,
        server,
        sessions,
        connections,
        close: () =>
            new Promise<void>((resolve) => {
                for (const session of sessions) {
                    session.destroy();
                }

                for (const socket of connections) {
                    socket.destroy();
                }

                server.close(() => resolve());
            })
    };
}
