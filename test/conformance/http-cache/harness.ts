/**
 * The public HTTP caching test suite (npm `http-cache-tests`, the suite behind cache-tests.fyi) run
 * against the client's cache, the way undici runs it against its interceptor: the suite's origin
 * server in this process; for a private cache the suite's `fetch` replaced by an adapter over the
 * client; for a shared cache the suite's proxy mode (a reverse proxy built on a shared-cache client,
 * driven with the suite's own node-fetch). Whole suite, no ignore list. docs/cache.md explains the
 * required failures left.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
// @ts-expect-error -- the suite ships untyped ES modules.
import handleConfig from 'http-cache-tests/server/handle-config.mjs';
// @ts-expect-error -- as above
import handleFile from 'http-cache-tests/server/handle-file.mjs';
// @ts-expect-error -- as above
import handleState from 'http-cache-tests/server/handle-state.mjs';
// @ts-expect-error -- as above
import handleTest from 'http-cache-tests/server/handle-test.mjs';
import type { Client } from '../../../src/client/surface/client.js';

interface SuiteTest {
    id: string;
    name: string;
    kind?: 'required' | 'optimal' | 'check';
    depends_on?: string[];
    browser_only?: boolean;
}

interface Suite {
    tests: SuiteTest[];
}

/** The tallies cache-tests.fyi shows for one implementation. */
export interface SuiteSummary {
    total: number;
    /** Passed required and optimal tests, and `check` tests answered yes. */
    passes: number;
    requiredFailures: number;
    optionalFailures: number;
    checksNo: number;
    setupFailures: number;
    harnessFailures: number;
    dependencyFailures: number;
    retries: number;
    /** id, name and message of each required failure. */
    failed: { id: string; name: string; message: string }[];
}

/** The suite's origin server, in this process. */
export async function startOrigin(): Promise<{ url: string; close(): Promise<void> }> {
    const server = http.createServer((request, response) => {
        const url = new URL(request.url ?? '/', 'http://localhost/');
        const segments = url.pathname.split('/');
        segments.shift();
        const dispatch = segments.shift();
        if (dispatch === 'config') {
            handleConfig(segments, request, response);
        } else if (dispatch === 'test') {
            handleTest(segments, request, response);
        } else if (dispatch === 'state') {
            handleState(segments, request, response);
        } else {
            handleFile(url, request, response);
        }
    });
    return listen(server);
}

/** What the suite reads of a response its `fetch` gives. */
interface SuiteResponse {
    status: number;
    statusText: string;
    headers: Headers;
    text(): Promise<string>;
}

/** What the suite passes its `fetch`. */
interface SuiteRequest {
    method?: string;
    headers?: [string, string][];
    body?: string;
    redirect?: string;
}

/** The suite's `fetch` over the client: what the suite asks, sent by `client.request()`; the body read raw. */
export function fetchOver(client: Client): (url: string, init?: SuiteRequest) => Promise<SuiteResponse> {
    return async (url, init = {}) => {
        const headers: Record<string, string | string[]> = {};
        for (const [name, value] of init.headers ?? []) {
            const key = name.toLowerCase();
            const existing = headers[key];
            headers[key] = existing === undefined ? value : [...([] as string[]).concat(existing), value];
        }

        const res = await client.request(init.method ?? 'GET', url, {
            headers,
            payload: init.body,
            // fetch follows redirects unless told not to.
            redirects: init.redirect === 'manual' ? false : 20
        });
        const body = (await client.read(res)) as Buffer;
        return responseOf(res.statusCode as number, res.statusMessage ?? '', res.rawHeaders, body);
    };
}

/** A reverse proxy whose every request goes through `client` (a shared cache) to `origin`. */
export async function startProxy(client: Client, origin: string): Promise<{ url: string; close(): Promise<void> }> {
    const server = http.createServer((req, res) => {
        const headers: Record<string, string | string[]> = {};
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
            const name = req.rawHeaders[i]!.toLowerCase();
            if (hopByHop.has(name) || name === 'host') {
                continue;
            }

            const existing = headers[name];
            const value = req.rawHeaders[i + 1]!;
            headers[name] = existing === undefined ? value : [...([] as string[]).concat(existing), value];
        }

        client
            .request(req.method, origin + req.url, {
                headers,
                payload: req.method === 'GET' || req.method === 'HEAD' ? undefined : req
            })
            .then(
                (upstream) => {
                    const fields: string[] = [];
                    for (let i = 0; i < upstream.rawHeaders.length; i += 2) {
                        if (!hopByHop.has(upstream.rawHeaders[i]!.toLowerCase())) {
                            fields.push(upstream.rawHeaders[i]!, upstream.rawHeaders[i + 1]!);
                        }
                    }

                    res.writeHead(upstream.statusCode as number, upstream.statusMessage, fields);
                    upstream.pipe(res);
                    upstream.on('error', () => res.destroy());
                },
                () => {
                    // The origin dropped the connection: so does the proxy.
                    res.destroy();
                }
            );
    });
    return listen(server);
}

/** The suite's package directory. */
const suitePackage = createRequire(import.meta.url).resolve('http-cache-tests/package.json');

interface SuiteRunner {
    runTests(suites: Suite[], fetch: unknown, browserCache: boolean, base: string, chunkSize: number): Promise<void>;
    getResults(): Record<string, true | [string, string]>;
}

