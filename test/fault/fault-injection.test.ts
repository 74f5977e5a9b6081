import type { Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestUri } from '../../src/client/contract/types.js';
import { Client } from '../../src/client/index.js';
import { isHttpError } from '../../src/errors/index.js';
import { timerCount } from '../client/helpers.js';
import { seeded } from '../seeded.js';
import { head, type RawOrigin, startRawOrigin } from './raw-origin.js';

/**
 * A seeded fault-injection run: a thousand requests, 50 at a time, against origins that misbehave
 * the ways real networks and servers do, with timeouts, retries and redirects mixed in. Whatever
 * happens, every promise settles, every failure is an HttpError saying what went wrong, every
 * success carries exactly the bytes sent, every hop gets one `response` event, and nothing (socket,
 * timer, listener) is left behind. `TRACEWIRE_FAULT_SEED=<n>` replays another mix; a failure names
 * the seed.
 */

const seed = Number(process.env.TRACEWIRE_FAULT_SEED ?? 20);
// Every kind of fault is met within the first ~210 requests of seed 20, each ~70 times in 1000; 2500
// covered one more line of the client (a memo's clearing, tested in test/common) and took 2.5x as long.
const requestCount = 1000;
const concurrency = 50;

const faults = [
    'ok',
    'ok-chunked',
    'gzip',
    'reset-before-headers',
    'reset-mid-body',
    'stall',
    'stall-body',
    'close-silent',
    'broken-chunked',
    'short-body',
    'corrupt-gzip',
    'unavailable-once',
    'redirect',
    'http10-until-close'
] as const;
type Fault = (typeof faults)[number];

/** The body an `ok` path promises: its bytes follow from the path alone, so the client can check them. */
function bodyFor(id: number, size: number): Buffer {
    const body = Buffer.alloc(size);
    for (let i = 0; i < size; i++) {
        body[i] = (id * 31 + i * 7) & 0xff;
    }

    return body;
}

// Requests seen by id, for the faults that answer differently the second time.
const seenIds = new Set<string>();
let origins: RawOrigin[] = [];

/** Answers one request (`GET /<fault>/<id>/<size>[/<target origin index>/<fault>]`) on a raw socket. */
function answer(socket: Socket, path: string): void {
    const [, fault, idText, sizeText, targetText, targetFault] = path.split('/') as [
        string,
        Fault,
        string,
        string,
        string | undefined,
        Fault | undefined
    ];
    const id = Number(idText);
    const body = bodyFor(id, Number(sizeText));
    const kept = { 'content-length': body.length };
    switch (fault) {
        case 'ok':
            socket.write(head('200 OK', kept));
            socket.write(body);
            return;
        case 'ok-chunked':
            socket.write(head('200 OK', { 'transfer-encoding': 'chunked' }));
            socket.write(`${body.length.toString(16)}\r\n`);
            socket.write(body);
            socket.write('\r\n0\r\n\r\n');
            return;
        case 'gzip': {
            const zipped = gzipSync(body);
            socket.write(head('200 OK', { 'content-encoding': 'gzip', 'content-length': zipped.length }));
            socket.write(zipped);
            return;
        }
        case 'reset-before-headers':
            socket.resetAndDestroy();
            return;
        case 'reset-mid-body':
            socket.write(head('200 OK', kept));
            socket.write(body.subarray(0, body.length >> 1), () => socket.resetAndDestroy());
            return;
        case 'stall':
            return;
        case 'stall-body':
            socket.write(head('200 OK', kept));
            socket.write(body.subarray(0, body.length >> 1));
            return;
        case 'close-silent':
            socket.end();
            return;
        case 'broken-chunked':
            socket.write(head('200 OK', { 'transfer-encoding': 'chunked' }));
            socket.end('zz\r\nnot a chunk\r\n');
            return;
        case 'short-body':
            socket.write(head('200 OK', kept));
            socket.end(body.subarray(0, body.length >> 1));
            return;
        case 'corrupt-gzip': {
            const zipped = gzipSync(body);
            zipped.fill(0x55, 10, Math.min(zipped.length - 8, 40));
            socket.write(head('200 OK', { 'content-encoding': 'gzip', 'content-length': zipped.length }));
            socket.write(zipped);
            return;
        }
        case 'unavailable-once':
            if (!seenIds.has(idText)) {
                seenIds.add(idText);
                socket.write(head('503 Service Unavailable', { 'retry-after': 0, 'content-length': 4 }));
                socket.write('busy');
                return;
            }

            socket.write(head('200 OK', kept));
            socket.write(body);
            return;
        case 'redirect': {
            const target = origins[Number(targetText)]!;
            socket.write(
                head('302 Found', {
                    location: `${target.url}/${targetFault}/${id}/${body.length}`,
                    'content-length': 0
                })
            );
            return;
        }
        case 'http10-until-close':
            // No length: the body runs until the server closes the connection.
            socket.end(Buffer.concat([Buffer.from('HTTP/1.0 200 OK\r\n\r\n'), body]));
            return;
    }
}

const startFaultyOrigin = () => startRawOrigin(answer);

beforeAll(async () => {
    origins = await Promise.all([startFaultyOrigin(), startFaultyOrigin(), startFaultyOrigin()]);
});

afterAll(async () => {
    await Promise.all(origins.map((origin) => origin.close()));
});

