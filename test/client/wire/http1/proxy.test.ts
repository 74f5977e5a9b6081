import * as http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import * as net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client, type ClientEvents } from '../../../../src/client/index.js';
import { proxyPoolLimit } from '../../../../src/client/wire/http1/proxy-agents.js';
import { isHttpError } from '../../../../src/errors/index.js';
import { type Echo, echo, startHttp, startHttps, type TestServer } from '../../helpers.js';
import { startProxy, type TestProxy } from '../../test-proxy.js';

/** Connections open at the proxies (client side of each, as the proxy sees them). */
function openSockets(): number {
    return proxy.open.size;
}

/** Lets I/O run (no timers) until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
    while (!done()) {
        await new Promise((resolve) => setImmediate(resolve));
    }
}

/** Direct connections to the made-up host names of these tests land on loopback too. */
const loopback = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) {
        callback(null, [{ address: '127.0.0.1', family: 4 }]);
    } else {
        callback(null, '127.0.0.1', 4);
    }
}) as unknown as LookupFunction;

/** An https origin that tells whether the request came over TLS. */
const tlsEcho: Parameters<typeof startHttps>[0] = (req, res) => {
    res.setHeader('x-encrypted', String((req.socket as TLSSocket).encrypted === true));
    echo(req, res);
};

const proxyVariables = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];
const otherVariables = ['all_proxy', 'ALL_PROXY'];
let savedEnvironment: Record<string, string | undefined> = {};

// Every test starts from an environment without proxy variables, and gets the machine's back after.
beforeEach(() => {
    savedEnvironment = {};
    for (const name of [...proxyVariables, ...otherVariables]) {
        savedEnvironment[name] = process.env[name];
        delete process.env[name];
    }
});

afterEach(() => {
    for (const [name, value] of Object.entries(savedEnvironment)) {
        if (value === undefined) {
            delete process.env[name];
        } else {
            process.env[name] = value;
        }
    }
});

let origin: TestServer;
let secureOrigin: TestServer;
let proxy: TestProxy;
let guardedProxy: TestProxy;
let clients: Client[] = [];

/** A client with pools of its own, so connection counts are per test. */
function freshClient(): Client {
    const created = new Client();
    clients.push(created);
    return created;
}

beforeAll(async () => {
    origin = await startHttp((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (url.pathname === '/redirect') {
            res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
            res.end();
            return;
        }

        echo(req, res);
    });
    secureOrigin = await startHttps(tlsEcho);
    proxy = await startProxy();
    guardedProxy = await startProxy('user:s3cret');
});

afterEach(() => {
    proxy.forwarded.length = 0;
    proxy.tunnels.length = 0;
    guardedProxy.forwarded.length = 0;
    guardedProxy.tunnels.length = 0;
    for (const used of clients) {
        used.agents.http.destroy();
    }

    clients = [];
});

afterAll(async () => {
    await origin.close();
    await secureOrigin.close();
    await proxy.close();
    await guardedProxy.close();
});

