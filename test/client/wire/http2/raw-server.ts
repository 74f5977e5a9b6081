import { EventEmitter } from 'node:events';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { selfSignedCertificate } from '../../helpers.js';

/**
 * An HTTP/2 server that writes frames by hand (RFC 9113 4, 6), for the faults `node:http2` will not
 * commit: a RST_STREAM of any code half way through a body, no SETTINGS at all, a connection closed
 * right after TLS, frames a test chooses byte by byte. It reads the client's frame headers (not its
 * header blocks: a test knows what it asked) and answers only what a test tells it to, except the
 * client's SETTINGS and PINGs, which it acknowledges unless told not to.
 */

export const frameType = {
    data: 0x0,
    headers: 0x1,
    rstStream: 0x3,
    settings: 0x4,
    ping: 0x6,
    goaway: 0x7,
    windowUpdate: 0x8
} as const;

const flags = { endStream: 0x1, ack: 0x1, endHeaders: 0x4 } as const;
const preface = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

/** A frame as the client sent it: its payload whole. */
export interface Frame {
    readonly type: number;
    readonly flags: number;
    readonly streamId: number;
    readonly payload: Buffer;
}

export interface RawConnectionOptions {
    /** Acknowledge the client's SETTINGS (default true). */
    ackSettings?: boolean;
    /** Answer the client's PINGs (default true). */
    answerPings?: boolean;
}

/** One client connection, frame by frame. Emits `frame` for each frame the client sends, `request` for each new stream. */
export class RawConnection extends EventEmitter {
    /** The streams the client opened (HEADERS), in order. */
    readonly streams: number[] = [];
    /** Every frame the client sent. */
    readonly frames: Frame[] = [];
    private buffered = Buffer.alloc(0);
    private sawPreface = false;

    constructor(
        readonly socket: Socket,
        private readonly options: RawConnectionOptions
    ) {
        super();
        socket.on('data', (chunk: Buffer) => this.read(chunk));
        socket.on('error', () => {});
    }

    /** Our SETTINGS (none: the defaults), as a server's connection preface. */
    settings(entries: [number, number][] = []): void {
        const payload = Buffer.alloc(entries.length * 6);
        entries.forEach(([id, value], i) => {
            payload.writeUInt16BE(id, i * 6);
            payload.writeUInt32BE(value, i * 6 + 2);
        });
        this.frame(frameType.settings, 0, 0, payload);
    }

    /** A response's HEADERS: `:status` and `fields`, literal (no Huffman, no index). */
    headers(streamId: number, status: number, fields: Record<string, string> = {}, endStream = false): void {
        const block = Buffer.concat(
            [[':status', String(status)] as const, ...Object.entries(fields)].map(([name, value]) =>
                literalField(name, value)
            )
        );
        this.frame(frameType.headers, flags.endHeaders | (endStream ? flags.endStream : 0), streamId, block);
    }

    data(streamId: number, body: string | Buffer, endStream = false): void {
        this.frame(frameType.data, endStream ? flags.endStream : 0, streamId, Buffer.from(body));
    }

    rst(streamId: number, code: number): void {
        const payload = Buffer.alloc(4);
        payload.writeUInt32BE(code);
        this.frame(frameType.rstStream, 0, streamId, payload);
    }

    goaway(lastStreamId: number, code: number): void {
        const payload = Buffer.alloc(8);
        payload.writeUInt32BE(lastStreamId & 0x7fffffff);
        payload.writeUInt32BE(code, 4);
        this.frame(frameType.goaway, 0, 0, payload);
    }

    /** Any frame, as given. */
    frame(type: number, frameFlags: number, streamId: number, payload: Buffer): void {
        const head = Buffer.alloc(9);
        head.writeUIntBE(payload.length, 0, 3);
        head.writeUInt8(type, 3);
        head.writeUInt8(frameFlags, 4);
        head.writeUInt32BE(streamId & 0x7fffffff, 5);
        if (!this.socket.destroyed) {
            this.socket.write(Buffer.concat([head, payload]));
        }
    }