// What a request may end in, by fault: a success only where the origin sends the whole body, and
// otherwise an error whose message says what went wrong.
const succeeds = new Set<Fault>(['ok', 'ok-chunked', 'gzip', 'unavailable-once', 'http10-until-close']);
const failures: Partial<Record<Fault, RegExp>> = {
    'reset-before-headers': /^Client request error: (read ECONNRESET|socket hang up)$/,
    'reset-mid-body': /^Payload stream closed prematurely$/,
    stall: /^Client request timeout$/,
    'stall-body': /^Client read timeout$/,
    'close-silent': /^Client request error: socket hang up$/,
    'broken-chunked': /^(Payload stream closed prematurely|.*Parse Error.*)$/,
    'short-body': /^Payload stream closed prematurely$/,
    'corrupt-gzip': /^Response payload could not be decompressed: /,
    'unavailable-once': /^Response Error: 503 Service Unavailable$/
};
// Any request may run out of time on a loaded machine: that too says what happened.
const timedOut = /^Client (request|read) timeout$/;

describe('fault injection: a seeded mix of misbehaving origins', () => {
    it(`${requestCount} requests settle with exact bodies or HttpErrors, one response per hop, nothing left (seed ${seed})`, async () => {
        const random = seeded(seed);
        const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
        const api = new Client().defaults({ events: true, gunzip: true });
        const hops = new Map<RequestUri, number>();
        const onPreRequest = (uri: RequestUri) => hops.set(uri, 0);
        const onResponse = (_err: unknown, { uri }: { uri: RequestUri }) => hops.set(uri, (hops.get(uri) ?? 0) + 1);
        api.events!.on('preRequest', onPreRequest);
        api.events!.on('response', onResponse);
        const timers = timerCount();
        const problems: string[] = [];
        const outcomes = new Map<string, number>();
        let next = 0;

        const one = async (index: number) => {
            let fault = pick(faults);
            const size = 1 + Math.floor(random() * 20_000);
            const origin = pick(origins.map((_, i) => i));
            let path = `/${fault}/${index}/${size}`;
            if (fault === 'redirect') {
                const targetFault = pick(faults.filter((candidate) => candidate !== 'redirect'));
                path += `/${pick(origins.map((_, i) => i))}/${targetFault}`;
                fault = targetFault;
            }

            const options = {
                timeout: 300 + Math.floor(random() * 200),
                redirects: 2,
                ...(random() < 0.5 ? { retry: { limit: 2, backoff: () => Math.floor(random() * 5) } } : {})
            };
            // Generous: far beyond any timeout and backoff of a request, so a hang shows as a problem, not a slow run.
            let watchdog: NodeJS.Timeout | undefined;
            const hang = new Promise<'hang'>((resolve) => {
                watchdog = setTimeout(resolve, 15_000, 'hang');
            });
            const outcome = await Promise.race([
                api.get<Buffer>(`${origins[origin]!.url}${path}`, options).then(
                    ({ payload }) => ({ payload }),
                    (err: unknown) => ({ err })
                ),
                hang
            ]);
            clearTimeout(watchdog);
            if (outcome === 'hang') {
                problems.push(`${path}: never settled`);
                return;
            }

            if ('err' in outcome) {
                const err = outcome.err as Error;
                if (!isHttpError(err)) {
                    problems.push(`${path}: not an HttpError: ${String(err)}`);
                } else if (!(failures[fault]?.test(err.message) ?? false) && !timedOut.test(err.message)) {
                    problems.push(`${path}: failed with "${err.message}", which does not say what happened`);
                }

                const key = `${fault}: ${err.message}`;
                outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
                return;
            }

            if (!succeeds.has(fault)) {
                problems.push(`${path}: succeeded although the origin did not send it all`);
            } else if (!outcome.payload.equals(bodyFor(index, size))) {
                problems.push(`${path}: a body of ${outcome.payload.length} bytes, not the ${size} sent`);
            }

            outcomes.set(`${fault}: ok`, (outcomes.get(`${fault}: ok`) ?? 0) + 1);
        };

        await Promise.all(
            Array.from({ length: concurrency }, async () => {
                while (next < requestCount) {
                    await one(next++);
                }
            })
        );

        const replay = `seed ${seed} (TRACEWIRE_FAULT_SEED=${seed} replays it)`;
        expect(problems, replay).toEqual([]);
        expect(
            [...hops.entries()].filter(([, count]) => count !== 1).map(([uri, count]) => `${uri.href}: ${count}`),
            replay
        ).toEqual([]);
        // No request holds a socket any more; the idle ones close with the pool.
        const busy = () =>
            Object.values(api.agents.http.sockets).reduce((count, list) => count + (list?.length ?? 0), 0);
        await expect.poll(busy, { message: replay }).toBe(0);
        api.agents.http.destroy();
        await expect.poll(() => origins.reduce((open, origin) => open + origin.sockets.size, 0)).toBe(0);
        await expect.poll(() => timerCount()).toBeLessThanOrEqual(timers);
        api.events!.off('preRequest', onPreRequest);
        api.events!.off('response', onResponse);
        expect(api.events!.listenerCount('response') + api.events!.listenerCount('preRequest'), replay).toBe(0);
        // Every kind of fault was met, and each failure named what happened.
        expect(new Set([...outcomes.keys()].map((key) => key.split(':')[0])).size, replay).toBe(faults.length - 1);
        if (process.env.TRACEWIRE_FAULT_REPORT) {
            console.log(
                [...outcomes.entries()]
                    .sort()
                    .map(([key, count]) => `${count}\t${key}`)
                    .join('\n')
            );
        }
    }, 120_000);
});