describe('proxy: http targets go to the proxy in absolute form', () => {
    it('sends the request to the proxy, which forwards it to the origin', async () => {
        const { payload } = await freshClient().get<Echo>(`${origin.url}/path?q=1`, { proxy: proxy.url, json: true });
        expect(payload.url).toBe('/path?q=1');
        expect(proxy.forwarded.map((seen) => seen.url)).toEqual([`${origin.url}/path?q=1`]);
        expect(proxy.tunnels).toEqual([]);
    });

    it('accepts the proxy as a URL object', async () => {
        const { payload } = await freshClient().get<Echo>(`${origin.url}/url`, {
            proxy: new URL(proxy.url),
            json: true
        });
        expect(payload.url).toBe('/url');
        expect(proxy.forwarded).toHaveLength(1);
    });

    it('sends the credentials of the proxy URL to the proxy as proxy-authorization: Basic', async () => {
        const { payload } = await freshClient().post<Echo>(`${origin.url}/guarded`, {
            proxy: guardedProxy.url,
            payload: 'body',
            json: true
        });
        expect(guardedProxy.forwarded[0]?.headers['proxy-authorization']).toBe(
            `Basic ${Buffer.from('user:s3cret').toString('base64')}`
        );
        expect(payload).toMatchObject({ method: 'POST', payload: 'body' });
        expect(payload.headers['proxy-authorization']).toBeUndefined();
    });

    it('keeps the connections to the proxy alive: one pool per proxy', async () => {
        const user = freshClient();
        const before = proxy.connections;
        for (let i = 0; i < 3; i++) {
            await user.get(`${origin.url}/again`, { proxy: proxy.url });
        }

        expect(proxy.forwarded).toHaveLength(3);
        expect(proxy.connections - before).toBe(1);
    });

    it('keeps at most proxyPoolLimit pools: rotating credentials do not grow them without bound', async () => {
        const user = freshClient();
        const before = openSockets();
        for (let i = 0; i < proxyPoolLimit + 6; i++) {
            await user.get(`${origin.url}/rotating`, { proxy: `http://user${i}:pw@127.0.0.1:${proxy.port}` });
        }

        expect(proxy.forwarded).toHaveLength(proxyPoolLimit + 6);
        // The retired pools closed their idle connections.
        await until(() => openSockets() - before <= proxyPoolLimit);
        // The newest pools are kept (their connection is reused), the oldest were retired (a new one is opened).
        const connections = proxy.connections;
        await user.get(`${origin.url}/rotating`, {
            proxy: `http://user${proxyPoolLimit + 5}:pw@127.0.0.1:${proxy.port}`
        });
        await user.get(`${origin.url}/rotating`, { proxy: `http://user6:pw@127.0.0.1:${proxy.port}` });
        expect(proxy.connections).toBe(connections);
        await user.get(`${origin.url}/rotating`, { proxy: `http://user0:pw@127.0.0.1:${proxy.port}` });
        expect(proxy.connections).toBe(connections + 1);
    });

    it('is also taken from defaults()', async () => {
        const { payload } = await freshClient()
            .defaults({ proxy: proxy.url })
            .get<Echo>(`${origin.url}/defaults`, { json: true });
        expect(payload.url).toBe('/defaults');
        expect(proxy.forwarded).toHaveLength(1);
    });
});

