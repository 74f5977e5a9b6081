import * as Fs from 'node:fs';
import * as Net from 'node:net';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type * as Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, createServer, type Fixture } from './helpers.js';

/*
 * Slow clients that pipeline: a response queued behind another on its connection is not being sent,
 * so it holds no descriptor and no buffer until its turn comes (README, "Static files").
 */

const size = 4 * 1024 * 1024;
const connections = 60;
const mib = 1024 * 1024;

let fixture: Fixture;
let server: Hapi.Server;
let path: string;
/** The response of the last request for queued.bin that reached `onPreResponse` (hapi prepares a response when its handler returns). */
let queuedResponse: Hapi.ResponseObject | null = null;

beforeAll(async () => {
    fixture = createFixture();
    path = join(fixture.root, 'pipelined.bin');
    Fs.writeFileSync(path, Buffer.alloc(size, 'pipelined'));
    server = await createServer({ routes: { files: { relativeTo: fixture.root } } });
    server.route({ method: 'GET', path: '/file/{name}', handler: (request, h) => h.file(String(request.params.name)) });
    server.ext('onPreResponse', (request, h) => {
        if (request.path === '/file/queued.bin') {
            queuedResponse = request.response as Hapi.ResponseObject;
        }

        return h.continue;
    });
    await server.start();
});

afterAll(async () => {
    await server.stop();
    fixture.remove();
});

/** Descriptors of this process open on `file`. */
function descriptorsOn(file: string): number {
    let count = 0;
    for (const fd of Fs.readdirSync('/proc/self/fd')) {
        try {
            if (Fs.readlinkSync(`/proc/self/fd/${fd}`) === file) {
                count += 1;
            }
        } catch {}
    }

    return count;
}