/**
 * Runs the whole suite with `fetch` against `baseUrl` and tallies it. The suite keeps a run's state in its
 * modules: the client its fetch, base URL, queue and results in module variables (client/config.mjs,
 * test.mjs, runner.mjs), and it writes into the tests' own definitions as it goes (a `Date` of the
 * definition becomes the first response's date). One copy of its modules runs one suite: each run loads its
 * own (client/, tests/ and the lib/ they import, copied to a scratch directory), so runs of one process go at
 * once without sharing any of it.
 */
export async function runSuite(fetch: unknown, baseUrl: string): Promise<SuiteSummary> {
    const copy = mkdtempSync(join(tmpdir(), 'tracewire-cache-suite-'));
    try {
        for (const folder of ['client', 'lib', 'tests']) {
            cpSync(join(dirname(suitePackage), folder), join(copy, folder), { recursive: true });
        }

        const load = (file: string) => import(pathToFileURL(join(copy, file)).href);
        const runner = (await load('client/runner.mjs')) as SuiteRunner;
        // As the suite's own CLI: every suite, surrogate-control included.
        const suites: Suite[] = [
            ...((await load('tests/index.mjs')).default as Suite[]),
            (await load('tests/surrogate-control.mjs')).default as Suite
        ];
        // All tests at once: each waits on its own pauses, so the run takes about as long as the longest test.
        await runner.runTests(suites, fetch, false, baseUrl, 1000);
        return summarize(suites, runner.getResults());
    } finally {
        rmSync(copy, { recursive: true, force: true });
    }
}

/** The suite's fetch for the proxy mode: its own node-fetch (resolved from the suite's package), as its CLI uses. */
export const suiteFetch: unknown = createRequire(suitePackage)('node-fetch');

/**
 * What a run prints, in one piece and headed by its label (the runs of a file go at once, so their output
 * interleaves): the table row, `notes`, then each required failure.
 */
export function report(label: string, summary: SuiteSummary, notes: readonly string[] = []): string {
    return [
        `http-cache-tests, ${label}:`,
        tableHeader,
        tableRow(label, summary),
        ...notes,
        ...summary.failed.map((failure) => `  required failure ${failure.id}: ${failure.message}`)
    ].join('\n');
}

/** One row of the table the runner prints. */
function tableRow(label: string, summary: SuiteSummary): string {
    return `| ${label.padEnd(24)} | ${String(summary.total).padStart(5)} | ${String(summary.passes).padStart(6)} | ${String(summary.requiredFailures).padStart(8)} | ${String(summary.optionalFailures).padStart(8)} | ${String(summary.checksNo).padStart(5)} | ${String(summary.setupFailures + summary.harnessFailures + summary.dependencyFailures + summary.retries).padStart(5)} |`;
}

const tableHeader =
    '| run                      | tests | passes | required | optional | check | other |\n|--------------------------|-------|--------|----------|----------|-------|-------|';

// As the suite's display (lib/display.mjs determineTestResult): dependencies first, then the kind.
function summarize(suites: readonly Suite[], results: Record<string, true | [string, string]>): SuiteSummary {
    const byId = new Map<string, SuiteTest>();
    for (const suite of suites) {
        for (const test of suite.tests) {
            byId.set(test.id, test);
        }
    }

    const verdict = (id: string): string => {
        const test = byId.get(id)!;
        const result = results[id];
        if (result === undefined) {
            return 'untested';
        }

        for (const dependency of test.depends_on ?? []) {
            const of = verdict(dependency);
            if (of !== 'pass' && of !== 'yes') {
                return 'dependency';
            }
        }

        if (result !== true && result[0] === 'Setup') {
            return result[1] === 'retry' ? 'retry' : 'setup';
        }

        if (test.kind === 'check') {
            return result === true ? 'yes' : 'no';
        }

        if (test.kind === 'optimal') {
            return result === true ? 'pass' : 'optional';
        }

        return result === true ? 'pass' : 'fail';
    };

    const summary: SuiteSummary = {
        total: 0,
        passes: 0,
        requiredFailures: 0,
        optionalFailures: 0,
        checksNo: 0,
        setupFailures: 0,
        harnessFailures: 0,
        dependencyFailures: 0,
        retries: 0,
        failed: []
    };
    for (const id of Object.keys(results)) {
        summary.total++;
        switch (verdict(id)) {
            case 'pass':
            case 'yes':
                summary.passes++;
                break;
            case 'fail': {
                summary.requiredFailures++;
                const result = results[id] as [string, string];
                summary.failed.push({ id, name: byId.get(id)!.name, message: `${result[0]}: ${result[1]}` });
                break;
            }
            case 'optional':
                summary.optionalFailures++;
                break;
            case 'no':
                summary.checksNo++;
                break;
            case 'setup':
                summary.setupFailures++;
                break;
            case 'retry':
                summary.retries++;
                break;
            case 'dependency':
                summary.dependencyFailures++;
                break;
            default:
                summary.harnessFailures++;
        }
    }

    return summary;
}

const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'transfer-encoding', 'upgrade']);

function responseOf(status: number, statusText: string, rawHeaders: readonly string[], body: Buffer): SuiteResponse {
    const headers = new Headers();
    for (let i = 0; i < rawHeaders.length; i += 2) {
        headers.append(rawHeaders[i]!, rawHeaders[i + 1]!);
    }

    return { status, statusText, headers, text: async () => body.toString('utf8') };
}

async function listen(server: http.Server): Promise<{ url: string; close(): Promise<void> }> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}`,
        close: () => {
            server.closeAllConnections();
            return new Promise((resolve) => server.close(() => resolve()));
        }
    };
}