describe('proxy: https targets go through a CONNECT tunnel', () => {
    it('opens a tunnel to the origin, with TLS end to end', async () => {
        const { res, payload } = await freshClient().get<Echo>(`${secureOrigin.url}/secret?x=1`, {
            proxy: proxy.url,
            rejectUnauthorized: false,
            json: true
        });
        expect(res.headers['x-encrypted']).toBe('true');
        expect(payload.url).toBe('/secret?x=1');
        expect(proxy.tunnels.map((seen) => seen.target)).toEqual([`127.0.0.1:${secureOrigin.port}`]);
        expect(proxy.forwarded).toEqual([]);
    });

    it('checks the certificate of the origin, not of the proxy', async () => {
        const err = await freshClient()
            .get(`${secureOrigin.url}/`, { proxy: proxy.url })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect((err as { data: { code: string } }).data.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
        expect(proxy.tunnels).toHaveLength(1);
    });

    it('sends the credentials of the proxy URL on the CONNECT only', async () => {
        const { payload } = await freshClient().get<Echo>(`${secureOrigin.url}/`, {
            proxy: guardedProxy.url,
            rejectUnauthorized: false,
            json: true
        });
        expect(guardedProxy.tunnels[0]?.headers['proxy-authorization']).toBe(
            `Basic ${Buffer.from('user:s3cret').toString('base64')}`
        );
        expect(payload.headers['proxy-authorization']).toBeUndefined();
    });

    it('reuses the tunnel for the next requests to the same origin', async () => {
        const user = freshClient();
        for (let i = 0; i < 3; i++) {
            await user.get(`${secureOrigin.url}/again`, { proxy: proxy.url, rejectUnauthorized: false });
        }

        expect(proxy.tunnels).toHaveLength(1);
    });
});

describe('proxy: a refusing or unreachable proxy is a 502 naming it', () => {
    const redacted = () => `http://***@127.0.0.1:${guardedProxy.port}`;
    const wrongCredentials = () => `http://user:wrong@127.0.0.1:${guardedProxy.port}`;

    it('407 to CONNECT: 502 with the proxy (credentials redacted) and its status in data', async () => {
        const err = await freshClient()
            .get(`${secureOrigin.url}/`, { proxy: wrongCredentials(), rejectUnauthorized: false })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        const error = err as Error & { data: Record<string, unknown> };
        expect(error.message).toBe(`Proxy ${redacted()} refused the tunnel with 407 Proxy Authentication Required`);
        expect(error.message).not.toContain('wrong');
        expect(error.data).toMatchObject({ proxy: redacted(), statusCode: 407 });
        expect((error.data.headers as http.IncomingHttpHeaders)['proxy-authenticate']).toBe('Basic realm="test"');
    });

    it('407 to an absolute-form request: the same 502', async () => {
        const err = await freshClient()
            .request('GET', `${origin.url}/`, { proxy: wrongCredentials() })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 502)).toBe(true);
        expect((err as Error).message).toBe(
            `Proxy ${redacted()} refused the request with 407 Proxy Authentication Required`
        );
        expect((err as { data: unknown }).data).toMatchObject({ proxy: redacted(), statusCode: 407 });
    });

    it('an unreachable proxy: 502 naming it, with the network error code', async () => {
        const closed = net.createServer();
        await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
        const { port } = closed.address() as AddressInfo;
        await new Promise<void>((resolve) => closed.close(() => resolve()));
        for (const target of [origin.url, secureOrigin.url]) {
            const err = await freshClient()
                .get(`${target}/`, { proxy: `http://me:pw@127.0.0.1:${port}` })
                .catch((e: unknown) => e);
            expect(isHttpError(err, 502)).toBe(true);
            expect((err as Error).message).toContain(`proxy http://***@127.0.0.1:${port} could not be reached`);
            expect((err as Error).message).not.toContain('pw');
            expect((err as { data: { code: string } }).data.code).toBe('ECONNREFUSED');
        }
    });

    it('retry: an unreachable proxy is retried like any refused connection, a refusing one is not', async () => {
        const closed = net.createServer();
        await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
        const { port } = closed.address() as AddressInfo;
        await new Promise<void>((resolve) => closed.close(() => resolve()));
        const retry = { backoff: () => 0 };
        const unreachable = await freshClient()
            .get(`${origin.url}/`, { proxy: `http://127.0.0.1:${port}`, retry })
            .catch((e: unknown) => e);
        expect((unreachable as { data: { attempts: number } }).data.attempts).toBe(3);
        const refusing = await freshClient()
            .get(`${secureOrigin.url}/`, { proxy: wrongCredentials(), retry })
            .catch((e: unknown) => e);
        expect((refusing as { data: { attempts: number } }).data.attempts).toBe(1);
        expect(guardedProxy.tunnels).toHaveLength(1);
    });

    it('the hop reports the refusal in its response event', async () => {
        const observed = freshClient().defaults({ events: true });
        const seen: Parameters<ClientEvents['response']>[] = [];
        observed.events!.on('response', (...args) => seen.push(args));
        await observed.get(`${secureOrigin.url}/`, { proxy: wrongCredentials() }).catch(() => undefined);
        expect(seen).toHaveLength(1);
        expect(seen[0]?.[0]?.output.statusCode).toBe(502);
        expect(seen[0]?.[1].res).toBeUndefined();
    });

    it('a 407 of an origin reached directly is its response, as ever', async () => {
        const strict = await startHttp((_req, res) => {
            res.writeHead(407);
            res.end();
        });
        try {
            const res = await freshClient().request('GET', strict.url, { proxy: false });
            expect(res.statusCode).toBe(407);
            res.resume();
        } finally {
            await strict.close();
        }
    });
});

