/**
 * The harness of the differential suite: real loopback servers (http, https, unix socket) that log
 * what they receive, and the normalisation of what a caller gets, so that one scenario run with
 * tracewire's client and with @hapi/wreck (a black-box oracle) gives two comparable records.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { selfSignedCertificate } from '../client/helpers.js';

/** What a server received: one entry per request. */
export interface Received {
    method: string;
    path: string;
    headers: Record<string, string | string[] | undefined>;
    body: string;
}

export interface Servers {
    http: string;
    https: string;
    socketPath: string;
    /**
     * A port that refuses connections, the same for both clients: 1, where nothing listens (binding it
     * needs privileges). Not a port freed by closing a server: another worker's listen(0) can take it.
     */
    closedPort: number;
    received: Received[];
    close(): Promise<void>;
}

const encoders: Record<string, (body: string) => Buffer> = {
    gzip: (body) => gzipSync(body),
    'x-gzip': (body) => gzipSync(body),
    deflate: (body) => deflateSync(body),
    br: (body) => brotliCompressSync(body),
    // Content-Encoding lists name the codings in the order they were applied.
    'gzip, identity': (body) => gzipSync(body),
    'deflate, gzip': (body) => gzipSync(deflateSync(body))
};

/**
 * The routes every server answers (after reading the whole request body):
 * - `/redirect/<status>?to=<location>`: that status, with that location (none without `to`), and a body of 5 bytes.
 * - `/reply/<status>?type=<content-type>&body=<text>&encoding=<gzip|deflate|br|x-gzip|a list>&label=0`:
 *   that status and body, compressed by `encoding` (labelled in content-encoding unless `label=0`).
 * - `/slow/<ms>`: 'slow' after that many milliseconds.
 * - `/slow-redirect/<ms>?to=<location>`: a 302 to that location after that many milliseconds.
 * - `/partial`: half of a declared body, then nothing.
 * - `/cut`: closes the connection without an answer.
 * - anything else: 200 with the JSON `{ method, url, body }`.
 */
function route(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, kind, value] = url.pathname.split('/');
    switch (value !== undefined && Number.isNaN(Number(value)) ? 'echo' : kind) {
        case 'redirect': {
            const to = url.searchParams.get('to');
            // With its length, as servers send a redirect's body (nginx, Express's res.redirect()).
            const headers = { 'content-length': 5, ...(to === null ? {} : { location: to }) };
            res.writeHead(Number(value), headers).end('moved');
            return;
        }

        case 'reply': {
            const type = url.searchParams.get('type');
            const encoding = url.searchParams.get('encoding');
            const text = url.searchParams.get('body') ?? '';
            const headers: Record<string, string> = {};
            if (type !== null) {
                headers['content-type'] = type;
            }

            if (encoding !== null && url.searchParams.get('label') !== '0') {
                headers['content-encoding'] = encoding;
            }

            res.writeHead(Number(value), headers).end(encoding === null ? text : encoders[encoding]!(text));
            return;
        }

        case 'slow-redirect':
            setTimeout(() => res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end(), Number(value));
            return;
        case 'slow':
            setTimeout(() => res.end('slow'), Number(value)).unref();
            return;
        case 'partial-cut':
            res.writeHead(200, { 'content-length': 100 }).write('half', () => req.socket.destroy());
            return;
        case 'echo-large':
            res.writeHead(200);
            res.write(body);
            res.end(body);
            return;
        case 'partial':
            res.writeHead(200, { 'content-length': 100 }).write('half');
            return;
        case 'cut':
            req.socket.destroy();
            return;
        default:
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ method: req.method, url: req.url, body }));
    }
}

function handler(received: Received[]): http.RequestListener {
    return (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('error', () => {});
        req.on('end', () => {
            const body = Buffer.concat(chunks).toString();
            received.push({ method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers }, body });
            route(req, res, body);
        });
    };
}

async function listen(server: http.Server, where: number | string): Promise<void> {
    await new Promise<void>((resolve) => {
        if (typeof where === 'string') {
            server.listen(where, resolve);
        } else {
            server.listen(where, '127.0.0.1', resolve);
        }
    });
}

/** Starts the three servers, sharing one log of what they receive. */
export async function startServers(): Promise<Servers> {
    const received: Received[] = [];
    const plain = http.createServer(handler(received));
    const secure = https.createServer(selfSignedCertificate(), handler(received));
    const unix = http.createServer(handler(received));
    const dir = mkdtempSync(join(tmpdir(), 'tracewire-conformance-'));
    const socketPath = join(dir, 'server.sock');
    await Promise.all([listen(plain, 0), listen(secure, 0), listen(unix, socketPath)]);
    return {
        http: `http://127.0.0.1:${(plain.address() as AddressInfo).port}`,
        https: `https://127.0.0.1:${(secure.address() as AddressInfo).port}`,
        socketPath,
        closedPort: 1,
        received,
        close: async () => {
            for (const server of [plain, secure, unix]) {
                server.closeAllConnections();
                await new Promise((resolve) => server.close(resolve));
            }

            rmSync(dir, { recursive: true, force: true });
        }
    };
}