/** A full garbage collection, so that what is measured is what is held. */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** Bytes of Buffers alive in this process after a full collection. */
function heldBuffers(): number {
    collect();
    return process.memoryUsage().arrayBuffers;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the next request for queued.bin has its response prepared: its headers are set
 * (`last-modified` among them) and describe the file as it was then. What comes after (`marshal`,
 * which lets the descriptor go while the response waits its turn) is waited for by what it does.
 */
async function queuedPrepared(previous: Hapi.ResponseObject | null): Promise<void> {
    for (let waited = 0; waited < 10_000; waited += 20) {
        if (queuedResponse !== previous && queuedResponse?.headers['last-modified'] !== undefined) {
            return;
        }

        await pause(20);
    }

    throw new Error('the request for queued.bin was never prepared');
}

/**
 * Waits until `measure` gives about the same value (within `tolerance`) three times 100 ms apart, or
 * 10 s passed, and returns it: on a loaded machine the kernel's buffers fill slowly.
 */
async function settled(measure: () => number, tolerance = 0): Promise<number> {
    let last = measure();
    for (let round = 0, still = 0; round < 100 && still < 3; ++round) {
        await pause(100);
        const now = measure();
        still = Math.abs(now - last) <= tolerance ? still + 1 : 0;
        last = now;
    }

    return last;
}

describe('pipelined GETs on connections whose clients do not read', () => {
    it('hold at most one descriptor per connection: the queued response opens its file only when its turn comes', async () => {
        const baselineBytes = heldBuffers();
        const sockets: Net.Socket[] = [];
        try {
            await Promise.all(
                Array.from(
                    { length: connections },
                    () =>
                        new Promise<void>((resolve, reject) => {
                            const socket = Net.connect(server.info.port as number, '127.0.0.1', () => {
                                socket.pause();
                                const get = 'GET /file/pipelined.bin HTTP/1.1\r\nhost: localhost\r\n\r\n';
                                socket.write(get + get, () => resolve());
                            });
                            socket.once('error', reject);
                            sockets.push(socket);
                        })
                )
            );
            const held = await settled(() => descriptorsOn(path));
            // What stays once every response is stalled: chunks still being read come and go before.
            const heldBytes = (await settled(heldBuffers, 64 * 1024)) - baselineBytes;
            console.log(
                `pipelined: ${held} descriptors for ${connections} connections, buffers +${(heldBytes / mib).toFixed(2)} MiB (${(heldBytes / connections / mib).toFixed(3)} MiB per connection)`
            );
            expect(held).toBeLessThanOrEqual(connections);
            expect(heldBytes / connections).toBeLessThan(0.3 * mib);
        } finally {
            for (const socket of sockets) {
                socket.destroy();
            }
        }

        expect(await settled(() => descriptorsOn(path))).toBe(0);
    }, 60_000);

    it('three pipelined multipart (several ranges) GETs: the queued ones wait their turn too, one descriptor per connection', async () => {
        const count = 20;
        const sockets: Net.Socket[] = [];
        try {
            await Promise.all(
                Array.from(
                    { length: count },
                    () =>
                        new Promise<void>((resolve, reject) => {
                            const socket = Net.connect(server.info.port as number, '127.0.0.1', () => {
                                socket.pause();
                                // Two 2 MiB parts (all but 4 KiB of the file): streamed from the descriptor, not read at once.
                                const get =
                                    'GET /file/pipelined.bin HTTP/1.1\r\nhost: localhost\r\n' +
                                    'range: bytes=0-2097151,2101248-4194303\r\n\r\n';
                                socket.write(get + get + get, () => resolve());
                            });
                            socket.once('error', reject);
                            sockets.push(socket);
                        })
                )
            );
            const held = await settled(() => descriptorsOn(path));
            expect(held).toBeGreaterThan(0);
            expect(held).toBeLessThanOrEqual(count);
        } finally {
            for (const socket of sockets) {
                socket.destroy();
            }
        }

        expect(await settled(() => descriptorsOn(path))).toBe(0);
    }, 60_000);

    it('sends the queued response whole once its turn comes, and a 503 to retry when its file was replaced meanwhile', async () => {
        const queued = join(fixture.root, 'queued.bin');
        const first = Buffer.alloc(2 * mib, 'first');
        Fs.writeFileSync(queued, first);
        const exchange = async (replace: boolean): Promise<string> => {
            const socket = Net.connect(server.info.port as number, '127.0.0.1');
            socket.pause();
            const chunks: Buffer[] = [];
            socket.on('data', (chunk: Buffer) => chunks.push(chunk));
            const ended = new Promise((resolve) => socket.on('close', resolve));
            const seen = queuedResponse;
            socket.write(
                'GET /file/pipelined.bin HTTP/1.1\r\nhost: localhost\r\n\r\n' +
                    'GET /file/queued.bin HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n'
            );
            // The second response waits behind the first, which the client does not read yet.
            await queuedPrepared(seen);
            if (replace) {
                Fs.writeFileSync(`${queued}.next`, Buffer.alloc(2 * mib, 'second'));
                Fs.renameSync(`${queued}.next`, queued);
            }

            socket.resume();
            await ended;
            return Buffer.concat(chunks).toString('latin1');
        };

        const whole = await exchange(false);
        const [, second = ''] = whole.split(/(?=HTTP\/1\.1 )/).filter((part) => part.startsWith('HTTP/1.1'));
        expect(second.startsWith('HTTP/1.1 200')).toBe(true);
        expect(second.endsWith(first.toString('latin1'))).toBe(true);

        const replaced = await exchange(true);
        const responses = replaced.split(/(?=HTTP\/1\.1 )/).filter((part) => part.startsWith('HTTP/1.1'));
        expect(responses[0]!.startsWith('HTTP/1.1 200')).toBe(true);
        expect(responses[0]!.length).toBeGreaterThan(size);
        expect(responses[1]!.startsWith('HTTP/1.1 503')).toBe(true);
        expect(responses[1]!.toLowerCase()).toContain('retry-after: 1\r\n');
        expect(responses[1]!.toLowerCase()).not.toContain('etag');
        expect(await settled(() => descriptorsOn(queued))).toBe(0);
    });

    it('lets a queued response go without opening its file when the connection closes before its turn', async () => {
        const queued = join(fixture.root, 'queued.bin');
        Fs.writeFileSync(queued, Buffer.alloc(2 * mib, 'queued'));
        const responded = new Promise<number>((resolve) => {
            const onResponse = (request: Hapi.Request): void => {
                if (request.path === '/file/queued.bin') {
                    server.events.removeListener('response', onResponse);
                    resolve(Date.now());
                }
            };
            server.events.on('response', onResponse);
        });
        const socket = Net.connect(server.info.port as number, '127.0.0.1');
        socket.pause();
        const get = (name: string) => `GET /file/${name} HTTP/1.1\r\nhost: localhost\r\n\r\n`;
        const seen = queuedResponse;
        socket.write(get('pipelined.bin') + get('queued.bin'));
        await queuedPrepared(seen);
        // Prepared, then marshalled: it lets its descriptor go while it waits (it would hold it until the client reads).
        await expect.poll(() => descriptorsOn(queued)).toBe(0);
        const closed = Date.now();
        socket.destroy();
        // hapi finishes the queued request (no hang), and nothing was left open.
        const ended = await Promise.race([responded, pause(5000).then(() => -1)]);
        expect(ended, 'the queued request ended').toBeGreaterThanOrEqual(closed);
        expect(await settled(() => descriptorsOn(queued) + descriptorsOn(path))).toBe(0);
    });
});