describe('proxy: proxy-authorization never reaches an origin', () => {
    const basic = `Basic ${Buffer.from('user:s3cret').toString('base64')}`;

    it('http target through the proxy: the header goes to the proxy, which consumes it', async () => {
        const { payload } = await freshClient().get<Echo>(`${origin.url}/`, {
            proxy: proxy.url,
            headers: { 'Proxy-Authorization': basic },
            json: true
        });
        expect(proxy.forwarded[0]?.headers['proxy-authorization']).toBe(basic);
        expect(payload.headers['proxy-authorization']).toBeUndefined();
    });

    it('https target: a proxy-authorization header goes on the CONNECT, not into the tunnel', async () => {
        const { payload } = await freshClient().get<Echo>(`${secureOrigin.url}/`, {
            proxy: `http://127.0.0.1:${guardedProxy.port}`,
            headers: { 'proxy-authorization': basic },
            rejectUnauthorized: false,
            json: true
        });
        expect(guardedProxy.tunnels[0]?.headers['proxy-authorization']).toBe(basic);
        expect(payload.headers['proxy-authorization']).toBeUndefined();
    });

    it('a hop that NO_PROXY sends direct drops the header', async () => {
        process.env.HTTP_PROXY = proxy.url;
        process.env.NO_PROXY = 'direct.test';
        const { payload } = await freshClient().get<Echo>(`http://direct.test:${origin.port}/`, {
            proxy: true,
            lookup: loopback,
            headers: { 'proxy-authorization': basic },
            json: true
        });
        expect(proxy.forwarded).toEqual([]);
        expect(payload.headers['proxy-authorization']).toBeUndefined();
    });

    it('a redirect from a proxied hop to a direct one carries no proxy credentials', async () => {
        process.env.HTTP_PROXY = guardedProxy.url;
        process.env.NO_PROXY = 'direct.test';
        const to = `http://direct.test:${origin.port}/landed`;
        const { payload } = await freshClient().get<Echo>(
            `http://proxied.test:${origin.port}/redirect?to=${encodeURIComponent(to)}`,
            { proxy: true, lookup: loopback, redirects: 1, json: true }
        );
        expect(guardedProxy.forwarded[0]?.headers['proxy-authorization']).toBe(basic);
        expect(guardedProxy.forwarded).toHaveLength(1);
        expect(payload.url).toBe('/landed');
        expect(payload.headers['proxy-authorization']).toBeUndefined();
    });

    it('a redirect from a proxied http hop to an https origin carries them on the CONNECT only', async () => {
        const to = `${secureOrigin.url}/landed`;
        const { payload } = await freshClient().get<Echo>(`${origin.url}/redirect?to=${encodeURIComponent(to)}`, {
            proxy: guardedProxy.url,
            rejectUnauthorized: false,
            redirects: 1,
            json: true
        });
        expect(guardedProxy.forwarded).toHaveLength(1);
        expect(guardedProxy.tunnels).toHaveLength(1);
        expect(payload.url).toBe('/landed');
        expect(payload.headers['proxy-authorization']).toBeUndefined();
    });

    it('without the proxy option, headers are sent as given (no proxy, nothing to protect)', async () => {
        const { payload } = await freshClient().get<Echo>(`${origin.url}/`, {
            headers: { 'proxy-authorization': basic },
            json: true
        });
        expect(payload.headers['proxy-authorization']).toBe(basic);
    });
});

