/**
 * Differential conformance of the client against @hapi/wreck, the library whose interface it takes
 * (README, "Client"). Every scenario runs twice on the same real loopback servers, once with each
 * client, and compares what the servers received (method, path, every header, body) and what the
 * caller got (the value, or the error's status, message class and data).
 *
 * A scenario marked `intended` is a difference on purpose: the suite asserts that the two records
 * DIFFER, checks what tracewire does instead, and checks that docs/migrating-from-wreck.md lists it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { ClientRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import Wreck from '@hapi/wreck';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../src/client/index.js';
import { selfSignedCertificate } from '../client/helpers.js';
import {
    comparableReceived,
    type Outcome,
    outcomeOf,
    type Received,
    type Servers,
    startServers
} from './client.harness.js';

// Both clients, seen through the interface they share (README, "Client").
// biome-ignore lint/suspicious/noExplicitAny: the two libraries' types differ in detail; scenarios use the shared surface.
type AnyClient = any;

interface Env extends Servers {
    /** Records something a callback saw, to compare it too. */
    log(...values: unknown[]): void;
}

type Scenario = (c: AnyClient, env: Env) => unknown;

interface Run {
    outcome: Outcome;
    received: Received[];
    logged: unknown[];
}

interface Intended {
    /** The heading of the difference in docs/migrating-from-wreck.md. */
    guide: string;
    /** What tracewire does instead (and, when useful, what @hapi/wreck does). */
    check(ours: Run, theirs: Run): void;
}

