import { createServer, type Server, type Socket } from 'node:net';

/** A raw HTTP/1.1 origin of the fault tests: the server, its URL and its open connections. */
export interface RawOrigin {
    url: string;
    server: Server;
    sockets: Set<Socket>;
    /** Destroys every connection, then closes the server. */
    close(): Promise<void>;
}

/**
 * Starts an origin that reads request heads (GET, no body) and hands each request's path to `answer`,
 * which writes whatever (broken) HTTP it likes on the raw socket.
 */
export async function startRawOrigin(answer: (socket: Socket, path: string) => void): Promise<RawOrigin> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {});
        let buffered = '';
        socket.on('data', (chunk: Buffer) => {
            buffered += chunk.toString('latin1');
            for (let end = buffered.indexOf('\r\n\r\n'); end !== -1; end = buffered.indexOf('\r\n\r\n')) {
                const requestLine = buffered.slice(0, buffered.indexOf('\r\n'));
                buffered = buffered.slice(end + 4);
                if (!socket.destroyed && socket.writable) {
                    answer(socket, requestLine.split(' ')[1] ?? '/');
                }
            }
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return {
        url: `http://127.0.0.1:${port}`,
        server,
        sockets,
        close: async () => {
            for (const socket of sockets) {
                socket.destroy();
            }

            await new Promise((resolve) => server.close(resolve));
        }
    };
}

/** An HTTP/1.1 response head: the status line and `headers`, as written on the raw socket. */
export function head(status: string, headers: Record<string, string | number>): string {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    return `HTTP/1.1 ${status}\r\n${lines.join('')}\r\n`;
}