describe('proxy: true reads the environment at each hop', () => {
    it('HTTP_PROXY for http targets, HTTPS_PROXY for https ones', async () => {
        process.env.HTTP_PROXY = proxy.url;
        process.env.HTTPS_PROXY = guardedProxy.url;
        const user = freshClient();
        await user.get(`${origin.url}/plain`, { proxy: true });
        await user.get(`${secureOrigin.url}/secure`, { proxy: true, rejectUnauthorized: false });
        expect(proxy.forwarded.map((seen) => seen.url)).toEqual([`${origin.url}/plain`]);
        expect(guardedProxy.tunnels).toHaveLength(1);
        expect(proxy.tunnels).toEqual([]);
    });

    it('the lower-case variables too', async () => {
        process.env.http_proxy = proxy.url;
        process.env.https_proxy = proxy.url;
        const user = freshClient();
        await user.get(`${origin.url}/`, { proxy: true });
        await user.get(`${secureOrigin.url}/`, { proxy: true, rejectUnauthorized: false });
        expect(proxy.forwarded).toHaveLength(1);
        expect(proxy.tunnels).toHaveLength(1);
    });

    it('no variable: direct', async () => {
        const { payload } = await freshClient().get<Echo>(`${origin.url}/direct`, { proxy: true, json: true });
        expect(payload.url).toBe('/direct');
        expect(proxy.forwarded).toEqual([]);
    });

    it('is read when the request is made, not when the client is', async () => {
        const user = freshClient().defaults({ proxy: true });
        await user.get(`${origin.url}/1`);
        process.env.HTTP_PROXY = proxy.url;
        await user.get(`${origin.url}/2`);
        expect(proxy.forwarded.map((seen) => seen.url)).toEqual([`${origin.url}/2`]);
    });

    const noProxyForms: [string, string, boolean][] = [
        ['a host name', 'direct.test', false],
        ['a host name, which does not cover its subdomains', 'test', true],
        ['a domain suffix with a leading dot', '.corp.test', false],
        ['a domain suffix with a leading *.', '*.corp.test', false],
        ['host:port with the port of the target', 'direct.test:PORT', false],
        ['host:port with another port', 'direct.test:1', true],
        ['*, every host', '*', false],
        ['a list, spaces and commas', 'elsewhere.test, direct.test', false]
    ];
    for (const [form, value, proxied] of noProxyForms) {
        it(`NO_PROXY ${form} (${value}): ${proxied ? 'proxied' : 'direct'}`, async () => {
            process.env.HTTP_PROXY = proxy.url;
            process.env.NO_PROXY = value.replace('PORT', String(origin.port));
            const host = value.includes('corp') ? 'api.corp.test' : 'direct.test';
            const { payload } = await freshClient().get<Echo>(`http://${host}:${origin.port}/no-proxy`, {
                proxy: true,
                lookup: loopback,
                json: true
            });
            expect(payload.url).toBe('/no-proxy');
            expect(proxy.forwarded).toHaveLength(proxied ? 1 : 0);
        });
    }

    it('the lower-case no_proxy too', async () => {
        process.env.HTTP_PROXY = proxy.url;
        process.env.no_proxy = 'direct.test';
        await freshClient().get(`http://direct.test:${origin.port}/`, { proxy: true, lookup: loopback });
        expect(proxy.forwarded).toEqual([]);
    });

    it('is evaluated again for each redirect target', async () => {
        process.env.HTTP_PROXY = proxy.url;
        process.env.NO_PROXY = 'direct.test';
        const user = freshClient();
        // direct -> proxied
        const toProxied = `http://proxied.test:${origin.port}/landed`;
        await user.get(`http://direct.test:${origin.port}/redirect?to=${encodeURIComponent(toProxied)}`, {
            proxy: true,
            lookup: loopback,
            redirects: 1
        });
        expect(proxy.forwarded.map((seen) => seen.url)).toEqual([toProxied]);
        // proxied -> direct
        proxy.forwarded.length = 0;
        const toDirect = `http://direct.test:${origin.port}/landed`;
        const from = `http://proxied.test:${origin.port}/redirect?to=${encodeURIComponent(toDirect)}`;
        await user.get(from, { proxy: true, lookup: loopback, redirects: 1 });
        expect(proxy.forwarded.map((seen) => seen.url)).toEqual([from]);
    });

    it('ALL_PROXY is the fallback', async () => {
        process.env.ALL_PROXY = proxy.url;
        await freshClient().get(`${origin.url}/all`, { proxy: true });
        expect(proxy.forwarded.map((seen) => seen.url)).toEqual([`${origin.url}/all`]);
    });

    it('a value without a scheme is an http proxy, for https targets too', async () => {
        process.env.HTTPS_PROXY = `127.0.0.1:${proxy.port}`;
        const { res } = await freshClient().get(`${secureOrigin.url}/`, { proxy: true, rejectUnauthorized: false });
        expect(res.statusCode).toBe(200);
        expect(proxy.tunnels).toHaveLength(1);
    });

    it('a malformed proxy variable is a 500 naming the variable', async () => {
        process.env.HTTPS_PROXY = 'socks5://127.0.0.1:1080';
        const err = await freshClient()
            .get(`${secureOrigin.url}/`, { proxy: true })
            .catch((e: unknown) => e);
        expect(isHttpError(err, 500)).toBe(true);
        expect((err as Error).message).toBe(
            'The proxy from the environment (HTTPS_PROXY) must be an http: or https: URL, got socks5:'
        );
        process.env.HTTP_PROXY = 'http://[broken';
        const broken = await freshClient()
            .get(`${origin.url}/`, { proxy: true })
            .catch((e: unknown) => e);
        expect((broken as Error).message).toBe(
            'The proxy from the environment (HTTP_PROXY) must be a valid URL such as http://proxy.internal:3128'
        );
    });
});

