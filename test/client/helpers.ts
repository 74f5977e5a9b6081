import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MockedRequest, MockResponse } from '../../src/testing/index.js';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface TestServer {
    /** Base URL, e.g. `http://127.0.0.1:1234`. */
    url: string;
    port: number;
    server: http.Server | https.Server;
    close(): Promise<void>;
}

async function listen(server: http.Server | https.Server, scheme: string): Promise<TestServer> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `${scheme}://127.0.0.1:${port}`,
        port,
        server,
        close: () => closeServer(server)
    };
}

function closeServer(server: http.Server): Promise<void> {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
}

/** A loopback HTTP server. */
export function startHttp(handler: Handler): Promise<TestServer> {
    return listen(http.createServer(handler), 'http');
}

/** A self-signed certificate for 127.0.0.1/localhost, made with the openssl CLI once per test file. */
let certificate: { key: Buffer; cert: Buffer } | undefined;
export function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
    if (certificate === undefined) {
        const dir = mkdtempSync(join(tmpdir(), 'tracewire-cert-'));
        try {
            execFileSync(
                'openssl',
                [
                    'req',
                    '-x509',
                    // An EC key: generated in milliseconds, where RSA takes long on a busy machine.
                    '-newkey',
                    'ec',
                    '-pkeyopt',
                    'ec_paramgen_curve:prime256v1',
                    '-nodes',
                    '-keyout',
                    join(dir, 'key.pem'),
                    '-out',
                    join(dir, 'cert.pem'),
                    '-days',
                    '1',
                    '-subj',
                    '/CN=localhost',
                    '-addext',
                    'subjectAltName=DNS:localhost,IP:127.0.0.1'
                ],
                { stdio: 'ignore' }
            );
            certificate = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    }

    return certificate;
}

/** A loopback HTTPS server with the self-signed certificate. */
export function startHttps(handler: Handler): Promise<TestServer> {
    return listen(https.createServer(selfSignedCertificate(), handler), 'https');
}

/** An HTTP server on a UNIX socket in a temp dir. */
export async function startUnix(handler: Handler): Promise<{ socketPath: string; close(): Promise<void> }> {
    const dir = mkdtempSync(join(tmpdir(), 'tracewire-sock-'));
    const socketPath = join(dir, 'server.sock');
    const server = http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    return {
        socketPath,
        close: async () => {
            await closeServer(server);
            rmSync(dir, { recursive: true, force: true });
        }
    };
}

/** Reads a request body as a string. */
export async function body(req: http.IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
        chunks.push(chunk as Buffer);
    }

    return Buffer.concat(chunks).toString();
}

/** Replies with JSON describing the request: method, url, headers and body. */
export const echo: Handler = async (req, res) => {
    const payload = await body(req);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, payload }));
};

export interface Echo {
    method: string;
    url: string;
    headers: http.IncomingHttpHeaders;
    payload: string;
}

/** Open sockets (busy and idle) of an agent. */
export function socketCount(agent: http.Agent): number {
    let count = 0;
    for (const list of [...Object.values(agent.sockets), ...Object.values(agent.freeSockets)]) {
        count += list?.length ?? 0;
    }

    return count;
}

/** Active timers of the process, to assert none is left behind. */
export function timerCount(): number {
    return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
}

/**
 * A URL whose connection is refused: nothing listens on port 1 of 127.0.0.1 (binding it needs
 * privileges). Not the port of a server just closed: it goes back to the ephemeral range, where the
 * listen(0) of a test server in another worker can take it, and the "refused" request connects.
 */
export const refusedUrl = 'http://127.0.0.1:1/';

/** Lets pending socket closes and nextTicks run. */
export function settle(ms = 20): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * What `echo` answers, as a reply of tracewire/testing's mock (docs/testing.md): the request's method,
 * path with its query, headers (as the mock received them) and body, as JSON.
 */
export function echoReply(request: MockedRequest): MockResponse {
    return {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
            method: request.method,
            url: request.path,
            headers: request.headers,
            payload: request.text()
        })
    };
}
