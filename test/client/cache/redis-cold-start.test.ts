import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCacheStore } from '../../../src/client/cache/stores/redis/redis-store.js';
import type { FillLock } from '../../../src/client/contract/cache-store.js';
import { Client } from '../../../src/client/surface/client.js';
import { type RedisServer, startRedis } from '../../integration/servers.js';
import { type AppClient, clientKinds } from './redis-clients.js';

/**
 * A fleet that starts cold (docs/cache.md "Running as a fleet"): processes that send their calls the
 * moment they start, while their Redis clients are still connecting. Those calls wait for the connection
 * within the store's bound, so they are stored and take the fill locks as the next ones do: one request
 * per URL reaches the origin, and a process that shuts down right after leaves no lock behind. Each
 * process runs the built package, as a deployed instance does (`npm test` builds first).
 */

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const member = fileURLToPath(new URL('redis-cold-member.mjs', import.meta.url));
const run = promisify(execFile);

let redis: RedisServer;
let admin: AppClient;
let origin: Server;
let base: string;
const requests = new Map<string, number>();
beforeAll(async () => {
    redis = await startRedis();
    admin = await clientKinds[0]!.connect(redis.port);
    origin = createServer((req, res) => {
        const path = new URL(req.url ?? '/', 'http://origin').pathname;
        requests.set(path, (requests.get(path) ?? 0) + 1);
        // The fleet's origin is slow, as a cold service's dependencies are: the processes' fills overlap.
        // The README's catalogue answers at once: its first call is over before a client connects.
        setTimeout(
            () => {
                res.setHeader('Cache-Control', 'max-age=60');
                res.end(`body of ${path}`);
            },
            path.startsWith('/cold/') ? 150 : 0
        );
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
}, 30_000);
afterAll(async () => {
    admin?.disconnect();
    await new Promise((resolve) => origin?.close(resolve));
    await redis?.stop();
});

interface ColdRun {
    lookedUpWhile: string[];
    answers: { url: string; cacheStatus: string; body: string }[];
    failures: string[];
}

let rounds = 0;

describe('a fleet that starts cold', () => {
    it('4 processes started together, each sending 25 identical GETs of each of 2 URLs at once: one request per URL reaches the origin', async () => {
        const packages = ['ioredis', 'ioredis5', 'iovalkey', 'ioredis'];
        for (let round = 0; round < 2; round++) {
            const prefix = `cold${++rounds}:`;
            const paths = [`/cold/${rounds}/a`, `/cold/${rounds}/b`];
            // A cold process on this loaded 2-core machine (four of them starting, and the test runner) takes
            // longer than the store's default bound (100 ms) to connect: the bounds are raised, as a service
            // whose instances start on busy hosts would raise them. What a bound does when the connection takes
            // longer still is redis-faults.test.ts's.
            const settings = { timeout: 1_000, storeTimeout: 2_000 };
            const burst = JSON.stringify({ urls: paths.map((path) => base + path), each: 25, ...settings });
            const runs = await Promise.all(
                packages.map(async (clientPackage) => {
                    const args = [member, String(redis.port), prefix, clientPackage, burst];
                    const { stdout, stderr } = await run(process.execPath, args, { cwd: repo });
                    expect(stderr).toBe('');
                    return JSON.parse(stdout) as ColdRun;
                })
            );
            // Cold indeed: each process made its first lookups while its client was connecting.
            expect(runs.map((coldRun) => coldRun.lookedUpWhile[0])).toStrictEqual(Array(4).fill('connecting'));
            const failures = runs.flatMap((coldRun) => coldRun.failures);
            for (const path of paths) {
                expect(requests.get(path), `${path}, failures: ${failures.join('; ')}`).toBe(1);
            }

            expect(failures).toStrictEqual([]);

            const answers = runs.flatMap((coldRun) => coldRun.answers);
            expect(answers).toHaveLength(200);
            for (const answer of answers) {
                expect(answer.body).toBe(`body of ${new URL(answer.url).pathname}`);
            }

            const stored = answers.filter((answer) => / stored;/.test(answer.cacheStatus));
            expect(stored.map((answer) => answer.url).sort()).toStrictEqual(paths.map((path) => base + path));
            // Every process has exited: none left a lock on the server.
            expect(await admin.keys(`${prefix}*:lock`)).toStrictEqual([]);
        }
    }, 60_000);
});

describe('the window between a lookup and its lock', () => {
    it("an instance that takes the lock after another's fill landed and released it is answered from the store, not the origin", async () => {
        // Instance B's lock waits at a gate: its lookup missed, then instance A fills the URL whole meanwhile.
        let open = () => {};
        const gate = new Promise<void>((resolve) => {
            open = resolve;
        });
        let lockedAfterGate = false;
        class GatedLocks extends RedisCacheStore {
            override async lockFill(key: string, ttl: number): Promise<FillLock> {
                await gate;
                const lock = await super.lockFill(key, ttl);
                lockedAfterGate = lock.acquired;
                return lock;
            }
        }

        const keyPrefix = `window${++rounds}:`;
        const clients = [await clientKinds[0]!.connect(redis.port), await clientKinds[2]!.connect(redis.port)];
        const a = new RedisCacheStore({ client: clients[0]!, keyPrefix });
        const b = new GatedLocks({ client: clients[1]!, keyPrefix });
        try {
            const url = `${base}/window/${rounds}`;
            const fromB = new Client().defaults({ cache: { store: b, shared: true } }).get(url);
            await new Promise((resolve) => setTimeout(resolve, 50));
            const fromA = await new Client().defaults({ cache: { store: a, shared: true } }).get(url);
            expect(fromA.res.headers['cache-status']).toMatch(/^tracewire; fwd=miss; fwd-status=200; stored; ttl=/);
            open();
            const answer = await fromB;
            expect(lockedAfterGate).toBe(true);
            expect(answer.res.headers['cache-status']).toMatch(/^tracewire; hit; ttl=(59|60)$/);
            expect(String(answer.payload)).toBe(`body of /window/${rounds}`);
            expect(requests.get(`/window/${rounds}`)).toBe(1);
        } finally {
            a.close();
            b.close();
            for (const client of clients) {
                client.disconnect();
            }
        }
    });
});

describe("README's RedisCacheStore block, run as written", () => {
    it('against a fresh redis-server, two GETs of one item: a miss that says stored, then a hit', async () => {
        const fresh = await startRedis();
        const dir = mkdtempSync(join(tmpdir(), 'tracewire-readme-redis-'));
        try {
            const readme = readFileSync(join(repo, 'README.md'), 'utf8');
            const section = readme.slice(readme.indexOf('### Cache stores'));
            const block = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
            expect(block).toContain('new RedisCacheStore(');
            expect(block).toContain("'https://catalogue.internal/'");
            // The block as written; only its origin is this test's, and the calls and the shutdown it names follow it.
            const program = [
                block.replace("'https://catalogue.internal/'", `'${base}/catalogue/'`),
                "const first = await catalogue.get('items/42');",
                "const second = await catalogue.get('items/42');",
                "console.log(JSON.stringify([first.res.headers['cache-status'], second.res.headers['cache-status']]));",
                'store.close();',
                'await redis.quit();'
            ].join('\n');
            // A project of the user's own: tracewire and ioredis installed beside the program, compiled by tsc
            // (the README blocks test type-checks the block; here it runs).
            for (const [name, target] of [
                ['tracewire', repo],
                ['ioredis', join(repo, 'node_modules', 'ioredis')]
            ] as const) {
                mkdirSync(join(dir, 'node_modules'), { recursive: true });
                symlinkSync(target, join(dir, 'node_modules', name), 'dir');
            }

            writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
            writeFileSync(join(dir, 'block.ts'), program);
            const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
            const emit = ['block.ts', '--module', 'nodenext', '--target', 'es2023', '--noCheck', '--outDir', 'out'];
            await run(process.execPath, [tsc, ...emit], { cwd: dir });
            const env = { ...process.env, REDIS_URL: `redis://127.0.0.1:${fresh.port}` };
            // Its first call made while the client connects, as on a fast machine (warm-tracewire.mjs).
            const warm = new URL('warm-tracewire.mjs', import.meta.url).href;
            const { stdout, stderr } = await run(process.execPath, ['--import', warm, 'out/block.js'], {
                cwd: dir,
                env
            });
            expect(stderr).toBe('');
            const [first, second] = JSON.parse(stdout) as [string, string];
            expect(first).toMatch(/^tracewire; fwd=miss; fwd-status=200; stored; ttl=(59|60)$/);
            expect(second).toMatch(/^tracewire; hit; ttl=(59|60)$/);
            expect(requests.get('/catalogue/items/42')).toBe(1);
        } finally {
            rmSync(dir, { recursive: true, force: true });
            await fresh.stop();
        }
    }, 30_000);
});