/** The failure kinds both libraries share, whatever their wording. */
const messageClasses: Array<[RegExp, string]> = [
    [/^Response Error:/, 'response error'],
    [/Client request timeout/, 'request timeout'],
    [/Client request aborted|socket hang up/, 'request aborted'],
    [/Client request error/, 'request error'],
    [/Maximum redirections reached/, 'redirect limit'],
    [/redirection without location/, 'redirect without location'],
    [/Invalid redirect/, 'invalid redirect'],
    [/Payload stream closed prematurely|Payload stream error/, 'payload stream'],
    [/Maximum payload size reached|Payload content length greater than maximum allowed/, 'payload too large'],
    [/non-JSON|not JSON compatible/, 'not json'],
    [/Invalid JSON|JSON/, 'invalid json'],
    [/read timeout|Client read timeout/i, 'read timeout'],
    [/decompress|incorrect header check|unexpected end of file/i, 'decompression'],
    [/Cannot follow|stream payload/, 'stream redirect']
];

export function messageClass(message: string): string {
    for (const [pattern, name] of messageClasses) {
        if (pattern.test(message)) {
            return name;
        }
    }

    return `other: ${message}`;
}

/** What the caller got, in a form both libraries can be compared in. */
export type Outcome =
    | { value: { statusCode: number | undefined; payload: unknown } }
    | { error: { status: number | undefined; class: string; data: Record<string, unknown> | string | undefined } }
    | { thrown: string };

function describePayload(payload: unknown): unknown {
    return Buffer.isBuffer(payload) ? { buffer: payload.toString() } : payload;
}

function describeData(data: unknown): Record<string, unknown> | string | undefined {
    if (data === undefined || data === null) {
        return undefined;
    }

    if (data instanceof Error) {
        // An underlying error: its code is what callers branch on.
        return `error ${(data as Error & { code?: string }).code ?? data.name}`;
    }

    if (typeof data !== 'object') {
        return String(data);
    }

    const described: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
        if (key === 'res') {
            described.res = value === undefined ? undefined : 'IncomingMessage';
        } else if (key === 'payload') {
            described.payload = describePayload(value);
        } else if (key === 'headers') {
            described.headers = 'headers';
        } else {
            described[key] = value;
        }
    }

    return described;
}

/** An outcome from a settled promise (or a synchronous throw). */
function isRefusedOption(err: Error & { output?: unknown; code?: string }): boolean {
    return (
        err instanceof TypeError ||
        err.name === 'AssertionError' ||
        err.code === 'ERR_ASSERTION' ||
        (err.output === undefined && /\boptions?[. ]/i.test(err.message))
    );
}

export function outcomeOf(settled: { value?: unknown; error?: unknown; thrown?: unknown }): Outcome {
    if ('thrown' in settled) {
        const thrown = settled.thrown as Error;
        return { thrown: isRefusedOption(thrown) ? 'invalid option' : messageClass(thrown.message) };
    }

    if ('error' in settled) {
        const err = settled.error as Error & { output?: { statusCode: number }; data?: unknown; code?: string };
        if (isRefusedOption(err)) {
            // A refused option: an assertion upstream, a TypeError (decorated as a 500) here; compared as one kind.
            return { error: { status: undefined, class: 'invalid option', data: undefined } };
        }

        const kind = messageClass(err.message);
        if (kind === 'decompression') {
            // A bare zlib error upstream, a 502 HttpError here: compared as one kind (the shapes are asserted apart).
            return { error: { status: undefined, class: kind, data: undefined } };
        }

        // Upstream decorates the system error itself (err.code); tracewire keeps it as err.data (err.data.code).
        const data = err.data ?? (err.code === undefined ? undefined : err);
        return { error: { status: err.output?.statusCode, class: kind, data: describeData(data) } };
    }

    const value = settled.value as { statusCode?: number; res?: http.IncomingMessage; payload?: unknown };
    if (value !== null && typeof value === 'object' && 'res' in value && 'payload' in value) {
        return { value: { statusCode: value.res?.statusCode, payload: describePayload(value.payload) } };
    }

    return { value: { statusCode: undefined, payload: describePayload(value) } };
}

/** The received requests with the headers that legitimately differ between two clients removed. */
export function comparableReceived(received: Received[]): Received[] {
    return received.map((entry) => {
        const { connection: _connection, ...headers } = entry.headers;
        return { ...entry, headers };
    });
}