    private read(chunk: Buffer): void {
        this.buffered = Buffer.concat([this.buffered, chunk]);
        if (!this.sawPreface) {
            if (this.buffered.length < preface.length) {
                return;
            }

            this.buffered = this.buffered.subarray(preface.length);
            this.sawPreface = true;
        }

        while (this.buffered.length >= 9) {
            const length = this.buffered.readUIntBE(0, 3);
            if (this.buffered.length < 9 + length) {
                return;
            }

            const frame: Frame = {
                type: this.buffered.readUInt8(3),
                flags: this.buffered.readUInt8(4),
                streamId: this.buffered.readUInt32BE(5) & 0x7fffffff,
                payload: this.buffered.subarray(9, 9 + length)
            };
            this.buffered = this.buffered.subarray(9 + length);
            this.received(frame);
        }
    }

    private received(frame: Frame): void {
        this.frames.push(frame);
        if (
            frame.type === frameType.settings &&
            (frame.flags & flags.ack) === 0 &&
            this.options.ackSettings !== false
        ) {
            this.frame(frameType.settings, flags.ack, 0, Buffer.alloc(0));
        } else if (
            frame.type === frameType.ping &&
            (frame.flags & flags.ack) === 0 &&
            this.options.answerPings !== false
        ) {
            this.frame(frameType.ping, flags.ack, 0, frame.payload);
        }

        this.emit('frame', frame);
        if (frame.type === frameType.headers && !this.streams.includes(frame.streamId)) {
            this.streams.push(frame.streamId);
            this.emit('request', frame.streamId, (frame.flags & flags.endStream) !== 0);
        }
    }
}

/** A header field as a literal without indexing, with a new name (RFC 7541 6.2.2). */
function literalField(name: string, value: string): Buffer {
    return Buffer.concat([Buffer.from([0]), stringLiteral(name), stringLiteral(value)]);
}

function stringLiteral(text: string): Buffer {
    const bytes = Buffer.from(text);
    return Buffer.concat([prefixedInteger(bytes.length, 7), bytes]);
}

/** An integer with an N-bit prefix (RFC 7541 5.1), the prefix's other bits 0 (no Huffman). */
function prefixedInteger(value: number, bits: number): Buffer {
    const max = 2 ** bits - 1;
    if (value < max) {
        return Buffer.from([value]);
    }

    const bytes = [max];
    let rest = value - max;
    while (rest >= 128) {
        bytes.push((rest % 128) + 128);
        rest = Math.floor(rest / 128);
    }

    bytes.push(rest);
    return Buffer.from(bytes);
}

export interface RawHttp2Server {
    readonly url: string;
    readonly port: number;
    readonly connections: RawConnection[];
    openConnections(): number;
    close(): Promise<void>;
}

/**
 * Starts a raw HTTP/2 server: over TLS (ALPN h2, the test certificate) unless `h2c`. Each connection
 * is handed to `onConnection` once its client may speak (TLS done), before any frame is sent: a test
 * that wants the usual start calls `connection.settings()`.
 */
export async function startRawHttp2(
    onConnection: (connection: RawConnection) => void,
    options: RawConnectionOptions & { h2c?: boolean } = {}
): Promise<RawHttp2Server> {
    const connections: RawConnection[] = [];
    const accept = (socket: Socket) => {
        const connection = new RawConnection(socket, options);
        connections.push(connection);
        onConnection(connection);
    };
    const server: Server = options.h2c
        ? createTcpServer(accept)
        : createTlsServer({ ...selfSignedCertificate(), ALPNProtocols: ['h2'] }, accept);
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `${options.h2c ? 'http' : 'https'}://127.0.0.1:${port}`,
        port,
        connections,
        openConnections: () => connections.filter((connection) => !connection.socket.destroyed).length,
        close: () =>
            new Promise<void>((resolve) => {
                for (const connection of connections) {
                    connection.socket.destroy();
                }

                server.close(() => resolve());
            })
    };
}
