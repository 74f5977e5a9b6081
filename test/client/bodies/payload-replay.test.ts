import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LookupFunction } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayloadReplay, streamReplayLimit } from '../../../src/client/bodies/payload-replay.js';
import { client } from '../../../src/client/index.js';
import { isHttpError } from '../../../src/errors/index.js';
import { body, type Echo, refusedUrl, startHttp, type TestServer } from '../helpers.js';

let server: TestServer;

// /early/<status>: answers with a redirect to /target before reading a byte of the body.
// /read/<status>: reads the whole body, then redirects to /target. Anything else echoes.
beforeAll(async () => {
    server = await startHttp(async (req: IncomingMessage, res: ServerResponse) => {
        const [, kind, status] = (req.url ?? '/').split('/');
        if (kind === 'early') {
            res.writeHead(Number(status), { location: '/target', connection: 'close' }).end();
            return;
        }

        // Some requests here are cut on purpose: the server just drops them.
        const received = await body(req).catch(() => undefined);
        if (received === undefined) {
            return;
        }

        if (kind === 'read') {
            res.writeHead(Number(status), { location: '/target' }).end();
            return;
        }

        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, payload: received }));
    });
});

afterAll(async () => {
    await server.close();
});

function listeners(stream: Readable): number[] {
    return ['data', 'end', 'error', 'readable'].map((name) => stream.listenerCount(name));
}

function collect(stream: PassThrough): Promise<string> {
    return body(stream as unknown as IncomingMessage);
}

describe('Stream payloads: sent only once connected, re-sent on 307/308 (payload-replay.ts)', () => {
    for (const status of [307, 308]) {
        it(`a ${status} received after the body re-sends the whole stream to the new location`, async () => {
            const payload = Readable.from(['first ', 'second ', 'third']);
            const { payload: echoed } = await client.put<Echo>(`${server.url}/read/${status}`, {
                payload,
                redirects: 1,
                json: true
            });
            expect(echoed).toMatchObject({ method: 'PUT', url: '/target', payload: 'first second third' });
            expect(listeners(payload)).toEqual([0, 0, 0, 0]);
        });

        it(`a ${status} received before the body was read still gets the whole stream to the new location`, async () => {
            const chunks = Array.from({ length: 64 }, (_, i) => `${String(i).padStart(4, '0')}`.repeat(256));
            const { payload: echoed } = await client.post<Echo>(`${server.url}/early/${status}`, {
                payload: Readable.from(chunks),
                redirects: 1,
                json: true
            });
            expect(echoed.payload).toBe(chunks.join(''));
        });
    }

    it('a stream larger than the replay limit is sent in full when no redirect asks for it again', async () => {
        const big = Buffer.alloc(streamReplayLimit + 10, 'a');
        const { payload } = await client.post<Echo>(server.url, {
            payload: Readable.from([big]),
            redirects: 2,
            json: true
        });
        expect(payload.payload.length).toBe(big.length);
    });

    it('a 307 for a stream larger than the replay limit rejects with a 500 that says why', async () => {
        const payload = Readable.from([Buffer.alloc(streamReplayLimit), Buffer.alloc(1)]);
        const err = await client
            .post(`${server.url}/read/307`, { payload, redirects: 1 })
            .catch((error: unknown) => error);
        expect(isHttpError(err, 500)).toBe(true);
        expect((err as Error).message).toBe(
            `Cannot send a stream payload again: it is larger than the ${streamReplayLimit} bytes kept for a re-send (send a Buffer instead)`
        );
        expect(listeners(payload)).toEqual([0, 0, 0, 0]);
    });

    it('a stream is not read at all when the connection fails: the caller can still send it', async () => {
        const payload = Readable.from(['kept for the caller']);
        await expect(client.post(refusedUrl, { payload })).rejects.toMatchObject({
            data: { code: 'ECONNREFUSED' }
        });
        expect(payload.readableDidRead).toBe(false);
        expect(listeners(payload)).toEqual([0, 0, 0, 0]);
        const { payload: echoed } = await client.post<Echo>(server.url, { payload, json: true });
        expect(echoed.payload).toBe('kept for the caller');
    });

    it('a stream that fails before the connection exists rejects the request with that error', async () => {
        const payload = new Readable({ read() {} });
        const failure = Object.assign(new Error('source gone'), { code: 'EIO' });
        // The name resolves only after the stream failed, so no connection exists when it does.
        const lookup = ((_host: string, options: { all?: boolean }, callback: Function) => {
            payload.destroy(failure);
            setImmediate(() =>
                options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)
            );
        }) as unknown as LookupFunction;
        const err = await client
            .post(`http://stream.invalid:${server.port}/`, { payload, lookup })
            .catch((error: unknown) => error);
        expect(isHttpError(err, 502)).toBe(true);
        expect((err as { data: unknown }).data).toBe(failure);
        expect((err as Error).cause).toBe(failure);
        expect(payload.listenerCount('error')).toBe(0);
    });

    it('a stream already read to its end is sent as an empty body, not waited for', async () => {
        const payload = Readable.from(['spent']);
        for await (const _chunk of payload) {
            // The caller consumed it.
        }

        const { payload: echoed } = await client.post<Echo>(server.url, { payload, json: true });
        expect(echoed.payload).toBe('');
    });

    it('a stream destroyed before it is sent rejects instead of hanging', async () => {
        const payload = new Readable({ read() {} });
        payload.destroy();
        await expect(client.post(server.url, { payload })).rejects.toMatchObject({
            message: 'Client request error: The stream payload was destroyed before it was sent',
            output: { statusCode: 502 }
        });
    });

    it('a stream that fails while it is sent rejects with that error and leaves no listener', async () => {
        let sent = 0;
        const failure = Object.assign(new Error('disk gone'), { code: 'EIO' });
        const payload = new Readable({
            read() {
                sent++;
                if (sent === 3) {
                    this.destroy(failure);
                } else {
                    this.push(Buffer.alloc(1024));
                }
            }
        });
        const err = await client.post(server.url, { payload, redirects: 1 }).catch((error: unknown) => error);
        expect((err as { data: unknown }).data).toBe(failure);
        expect(listeners(payload)).toEqual([0, 0, 0, 0]);
    });
});