let servers: Servers;
// The differences the scenarios assert, to check that the guide lists no other.
const asserted = new Set<string>(['Redirects stay on http and https']);
const guide = readFileSync(new URL('../../docs/migrating-from-wreck.md', import.meta.url), 'utf8');
const guideHeadings = new Set([...guide.matchAll(/^### (.+)$/gm)].map((match) => match[1]!.trim()));

beforeAll(async () => {
    servers = await startServers();
});

afterAll(async () => {
    await servers.close();
});

async function settle(value: unknown, c: AnyClient): Promise<unknown> {
    const resolved = await value;
    // request() resolves with the response: read it with the same client to compare bodies too.
    if (resolved !== null && typeof resolved === 'object' && 'statusCode' in resolved && 'headers' in resolved) {
        const res = resolved as IncomingMessage;
        const payload = await c.read(res);
        return { res, payload };
    }

    return resolved;
}

async function run(c: AnyClient, scenario: Scenario): Promise<Run> {
    servers.received.length = 0;
    const logged: unknown[] = [];
    const env: Env = { ...servers, log: (...values) => logged.push(values) };
    let settled: { value?: unknown; error?: unknown; thrown?: unknown };
    let pending: unknown;
    try {
        pending = scenario(c, env);
    } catch (thrown) {
        settled = { thrown };
        return { outcome: outcomeOf(settled), received: comparableReceived(servers.received), logged };
    }

    try {
        settled = { value: await settle(pending, c) };
    } catch (error) {
        settled = { error };
        // A request that failed early (a timeout, an abort) may have a hop still on its way to the
        // server: let it land in this run's log rather than in the next scenario's.
        await serversQuiet();
    }

    return { outcome: outcomeOf(settled), received: comparableReceived(servers.received), logged };
}

/** Resolves once the servers have received nothing new for a short while (at most one second). */
async function serversQuiet(): Promise<void> {
    const deadline = Date.now() + 1000;
    let seen = -1;
    while (seen !== servers.received.length && Date.now() < deadline) {
        seen = servers.received.length;
        await new Promise((resolve) => setTimeout(resolve, 30));
    }
}

/** Runs a scenario with both clients; the same records unless the difference is intended. */
function conform(title: string, scenario: Scenario, intended?: Intended): void {
    if (intended === undefined) {
        it(title, async () => {
            const theirs = await run(Wreck, scenario);
            const ours = await run(client, scenario);
            expect(ours).toEqual(theirs);
        });
        return;
    }

    asserted.add(intended.guide);
    it(`${title} [intended difference: ${intended.guide}]`, async () => {
        expect(guideHeadings).toContain(intended.guide);
        const theirs = await run(Wreck, scenario);
        const ours = await run(client, scenario);
        expect(ours).not.toEqual(theirs);
        intended.check(ours, theirs);
    });
}

// What a helper that reads JSON sends as `accept` when the caller sets none (json: true or 'force', and 'strict').
const jsonAccept = 'application/json, application/problem+json, */*;q=0.8';
const strictJsonAccept = 'application/json, application/problem+json';

/**
 * The difference of a scenario whose helpers read JSON: the `accept` each request carried (wreck sends
 * none), and nothing else.
 */
function asksForProblemDocuments(...accepts: (string | undefined)[]): Intended {
    return {
        guide: 'A helper reading JSON asks for problem documents',
        check: (ours, theirs) => {
            expect(ours.received.map((entry) => entry.headers.accept)).toEqual(accepts);
            expect(theirs.received.map((entry) => entry.headers.accept)).toEqual(accepts.map(() => undefined));
            expect(withoutAccept(ours)).toEqual(withoutAccept(theirs));
        }
    };
}

function withoutAccept(run: Run): Run {
    const received = run.received.map(({ headers: { accept: _accept, ...headers }, ...entry }) => ({
        ...entry,
        headers
    }));
    return { ...run, received };
}

function value(run: Run): { statusCode: number | undefined; payload: unknown } {
    if (!('value' in run.outcome)) {
        throw new Error(`Expected a value, got ${JSON.stringify(run.outcome)}`);
    }

    return run.outcome.value;
}

function failure(run: Run): { status: number | undefined; class: string; data: unknown } {
    if (!('error' in run.outcome)) {
        throw new Error(`Expected a rejection, got ${JSON.stringify(run.outcome)}`);
    }

    return run.outcome.error;
}

const json = (body: unknown) => encodeURIComponent(JSON.stringify(body));

describe('2.1 agent and rejectUnauthorized', () => {
    conform('the default agents, http', (c, env) => c.get(`${env.http}/a`));
    conform('the default https agent refuses a self-signed certificate', (c, env) => c.get(`${env.https}/a`));
    conform('rejectUnauthorized: false accepts it', (c, env) => c.get(`${env.https}/a`, { rejectUnauthorized: false }));
    conform('agent: false', (c, env) => c.get(`${env.http}/a`, { agent: false }));
    conform('an http agent given', (c, env) => c.get(`${env.http}/a`, { agent: new HttpAgent() }));
    conform('an https agent trusting the certificate', (c, env) =>
        c.get(`${env.https}/a`, { agent: new HttpsAgent({ ca: selfSignedCertificate().cert }) })
    );
    conform('agents replaced through defaults()', (c, env) =>
        c
            .defaults({
                agents: {
                    http: new HttpAgent(),
                    https: new HttpsAgent({ ca: selfSignedCertificate().cert }),
                    httpsAllowUnauthorized: new HttpsAgent({ rejectUnauthorized: false })
                }
            })
            .get(`${env.https}/a`)
    );
    conform('agent together with rejectUnauthorized is refused', (c, env) =>
        c.get(`${env.https}/a`, { agent: new HttpsAgent(), rejectUnauthorized: false })
    );
    conform(
        'agent: false together with rejectUnauthorized: false',
        (c, env) => c.get(`${env.https}/a`, { agent: false, rejectUnauthorized: false }),
        {
            guide: 'agent: false combines with rejectUnauthorized',
            check: (ours, theirs) => {
                expect(value(ours).statusCode).toBe(200);
                expect(failure(theirs).class).toBe('invalid option');
            }
        }
    );
    conform(
        'the connection header: keep-alive pools',
        async (c, env) => {
            await c.get(`${env.http}/a`);
            env.log(servers.received[0]?.headers.connection ?? 'none');
        },
        {
            guide: 'Connections are kept alive',
            check: (ours, theirs) => {
                expect(ours.logged).toEqual([['keep-alive']]);
                expect(theirs.logged).toEqual([['close']]);
            }
        }
    );
    conform(
        'a request started while another awaits its response',
        async (c, env) => {
            const awaiting = c.request('GET', `${env.http}/slow/50`);
            const started = c.request('GET', `${env.http}/b`);
            // Before this turn's I/O callbacks have run.
            env.log(awaiting.req.writableEnded, started.req.writableEnded);
            await Promise.all([awaiting, started].map(async (promise) => c.read(await promise)));
            env.log(started.req.writableEnded);
        },
        {
            guide: 'While other requests await responses, a request is written at the end of its turn',
            check: (ours, theirs) => {
                expect(ours.logged).toEqual([[true, false], [true]]);
                expect(theirs.logged).toEqual([[true, true], [true]]);
                expect(ours.received.map(({ path }) => path).sort()).toEqual(['/b', '/slow/50']);
            }
        }
    );
});

describe('2.1 baseUrl × uri forms', () => {
    const bases = ['{http}', '{http}/', '{http}/api', '{http}/api/', '{http}/api/?from=base'];
    const uris = ['x', '/x', 'x?q=1', '/x?q=1', '', '?q=2', '{http}/other'];
    for (const base of bases) {
        for (const uri of uris) {
            conform(`baseUrl ${base} with uri ${JSON.stringify(uri)}`, (c, env) =>
                c.get(uri.replace('{http}', env.http), { baseUrl: base.replace('{http}', env.http) })
            );
        }
    }

    conform(
        'baseUrl with a URL object as uri',
        (c, env) => c.request('GET', new URL(`${env.http}/x`), { baseUrl: env.http }),
        {
            guide: 'Options are checked',
            check: (ours, theirs) => {
                expect(failure(ours).class).toBe('invalid option');
                expect(value(theirs).statusCode).toBe(200);
            }
        }
    );
});

describe('2.1 payload kinds × redirects × status codes', () => {
    const payloads: Record<string, () => unknown> = {
        none: () => undefined,
        string: () => 'text body',
        'empty string': () => '',
        Buffer: () => Buffer.from('buffer body'),
        object: () => ({ an: 'object', n: 1 }),
        array: () => [1, 2]
    };
    for (const [kind, make] of Object.entries(payloads)) {
        conform(`POST with a ${kind} payload`, (c, env) => c.post(`${env.http}/p`, { payload: make() }));
        for (const status of [301, 302, 303, 307, 308]) {
            const scenario: Scenario = (c, env) =>
                c.post(`${env.http}/redirect/${status}?to=/landed`, {
                    payload: make(),
                    redirects: 1,
                    redirect303: true
                });
            const jsonResent = (kind === 'object' || kind === 'array') && status !== 303;
            conform(
                `${kind} payload, ${status}, redirects: 1, redirect303: true`,
                scenario,
                jsonResent
                    ? {
                          guide: 'A JSON payload keeps its content-type on redirects',
                          check: (ours, theirs) => {
                              expect(ours.received[1]?.headers['content-type']).toBe('application/json');
                              expect(theirs.received[1]?.headers).not.toHaveProperty('content-type');
                              expect(ours.received[1]?.body).toBe(theirs.received[1]?.body);
                          }
                      }
                    : undefined
            );
        }
    }

    conform('a stream payload without redirects', (c, env) =>
        c.post(`${env.http}/p`, { payload: Readable.from(['str', 'eam']) })
    );
    for (const status of [301, 302, 303]) {
        conform(`a stream payload, ${status}: the payload is dropped`, (c, env) =>
            c.post(`${env.http}/redirect/${status}?to=/landed`, {
                payload: Readable.from(['stream']),
                redirects: 1,
                redirect303: true
            })
        );
    }

    for (const status of [307, 308]) {
        conform(`a stream payload, ${status}: re-sent`, (c, env) =>
            c.post(`${env.http}/redirect/${status}?to=/landed`, {
                payload: Readable.from(['str', 'eam']),
                redirects: 1
            })
        );
    }

    for (const status of [300, 304, 305, 306, 399]) {
        conform(`status ${status} is not followed`, (c, env) =>
            c.get(`${env.http}/redirect/${status}?to=/landed`, { redirects: 1 })
        );
    }
});

describe('2.1 redirects, redirectMethod, redirect303, beforeRedirect, redirected', () => {
    conform('redirects: false returns the 3xx', (c, env) => c.get(`${env.http}/redirect/302?to=/x`));
    conform('redirects: 0 with a 3xx', (c, env) => c.get(`${env.http}/redirect/302?to=/x`, { redirects: 0 }));
    conform('redirects: 2 over a chain of 3', (c, env) =>
        c.get(
            `${env.http}/redirect/301?to=${encodeURIComponent('/redirect/302?to=%2Fredirect%2F307%3Fto%3D%252Fend')}`,
            {
                redirects: 2
            }
        )
    );
    conform('redirects: 3 over a chain of 3', (c, env) =>
        c.get(
            `${env.http}/redirect/301?to=${encodeURIComponent('/redirect/302?to=%2Fredirect%2F307%3Fto%3D%252Fend')}`,
            {
                redirects: 3
            }
        )
    );
    conform(
        "a followed 3xx's small body is read, not destroyed: its connection serves the next hop",
        async (c, env) => {
            // One socket at a time, so a hop waits for the 3xx's connection if it is kept, else makes its own.
            const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
            const createConnection = agent.createConnection.bind(agent);
            let connections = 0;
            agent.createConnection = (...args: Parameters<typeof createConnection>) => {
                connections++;
                return createConnection(...args);
            };
            try {
                for (let call = 0; call < 2; call++) {
                    await c.get(`${env.http}/redirect/301?to=/landed`, { redirects: 1, agent });
                }

                env.log(connections);
            } finally {
                agent.destroy();
            }
        },
        {
            guide: 'A followed redirect keeps its connection',
            check: (ours, theirs) => {
                expect(ours.logged).toEqual([[1]]);
                expect(theirs.logged).toEqual([[3]]);
            }
        }
    );
    conform('a 303 without redirect303 is returned', (c, env) =>
        c.post(`${env.http}/redirect/303?to=/x`, { redirects: 1, payload: 'p' })
    );
    conform('redirectMethod for 301 and 302', async (c, env) => {
        await c.post(`${env.http}/redirect/301?to=/a`, { redirects: 1, redirectMethod: 'GET', payload: 'p' });
        return c.post(`${env.http}/redirect/302?to=/b`, { redirects: 1, redirectMethod: 'PUT', payload: 'p' });
    });
    conform('redirectMethod does not apply to 307', (c, env) =>
        c.post(`${env.http}/redirect/307?to=/a`, { redirects: 1, redirectMethod: 'GET', payload: 'p' })
    );
    conform('a redirect without location', (c, env) => c.get(`${env.http}/redirect/302`, { redirects: 1 }));
    conform('an absolute location to another server', (c, env) =>
        c.get(`${env.http}/redirect/302?to=${encodeURIComponent(`${env.https}/tls`)}`, {
            redirects: 1,
            rejectUnauthorized: false
        })
    );
    conform('a relative location without a leading slash', (c, env) =>
        c.get(`${env.http}/redirect/302?to=sibling`, { redirects: 1 })
    );
    conform('beforeRedirect receives method, status, location, headers and options, then next()', (c, env) =>
        c.post(`${env.http}/redirect/302?to=/next`, {
            redirects: 1,
            payload: 'p',
            beforeRedirect: (
                method: string,
                status: number,
                location: string,
                headers: Record<string, string>,
                options: { redirects: number },
                next: () => void
            ) => {
                env.log(method, status, location, headers.location, options.redirects);
                next();
            }
        })
    );
    conform('beforeRedirect changes the next request through redirectOptions', (c, env) =>
        c.get(`${env.http}/redirect/302?to=/next`, {
            redirects: 1,
            headers: { 'x-first': '1' },
            beforeRedirect: (
                _m: string,
                _s: number,
                _l: string,
                _h: unknown,
                options: { headers: Record<string, string> },
                next: () => void
            ) => {
                options.headers = { ...options.headers, 'x-added': 'yes' };
                next();
            }
        })
    );
    conform(
        'beforeRedirect stopping with next(err)',
        (c, env) =>
            c.get(`${env.http}/redirect/302?to=/next`, {
                redirects: 1,
                beforeRedirect: (
                    _m: string,
                    _s: number,
                    _l: string,
                    _h: unknown,
                    _o: unknown,
                    next: (e?: Error) => void
                ) => next(new Error('stop'))
            }),
        {
            guide: 'next(err) in beforeRedirect rejects with your error',
            check: (ours, theirs) => {
                expect(failure(ours)).toMatchObject({ status: 500, class: 'other: Redirect stopped: stop' });
                expect(failure(theirs)).toMatchObject({ status: 502, class: 'invalid redirect' });
            }
        }
    );
    conform('redirected receives the status, location and the new request', (c, env) =>
        c.get(`${env.http}/redirect/301?to=/next`, {
            redirects: 1,
            redirected: (status: number, location: string, req: unknown) =>
                env.log(status, location, req instanceof ClientRequest)
        })
    );
    conform('a redirect to another origin drops authorization and cookie', (c, env) =>
        c.get(`${env.http}/redirect/302?to=${encodeURIComponent(`${env.https}/tls`)}`, {
            redirects: 1,
            rejectUnauthorized: false,
            headers: { authorization: 'Bearer secret', cookie: 'sid=1', 'x-kept': 'yes' }
        })
    );
    conform('a redirect to another origin drops proxy-authorization too', (c, env) =>
        c.get(`${env.http}/redirect/302?to=${encodeURIComponent(`${env.https}/tls`)}`, {
            redirects: 1,
            rejectUnauthorized: false,
            headers: { 'proxy-authorization': 'Basic cHJveHk6c2VjcmV0' }
        })
    );
    conform('a redirect to the same origin keeps authorization and cookie', (c, env) =>
        c.get(`${env.http}/redirect/302?to=/same`, {
            redirects: 1,
            headers: { authorization: 'Bearer secret', cookie: 'sid=1' }
        })
    );
    it('a redirect to a non-http location [intended difference: Redirects stay on http and https]', async () => {
        expect(guideHeadings).toContain('Redirects stay on http and https');
        const location = encodeURIComponent('file:///etc/passwd');
        const ours = await run(client, (c, env) => c.get(`${env.http}/redirect/302?to=${location}`, { redirects: 1 }));
        expect(failure(ours)).toMatchObject({ status: 502, class: 'invalid redirect' });
        // Upstream throws from inside a socket callback and takes the process down: run it in a child.
        const script = `
            const Wreck = require('@hapi/wreck');
            Wreck.get(process.argv[1], { redirects: 1 }).then(() => console.log('resolved'), (err) => console.log('rejected', err.message));
        `;
        const child = spawn(process.execPath, ['-e', script, `${servers.http}/redirect/302?to=${location}`], {
            cwd: fileURLToPath(new URL('../..', import.meta.url))
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
        });
        const [code] = (await once(child, 'close')) as [number | null];
        expect(code).not.toBe(0);
        expect(stderr).toMatch(/ERR_INVALID_PROTOCOL/);
    });
});

describe('2.1 headers', () => {
    conform('custom headers, names in any case', (c, env) =>
        c.get(`${env.http}/h`, { headers: { 'X-Custom': 'a', 'x-lower': 'b', Accept: 'text/plain' } })
    );
    conform('a header with a list of values', (c, env) =>
        c.get(`${env.http}/h`, { headers: { 'x-list': ['a', 'b'] } })
    );
    conform('a number header value', (c, env) => c.get(`${env.http}/h`, { headers: { 'x-n': 5 } }));
    conform('host given by the caller', (c, env) => c.get(`${env.http}/h`, { headers: { host: 'example.test' } }));
    conform('content-type given with an object payload', (c, env) =>
        c.post(`${env.http}/h`, { payload: { a: 1 }, headers: { 'content-type': 'application/vnd.x+json' } })
    );
    conform('content-length given with a string payload', (c, env) =>
        c.post(`${env.http}/h`, { payload: 'abc', headers: { 'content-length': 3 } })
    );
    conform('user credentials in the uri become basic authorization', (c, env) =>
        c.get(env.http.replace('http://', 'http://user:pass@'))
    );
    conform(
        'percent-encoded user credentials in the uri',
        (c, env) => c.get(env.http.replace('http://', 'http://user:p%40ss@')),
        {
            guide: 'Credentials in the URI are percent-decoded',
            check: (ours) =>
                expect(ours.received[0]?.headers.authorization).toBe(
                    `Basic ${Buffer.from('user:p@ss').toString('base64')}`
                )
        }
    );
    conform(
        'a header value set to null',
        (c, env) => c.get(`${env.http}/h`, { headers: { 'x-null': null, 'x-kept': 'k' } }),
        {
            guide: 'null and undefined mean "not set"',
            check: (ours, theirs) => {
                expect(ours.received[0]?.headers).not.toHaveProperty('x-null');
                expect(theirs.received[0]?.headers['x-null']).toBe('null');
            }
        }
    );
    conform('a header value set to undefined is not sent', (c, env) =>
        c.get(`${env.http}/h`, { headers: { host: undefined, 'x-undefined': undefined } })
    );
    conform('a header value with CR/LF is refused', (c, env) =>
        c.get(`${env.http}/h`, { headers: { 'x-evil': 'a\r\nx-injected: 1' } })
    );
});

describe('2.1 TLS: ciphers, secureProtocol', () => {
    conform('ciphers', (c, env) =>
        c.get(`${env.https}/t`, { rejectUnauthorized: false, ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' })
    );
    conform('ciphers nothing matches', (c, env) =>
        c.get(`${env.https}/t`, { rejectUnauthorized: false, ciphers: 'NULL-MD5', agent: undefined })
    );
    conform('secureProtocol', (c, env) =>
        c.get(`${env.https}/t`, { rejectUnauthorized: false, secureProtocol: 'TLSv1_2_method' })
    );
});

describe('2.1 socketPath × uri forms', () => {
    conform('a full URL', (c, env) => c.get('http://localhost/over-unix', { socketPath: env.socketPath }));
    conform('a path-only URI (Docker-API style)', (c, env) =>
        c.get('/containers/json?all=1', { socketPath: env.socketPath })
    );
    conform('a POST with a payload', (c, env) => c.post('/build', { socketPath: env.socketPath, payload: { a: 1 } }));
    conform(
        'a full URL naming another host',
        (c, env) => c.get('http://docker.example/v1/info', { socketPath: env.socketPath }),
        {
            guide: 'socketPath keeps the host of a full URL',
            check: (ours, theirs) => {
                expect(ours.received[0]?.headers.host).toBe('docker.example');
                expect(theirs.received[0]?.headers.host).toBe('localhost');
            }
        }
    );
    conform('a path-only URI with baseUrl and socketPath', (c, env) =>
        c.get('/v1/info', { socketPath: env.socketPath, baseUrl: 'http://localhost/api/' })
    );
});

describe('2.1 timeout, lookup, family, hints', () => {
    conform('no response within timeout', (c, env) => c.get(`${env.http}/slow/2000`, { timeout: 50 }), {
        guide: 'Failures carry their underlying error',
        check: (ours, theirs) => {
            expect(failure(ours)).toMatchObject({ status: 504, class: 'request timeout', data: 'error ETIMEDOUT' });
            expect(failure(theirs)).toMatchObject({ status: 504, class: 'request timeout', data: undefined });
        }
    });
    conform('a response within timeout', (c, env) => c.get(`${env.http}/t`, { timeout: 5000 }));
    conform(
        'timeout bounds a chain of redirects',
        (c, env) => {
            // Four hops of 100 ms each: every one within the timeout, the chain not.
            const hop = (to: string) => `/slow-redirect/100?to=${encodeURIComponent(to)}`;
            return c.get(`${env.http}${hop(hop(hop(hop('/end'))))}`, { timeout: 250, redirects: 4 });
        },
        {
            guide: 'Failures carry their underlying error',
            check: (ours, theirs) => {
                expect(failure(ours)).toMatchObject({ status: 504, class: 'request timeout', data: 'error ETIMEDOUT' });
                expect(failure(theirs)).toMatchObject({ status: 504, class: 'request timeout', data: undefined });
            }
        }
    );
    const lookup = ((_host: string, options: { all?: boolean }, callback: Function) =>
        options.all
            ? callback(null, [{ address: '127.0.0.1', family: 4 }])
            : callback(null, '127.0.0.1', 4)) as unknown as LookupFunction;
    conform('lookup resolves a name', (c, env) => c.get(env.http.replace('127.0.0.1', 'conformance.test'), { lookup }));
    conform('lookup with family 4 and hints', (c, env) =>
        c.get(env.http.replace('127.0.0.1', 'conformance.test'), { lookup, family: 4, hints: 0 })
    );
    conform('a lookup that fails', (c, env) =>
        c.get(env.http.replace('127.0.0.1', 'unknown.test'), {
            lookup: ((_h: string, _o: unknown, callback: Function) =>
                callback(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' }))) as unknown as LookupFunction
        })
    );
});

describe('2.2 read options: gunzip × json × content types and encodings', () => {
    const bodies: Record<string, string> = { json: '{"a":[1,2]}', text: 'plain text' };
    const types: Array<string | null> = ['application/json', 'text/plain', null];
    const encodings: Array<string | null> = [null, 'gzip', 'x-gzip', 'deflate', 'br'];
    const gunzips = [false, true, 'force'] as const;
    const jsons = [false, true, 'strict', 'force'] as const;
    const replyUrl = (env: Env, body: string, type: string | null, encoding: string | null, label = true) => {
        const query = new URLSearchParams({ body });
        if (type !== null) {
            query.set('type', type);
        }

        if (encoding !== null) {
            query.set('encoding', encoding);
        }

        if (!label) {
            query.set('label', '0');
        }

        return `${env.http}/reply/200?${query}`;
    };

    for (const [bodyName, body] of Object.entries(bodies)) {
        for (const type of types) {
            for (const encoding of encodings) {
                const scenario: Scenario = async (c, env) => {
                    // One request per combination of read options (run together, logged in a fixed order).
                    const combinations = gunzips.flatMap((gunzip) => jsons.map((json) => ({ gunzip, json })));
                    const results = await Promise.all(
                        combinations.map(async (options) => {
                            const res = await c.request('GET', replyUrl(env, body, type, encoding));
                            const settled = await c.read(res, options).then(
                                (payload: unknown) => ({ value: payload }),
                                (error: unknown) => ({ error })
                            );
                            return [options, outcomeOf(settled)];
                        })
                    );
                    env.log(results);
                };
                // Upstream decodes gzip only; br and deflate come back compressed (or fail to parse) there.
                const decodedHere = encoding === 'br' || encoding === 'deflate';
                conform(
                    `${bodyName} body, content-type ${type}, content-encoding ${encoding}`,
                    scenario,
                    decodedHere
                        ? {
                              guide: 'gunzip decodes deflate and br too',
                              check: (ours) => {
                                  // With gunzip: true, the body comes back decoded.
                                  const [, outcome] = (ours.logged[0] as unknown[][])[0]![4] as [unknown, Outcome];
                                  const expected = bodyName === 'empty' ? '' : body;
                                  expect(JSON.stringify(outcome)).toContain(JSON.stringify(expected).slice(1, -1));
                              }
                          }
                        : undefined
                );
            }
        }
    }

    for (const encoding of [null, 'gzip', 'br']) {
        conform(`an empty body, content-encoding ${encoding}, with gunzip and json`, async (c, env) => {
            const res = await c.request('GET', replyUrl(env, '', 'application/json', encoding));
            return c.read(res, { gunzip: encoding !== 'br', json: true });
        });
    }

    conform(
        'a +json media type with json: true and strict',
        async (c, env) => {
            const url = `${env.http}/reply/200?type=${encodeURIComponent('application/problem+json')}&body=${json({ p: 1 })}`;
            return [
                await c.read(await c.request('GET', url), { json: true }),
                await c.get(url, { json: 'strict' })
            ].map((result) => JSON.stringify((result as { payload?: unknown }).payload ?? result));
        },
        // request() asks for nothing: it does not read.
        asksForProblemDocuments(undefined, strictJsonAccept)
    );
    conform("gunzip: 'force' decodes an unlabelled gzip body", async (c, env) => {
        const res = await c.request('GET', replyUrl(env, 'hidden', 'text/plain', 'gzip', false));
        return c.read(res, { gunzip: 'force' });
    });
    conform('gunzip: true leaves an unlabelled gzip body as it is', async (c, env) => {
        const res = await c.request('GET', replyUrl(env, 'hidden', 'text/plain', 'gzip', false));
        return c.read(res, { gunzip: true });
    });
    conform(
        'a body that does not decompress',
        async (c, env) => {
            const res = await c.request('GET', replyUrl(env, 'not gzip', 'text/plain', null));
            return c.read(res, { gunzip: 'force' }).catch((err: Error & { output?: unknown }) => {
                env.log(err.output === undefined ? 'bare error' : 'HttpError');
                throw err;
            });
        },
        {
            guide: 'Every failure is an HttpError',
            check: (ours, theirs) => {
                expect(ours.outcome).toEqual(theirs.outcome);
                expect(ours.logged).toEqual([['HttpError']]);
                expect(theirs.logged).toEqual([['bare error']]);
            }
        }
    );
    conform(
        'gunzip as a request option',
        (c, env) => c.get(replyUrl(env, 'z', 'text/plain', 'gzip'), { gunzip: true }),
        {
            guide: 'gunzip offers every coding it decodes',
            check: (ours, theirs) => {
                expect(theirs.received[0]?.headers['accept-encoding']).toBe('gzip');
                expect(ours.received[0]?.headers['accept-encoding']).toMatch(/^gzip, br(, zstd)?$/);
                expect(ours.outcome).toEqual(theirs.outcome);
            }
        }
    );
    for (const encoding of ['gzip, identity', 'deflate, gzip']) {
        conform(
            `a content-encoding list (${encoding}) with gunzip`,
            (c, env) => c.get(replyUrl(env, 'listed', 'text/plain', encoding), { gunzip: true }),
            {
                guide: 'Content-Encoding lists are decoded, unknown codings refused',
                check: (ours) => {
                    expect(value(ours).payload).toEqual({ buffer: 'listed' });
                }
            }
        );
    }

    conform(
        'a HEAD answered with content-encoding gzip, read with gunzip',
        async (c, env) => c.read(await c.request('HEAD', replyUrl(env, 'z', 'text/plain', 'gzip')), { gunzip: true }),
        {
            guide: 'A response without a body is not decoded',
            check: (ours, theirs) => {
                expect(theirs.outcome).toEqual({ error: { class: 'decompression' } });
                expect(ours.outcome).toEqual({ value: { payload: { buffer: '' } } });
            }
        }
    );
    conform(
        'invalid JSON with json: true',
        (c, env) =>
            c.get(`${env.http}/reply/200?type=application/json&body=${encodeURIComponent('{"a":')}`, { json: true }),
        asksForProblemDocuments(jsonAccept)
    );
    conform('maxBytes under, at and over the size', async (c, env) => {
        const url = `${env.http}/reply/200?body=${'x'.repeat(100)}`;
        await c.get(url, { maxBytes: 101 });
        await c.get(url, { maxBytes: 100 });
        return c.get(url, { maxBytes: 99 });
    });
    conform('maxBytes over a chunked body', async (c, env) => {
        const res = await c.request('POST', `${env.http}/echo-large`, { payload: 'y'.repeat(5000) });
        return c.read(res, { maxBytes: 10 });
    });
    conform(
        'read timeout on a stalled body',
        async (c, env) => {
            const res = await c.request('GET', `${env.http}/partial`);
            return c.read(res, { timeout: 50 });
        },
        {
            guide: 'Failures carry their underlying error',
            check: (ours, theirs) => {
                expect(failure(ours)).toMatchObject({ status: 408, data: 'error ETIMEDOUT' });
                expect(failure(theirs)).toMatchObject({ status: 408, data: undefined });
            }
        }
    );
    conform('a body cut by the server', (c, env) => c.get(`${env.http}/partial-cut`));
    conform('null read options', async (c, env) => c.read(await c.request('GET', `${env.http}/r`), null), {
        guide: 'null and undefined mean "not set"',
        check: (ours, theirs) => {
            expect(value(ours).payload).toEqual({ buffer: JSON.stringify({ method: 'GET', url: '/r', body: '' }) });
            expect(failure(theirs).class).toBe('invalid option');
        }
    });
    conform('reading a toReadableStream() stream', (c) => c.read(c.toReadableStream('streamed')));
    conform('reading a toReadableStream() stream as JSON (force)', (c) =>
        c.read(c.toReadableStream('{"x":1}'), { json: 'force' })
    );
    conform('reading a stream with headers', (c) =>
        c.read(Object.assign(c.toReadableStream('{"x":1}'), { headers: { 'content-type': 'application/json' } }), {
            json: true
        })
    );
    conform("reading a stream without headers with json: 'strict'", (c) =>
        c.read(c.toReadableStream('{"x":1}'), { json: 'strict' })
    );
    conform('reading a failing stream', (c) =>
        c.read(
            new Readable({
                read() {
                    this.destroy(new Error('source failed'));
                }
            })
        )
    );
    conform(
        "gunzip: 'force' on a stream that is not a response",
        (c) => c.read(Readable.from([gzipSync('zipped')]), { gunzip: 'force' }),
        {
            guide: 'read() takes any readable stream',
            check: (ours, theirs) => {
                expect(value(ours).payload).toEqual({ buffer: 'zipped' });
                expect(failure(theirs).class).toBe('payload stream');
            }
        }
    );
});

describe('2.3 defaults chains', () => {
    conform('headers accumulate over defaults() calls, the request wins', (c, env) =>
        c
            .defaults({ headers: { 'x-a': '1', 'x-b': '1' } })
            .defaults({ headers: { 'x-b': '2', 'x-c': '2' } })
            .get(`${env.http}/d`, { headers: { 'x-c': '3' } })
    );
    conform(
        'baseUrl, json and redirects as defaults',
        (c, env) =>
            c.defaults({ baseUrl: `${env.http}/api/`, json: true, redirects: 1 }).get('redirect/302?to=/landed'),
        asksForProblemDocuments(jsonAccept)
    );
    conform('a request option overrides a default', (c, env) =>
        c.defaults({ json: 'force', timeout: 5000 }).get(`${env.http}/reply/200?body=notjson`, { json: false })
    );
    conform('read() applies the read defaults', async (c, env) => {
        const withJson = c.defaults({ json: true });
        return withJson.read(await withJson.request('GET', `${env.http}/d`));
    });
    conform('a default payload', (c, env) => c.defaults({ payload: 'from defaults' }).post(`${env.http}/d`));
    conform('defaults() with agents replaced, then another defaults()', (c, env) =>
        c
            .defaults({
                agents: { http: new HttpAgent(), https: new HttpsAgent(), httpsAllowUnauthorized: new HttpsAgent() }
            })
            .defaults({ headers: { 'x-second': 'yes' } })
            .get(`${env.http}/d`)
    );
    conform('defaults() with incomplete agents is refused', (c) => c.defaults({ agents: { http: new HttpAgent() } }));
    conform(
        'an option set to null keeps the default',
        (c, env) =>
            c
                .defaults({ headers: { 'x-default': 'kept' }, json: true })
                .get(`${env.http}/d`, { json: null, headers: null }),
        asksForProblemDocuments(jsonAccept)
    );
});

describe('6 events', () => {
    /** Subscribes to the three events and logs what a listener can rely on. */
    function observe(c: AnyClient, env: Env): AnyClient {
        const events = c.defaults({ events: true });
        events.events.on(
            'preRequest',
            (uri: URL & { method: string; headers: Record<string, unknown> }, options: object) =>
                env.log('preRequest', uri.href, uri.method, 'payload' in options)
        );
        events.events.on('request', (req: unknown) => env.log('request', req instanceof ClientRequest));
        events.events.on(
            'response',
            (
                err: { output?: { statusCode: number } } | undefined,
                details: { req: unknown; res?: IncomingMessage; start: number; uri: URL }
            ) =>
                env.log(
                    'response',
                    err?.output?.statusCode,
                    details.res?.statusCode,
                    details.req instanceof ClientRequest,
                    typeof details.start,
                    details.uri.href
                )
        );
        return events;
    }

    conform('only a client made with events: true has an emitter', (c) => [
        typeof c.events,
        typeof c.defaults({ events: true }).events
    ]);
    conform('a success: preRequest, request, response', (c, env) => observe(c, env).get(`${env.http}/e`));
    conform('a POST with a payload', (c, env) => observe(c, env).post(`${env.http}/e`, { payload: 'p' }));
    conform('an error status', (c, env) => observe(c, env).get(`${env.http}/reply/503`));
    conform('a refused connection', (c, env) => observe(c, env).get(`http://127.0.0.1:${env.closedPort}/`));
    conform('a timeout', (c, env) => observe(c, env).get(`${env.http}/slow/2000`, { timeout: 50 }), {
        guide: 'Failures carry their underlying error',
        check: (ours, theirs) => expect(ours.logged).toEqual(theirs.logged)
    });
    conform('a redirect', (c, env) => observe(c, env).get(`${env.http}/redirect/302?to=/landed`, { redirects: 1 }), {
        guide: 'One response event per hop, in order',
        check: (ours, theirs) => {
            expect(ours.logged.map((entry) => (entry as unknown[])[0])).toEqual([
                'preRequest',
                'request',
                'response',
                'preRequest',
                'request',
                'response'
            ]);
            expect(theirs.logged.map((entry) => (entry as unknown[])[0])).toEqual([
                'preRequest',
                'request',
                'preRequest',
                'request',
                'response',
                'response'
            ]);
        }
    });
    conform('a preRequest listener adding a header', (c, env) => {
        const events = c.defaults({ events: true });
        events.events.on('preRequest', (uri: { headers: Record<string, string> }) => {
            uri.headers['x-from-listener'] = 'yes';
        });
        return events.get(`${env.http}/e`);
    });
});

describe('7 errors', () => {
    for (const status of [400, 401, 404, 418, 500, 502, 503]) {
        conform(`a ${status} response`, (c, env) => c.get(`${env.http}/reply/${status}?body=failed`));
    }

    conform(
        'a 404 with a JSON body and json: true',
        (c, env) =>
            c.get(`${env.http}/reply/404?type=application/json&body=${json({ reason: 'missing' })}`, { json: true }),
        asksForProblemDocuments(jsonAccept)
    );
    conform(
        "a 404 HTML page with json: 'strict'",
        (c, env) => c.get(`${env.http}/reply/404?type=text/html&body=nope`, { json: 'strict' }),
        {
            guide: 'An error status wins over a body json cannot parse',
            check: (ours, theirs) => {
                expect(failure(ours)).toMatchObject({
                    status: 404,
                    class: 'response error',
                    data: { isResponseError: true, payload: { buffer: 'nope' }, res: 'IncomingMessage' }
                });
                expect(failure(theirs)).toMatchObject({ status: 406 });
            }
        }
    );
    conform(
        'a 502 with an invalid JSON body and json: true',
        (c, env) => c.get(`${env.http}/reply/502?type=application/json&body=%3Chtml%3E`, { json: true }),
        {
            guide: 'An error status wins over a body json cannot parse',
            check: (ours, theirs) => {
                expect(failure(ours)).toMatchObject({ status: 502, class: 'response error' });
                expect(failure(theirs).class).toBe('invalid json');
            }
        }
    );
    const outOfCredit = { type: 'https://example.com/probs/out-of-credit', status: 403, balance: 30 };
    for (const json_ of [false, true]) {
        conform(
            `a 403 problem document (application/problem+json), json: ${json_}`,
            (c, env) =>
                c.get(`${env.http}/reply/403?type=application/problem%2Bjson&body=${json(outOfCredit)}`, {
                    json: json_
                }),
            {
                guide: 'A problem document is read for you',
                check: (ours, theirs) => {
                    const { problem, ...rest } = failure(ours).data as Record<string, unknown>;
                    expect(problem).toStrictEqual(outOfCredit);
                    // Everything else is upstream's: the status, the class, the payload as json left it.
                    expect({ ...failure(ours), data: rest }).toStrictEqual(failure(theirs));
                }
            }
        );
    }
    conform(
        "json: 'strict' refusing a 200",
        (c, env) => c.get(`${env.http}/reply/200?type=text/plain&body=x`, { json: 'strict' }),
        asksForProblemDocuments(strictJsonAccept)
    );
    conform('request() resolves with an error status', (c, env) => c.request('GET', `${env.http}/reply/500`));
    conform('a connection closed without an answer', (c, env) => c.get(`${env.http}/cut`, { agent: false }));
    conform(
        'a kept-alive connection closed without an answer',
        async (c, env) => {
            await c.get(`${env.http}/a`);
            return c.get(`${env.http}/cut`);
        },
        {
            guide: 'A request that fails on a stale kept-alive connection is sent again',
            check: (ours, theirs) => {
                // Upstream's connection was new; ours was reused, so the request went once more, on a new one.
                expect(ours.outcome).toEqual(theirs.outcome);
                expect(theirs.received).toHaveLength(2);
                expect(ours.received).toEqual([...theirs.received, theirs.received[1]]);
            }
        }
    );
    conform('a refused connection', (c, env) => c.get(`http://127.0.0.1:${env.closedPort}/`));
    conform('an unsupported protocol', (c) => c.get('ftp://127.0.0.1/file'));
    conform('an invalid uri', (c) => c.get('not a uri'));
    conform(
        'req.abort() before the response',
        (c, env) => {
            const promise = c.request('GET', `${env.http}/slow/2000`);
            promise.req.abort();
            return promise;
        },
        {
            guide: 'req.abort() rejects with an HttpError',
            check: (ours, theirs) => {
                expect(failure(ours)).toMatchObject({ status: 500, class: 'request aborted' });
                expect(failure(theirs)).toMatchObject({ status: undefined, class: 'request aborted' });
            }
        }
    );
    conform('req.destroy() before the response', (c, env) => {
        const promise = c.request('GET', `${env.http}/slow/2000`);
        promise.req.destroy();
        return promise;
    });
    conform('an AbortSignal', (c, env) => c.get(`${env.http}/slow/300`, { signal: AbortSignal.abort() }), {
        guide: 'signal cancels a request or a read',
        check: (ours, theirs) => {
            expect(failure(ours)).toMatchObject({ status: 500, class: 'request aborted' });
            expect(value(theirs).statusCode).toBe(200);
        }
    });
});

describe('2.1-2.3 bad values and unset values', () => {
    const unset: Record<string, unknown> = {
        agent: null,
        beforeRedirect: null,
        redirected: null,
        redirectMethod: null,
        redirects: null,
        timeout: null,
        payload: null,
        headers: null,
        baseUrl: undefined,
        socketPath: undefined,
        lookup: undefined
    };
    for (const [name, given] of Object.entries(unset)) {
        conform(`${name}: ${given} is not set`, (c, env) => c.get(`${env.http}/u`, { [name]: given }));
    }

    // Refused by both clients.
    const refused: Record<string, unknown> = {
        beforeRedirect: 'no',
        redirected: 5,
        payload: 5,
        agent: {},
        gunzip: 'sometimes',
        socketPath: 42
    };
    for (const [name, given] of Object.entries(refused)) {
        conform(`${name}: ${JSON.stringify(given)} is refused`, (c, env) => c.get(`${env.http}/u`, { [name]: given }));
    }

    // Accepted (and then ignored or misread) upstream; refused here before anything is sent.
    const checkedHere: Record<string, unknown> = {
        redirects: 'two',
        redirect303: 'yes',
        timeout: '50',
        maxBytes: 'big',
        headers: 'x-a: 1',
        family: 5,
        json: 'loose'
    };
    conform(
        'request() with an object payload that has no JSON (a cycle)',
        (c, env) => {
            const cyclic: Record<string, unknown> = {};
            cyclic.self = cyclic;
            return c.request('POST', `${env.http}/u`, { payload: cyclic });
        },
        {
            guide: 'An object payload with no JSON rejects',
            check: (ours, theirs) => {
                expect(theirs.outcome).toEqual({ thrown: 'invalid option' });
                expect(failure(ours).class).toBe('invalid option');
                expect(ours.received).toEqual([]);
            }
        }
    );

    for (const [name, given] of Object.entries(checkedHere)) {
        conform(
            `${name}: ${JSON.stringify(given)} is refused with a TypeError naming it`,
            (c, env) => c.get(`${env.http}/u`, { [name]: given }),
            {
                guide: 'Options are checked',
                check: (ours) => {
                    expect(failure(ours).class).toBe('invalid option');
                    expect(ours.received).toEqual([]);
                }
            }
        );
    }
});

describe('4.A toReadableStream and parseCacheControl', () => {
    conform('toReadableStream of ascii and Buffer payloads', async (c) => {
        const read = async (stream: Readable) => Buffer.concat(await stream.toArray()).toString('hex');
        return [await read(c.toReadableStream('hello', 'ascii')), await read(c.toReadableStream(Buffer.from('buf')))];
    });
    conform(
        'toReadableStream of a multi-byte string and of base64',
        async (c) => {
            const read = async (stream: Readable) => Buffer.concat(await stream.toArray()).toString('hex');
            return [await read(c.toReadableStream('héllo')), await read(c.toReadableStream('aGVsbG8=', 'base64'))];
        },
        {
            guide: 'toReadableStream yields every byte',
            check: (ours) =>
                expect(value(ours).payload).toEqual([
                    Buffer.from('héllo').toString('hex'),
                    Buffer.from('hello').toString('hex')
                ])
        }
    );
    conform(
        'parseCacheControl of a valued directive other than max-age',
        (c) => c.parseCacheControl('public, max-age=0, s-maxage=300, must-revalidate'),
        {
            guide: 'parseCacheControl gives numbers for every delta-seconds directive',
            check: (ours) => expect(value(ours).payload).toMatchObject({ 'max-age': 0, 's-maxage': 300 })
        }
    );
    for (const field of ['max-age=60, private', 'no-cache', 'max-age=abc', 'private="set-cookie"', '']) {
        conform(`parseCacheControl(${JSON.stringify(field)})`, (c) => c.parseCacheControl(field));
    }
});

describe('docs/migrating-from-wreck.md', () => {
    it('lists exactly the differences the scenarios assert', () => {
        expect([...guideHeadings].sort()).toEqual([...asserted].sort());
    });
});