describe('proxy: option checks', () => {
    const bad: [unknown, string][] = [
        [42, 'Option proxy must be a proxy URL (a string or a URL), true (from the environment) or false, got number'],
        ['not a url', 'Option proxy must be a valid URL such as http://proxy.internal:3128'],
        ['ftp://proxy.internal', 'Option proxy must be an http: or https: URL, got ftp:'],
        [
            'http://user:%E0%A4%A@proxy.internal',
            'Option proxy has a user name or password that is not valid percent-encoding'
        ]
    ];
    for (const [value, message] of bad) {
        it(`refuses ${JSON.stringify(value)} naming the option`, async () => {
            const err = await freshClient()
                .request('GET', origin.url, { proxy: value as string })
                .catch((e: unknown) => e);
            expect(isHttpError(err, 500)).toBe(true);
            expect((err as Error).message).toBe(message);
            expect(() => freshClient().defaults({ proxy: value as string })).toThrow(message);
        });
    }

    it('refuses socketPath with a proxy', async () => {
        const err = await freshClient()
            .request('GET', origin.url, { proxy: proxy.url, socketPath: '/tmp/none.sock' })
            .catch((e: unknown) => e);
        expect((err as Error).message).toBe(
            'Option proxy cannot be combined with socketPath: a UNIX socket is a direct connection'
        );
    });

    it('refuses agent with a proxy', async () => {
        const err = await freshClient()
            .request('GET', origin.url, { proxy: true, agent: new http.Agent() })
            .catch((e: unknown) => e);
        expect((err as Error).message).toBe(
            'Option proxy cannot be combined with agent: the proxy has its own connection pool'
        );
    });

    for (const none of [false, null, undefined]) {
        it(`proxy: ${none} goes direct, even with HTTP_PROXY set`, async () => {
            process.env.HTTP_PROXY = proxy.url;
            const { payload } = await freshClient().get<Echo>(`${origin.url}/none`, {
                proxy: none as boolean,
                json: true
            });
            expect(payload.url).toBe('/none');
            expect(proxy.forwarded).toEqual([]);
        });
    }
});