describe('PayloadReplay: the API a later hop uses to send a stream payload again', () => {
    it('sends the whole stream to each target in turn, from the copy then from the stream', async () => {
        const source = new PassThrough();
        const replay = new PayloadReplay(source, 1024, () => {});
        const first = new PassThrough();
        replay.sendTo(first);
        source.write('ab');
        await new Promise((resolve) => setImmediate(resolve));
        // The first target is abandoned half way (as a redirected request would be).
        replay.detach();
        expect(replay.replayProblem()).toBeUndefined();
        const second = new PassThrough();
        replay.sendTo(second);
        source.end('cd');
        expect(await collect(second)).toBe('abcd');
        const third = new PassThrough();
        replay.sendTo(third);
        expect(await collect(third)).toBe('abcd');
        replay.dispose();
        expect(listeners(source)).toEqual([0, 0, 0, 0]);
    });

    it('reads nothing until sendTo(), so an unread stream can always be sent', () => {
        const source = Readable.from(['x']);
        const replay = new PayloadReplay(source, 0, () => {});
        expect(replay.replayProblem()).toBeUndefined();
        expect(source.readableDidRead).toBe(false);
        replay.dispose();
        expect(listeners(source)).toEqual([0, 0, 0, 0]);
    });

    it('with limit 0 keeps no copy: once read, the stream cannot be sent again', async () => {
        const source = Readable.from(['x']);
        const replay = new PayloadReplay(source, 0, () => {});
        const target = new PassThrough();
        replay.sendTo(target);
        expect(await collect(target)).toBe('x');
        expect(replay.replayProblem()?.message).toMatch(/larger than the 0 bytes kept/);
        replay.sendTo(new PassThrough());
        replay.dispose();
    });

    it('reports the stream error once, then refuses to send with that error as cause', () => {
        const source = new PassThrough();
        const errors: Error[] = [];
        const replay = new PayloadReplay(source, 10, (err) => errors.push(err));
        const failure = new Error('broken');
        source.emit('error', failure);
        source.emit('error', new Error('again'));
        expect(errors).toEqual([failure]);
        const problem = replay.replayProblem();
        expect(problem?.message).toBe('The stream payload failed: broken');
        expect(problem?.cause).toBe(failure);
        replay.dispose();
        expect(source.listenerCount('error')).toBe(0);
    });

    it('waits for a slow target (backpressure) and stops when the target closes', async () => {
        const source = new PassThrough();
        const replay = new PayloadReplay(source, 1 << 20, () => {});
        const target = new PassThrough({ highWaterMark: 1 });
        replay.sendTo(target);
        source.write(Buffer.alloc(64));
        source.write(Buffer.alloc(64));
        await new Promise((resolve) => setImmediate(resolve));
        expect(target.listenerCount('drain')).toBe(1);
        target.destroy();
        await new Promise((resolve) => setImmediate(resolve));
        expect(target.listenerCount('drain')).toBe(0);
        expect(source.isPaused()).toBe(true);
        replay.dispose();
        expect(listeners(source)).toEqual([0, 0, 0, 0]);
    });
});
