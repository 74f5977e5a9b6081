import type { IncomingMessage, ServerResponse } from 'node:http';
import * as http2 from 'node:http2';
import { type AddressInfo, createServer } from 'node:net';
import { selfSignedCertificate, startHttps, type TestServer } from '../../client/helpers.js';
import { type Http2TestServer, startHttp2 } from '../../client/wire/http2/servers.js';
import { type Answer, answerBody, type Protocol, type Reply, type Step } from './script.js';

/**
 * A parity scenario's script played by a real server on loopback (script.ts): `node:https` for
 * HTTP/1.1, `node:http2` over TLS for HTTP/2, with the test certificate; or, for a refused
 * connection, a port nothing listens on. Each fault is made as a server makes it: the connection
 * destroyed, a GOAWAY then the session's end, a stream reset with REFUSED_STREAM.
 */
export interface RealOrigin {
    readonly url: string;
    close(): Promise<void>;
}

export async function startRealOrigin(
    steps: readonly Step[],
    protocol: Protocol,
    refused: boolean
): Promise<RealOrigin> {
    if (refused) {
        return { url: `https://127.0.0.1:${await closedPort()}`, close: async () => {} };
    }

    const left = steps.map((step) => step.times ?? 1);
    const stepFor = (method: string, path: string): Answer => {
        const index = steps.findIndex(
            (step, at) => (left[at] as number) > 0 && (step.method ?? 'GET') === method && step.path === path
        );
        if (index === -1) {
            throw new Error(`The script has no step for ${method} ${path}`);
        }

        left[index] = (left[index] as number) - 1;
        return (steps[index] as Step).answer;
    };

    if (protocol === '1.1') {
        const server: TestServer = await startHttps((req, res) => {
            void playHttp1(stepFor(req.method as string, req.url as string), req, res);
        });
        selfSignedCertificate();
        return { url: server.url, close: () => server.close() };
    }

    const server: Http2TestServer = await startHttp2(undefined);
    server.server.on('stream', (stream, headers) => {
        void playHttp2(stepFor(String(headers[':method']), String(headers[':path'])), stream, headers, server);
    });
    return { url: server.url, close: () => server.close() };
}

async function playHttp1(answer: Answer, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const received = await bodyOf(req);
    await wait(answer.delay);
    if ('fault' in answer) {
        req.socket.destroy();
        return;
    }

    const { body, headers } = echoed(answer, req.method as string, received);
    res.statusCode = answer.status;
    for (const [name, value] of Object.entries(headers)) {
        res.setHeader(name, value as string | string[]);
    }

    if (answer.cutAfter !== undefined && body !== undefined) {
        res.setHeader('content-length', body.length);
        res.flushHeaders();
        res.write(body.subarray(0, answer.cutAfter));
        setTimeout(() => req.socket.destroy(), 20);
        return;
    }

    if (answer.bodyDelay !== undefined) {
        if (body !== undefined) {
            res.setHeader('content-length', body.length);
        }

        res.flushHeaders();
        await wait(answer.bodyDelay);
    }

    res.end(body);
}

async function playHttp2(
    answer: Answer,
    stream: http2.ServerHttp2Stream,
    requestHeaders: http2.IncomingHttpHeaders,
    server: Http2TestServer
): Promise<void> {
    const received = await bodyOf(stream);
    await wait(answer.delay);
    if (stream.destroyed) {
        return;
    }

    const session = stream.session as http2.ServerHttp2Session;
    const connection = () => server.connections[server.sessionOf(stream)];
    if ('fault' in answer) {
        if (answer.fault === 'refused-stream') {
            stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        } else if (answer.fault === 'goaway') {
            session.goaway(http2.constants.NGHTTP2_NO_ERROR, Math.max(0, (stream.id as number) - 2));
            setTimeout(() => session.destroy(), 20);
        } else {
            connection()?.destroy();
        }

        return;
    }

    const { body, headers } = echoed(answer, String(requestHeaders[':method']), received);
    const method = String(requestHeaders[':method']);
    const bodyless = method === 'HEAD' || answer.status === 204 || answer.status === 304;
    const fields: http2.OutgoingHttpHeaders = { ':status': answer.status, ...headers };
    if (!bodyless) {
        // What the mock adds, as a Node.js HTTP/1.1 server does (the HTTP/2 core adds no length of itself).
        fields['content-length'] = body?.length ?? 0;
    }

    stream.respond(fields, { endStream: bodyless || body === undefined });
    if (bodyless || body === undefined) {
        return;
    }

    if (answer.cutAfter !== undefined) {
        stream.write(body.subarray(0, answer.cutAfter));
        setTimeout(() => connection()?.destroy(), 20);
        return;
    }

    await wait(answer.bodyDelay);
    if (!stream.destroyed) {
        stream.end(body);
    }
}

/** The answer's body and fields; an echo's is the request's method and body. */
function echoed(answer: Reply, method: string, received: Buffer) {
    if (answer.echo) {
        return { body: Buffer.from(`${method} ${received}`), headers: { ...answer.headers } };
    }

    return answerBody(answer);
}

async function bodyOf(stream: AsyncIterable<Buffer>): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) {
        chunks.push(chunk);
    }

    return Buffer.concat(chunks);
}

function wait(ms: number | undefined): Promise<void> {
    return ms === undefined || ms === 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

/** A loopback port nothing listens on (one just closed). */
function closedPort(): Promise<number> {
    return new Promise((resolve) => {
        const probe = createServer();
        probe.listen(0, '127.0.0.1', () => {
            const { port } = probe.address() as AddressInfo;
            probe.close(() => resolve(port));
        });
    });
}
