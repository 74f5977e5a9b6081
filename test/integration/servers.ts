import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Real nginx, squid and redis-server for the integration tests: each runs as an ordinary child process on
 * 127.0.0.1, with a generated configuration and every file it writes in a temp dir, and is stopped
 * (no process left) by `stop()`. A missing binary is installed when we are root (a fresh machine
 * running `npm test`, like .ci/run); otherwise the setup fails saying what to install.
 */

const isRoot = process.getuid?.() === 0;

/** The path of `binary`, installing its Debian package first when it is missing and we are root. */
export function ensureBinary(binary: string, candidates: string[], pkg: string): string {
    const found = candidates.find((path) => existsSync(path));
    if (found !== undefined) {
        return found;
    }

    if (!isRoot) {
        throw new Error(
            `The integration tests need ${binary}: install it (apt-get install ${pkg}) or run npm test as root`
        );
    }

    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', pkg], {
        stdio: 'ignore',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    });
    const installed = candidates.find((path) => existsSync(path));
    if (installed === undefined) {
        throw new Error(`apt-get install ${pkg} did not provide ${binary}`);
    }

    return installed;
}

/**
 * `count` distinct ports free on 127.0.0.1 right now: held open together, so the kernel cannot hand
 * the same port out twice, then released for the server process to bind.
 */
export async function freePorts(count: number): Promise<number[]> {
    const servers = Array.from({ length: count }, () => createServer());
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
    const ports = servers.map((server) => (server.address() as { port: number }).port);
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    return ports;
}

/** Where a server's ports come from: `freePorts`, or a test's own picks. */
export type PickPorts = (count: number) => Promise<number[]>;

/** Thrown when a server process could not bind a port: taken by someone else since `freePorts` released it. */
class PortTakenError extends Error {}

/** How nginx, squid and redis-server report a port they could not bind (errno 98). */
const portTaken = /Address already in use/;

/**
 * Starts a server on ports picked by `freePorts`, with new ones when another process took one between
 * their release and the server's bind (a shared CI machine's other listeners and connections draw from
 * the same ephemeral range).
 */
async function withFreePorts<T>(
    count: number,
    start: (ports: number[]) => Promise<T>,
    pickPorts: PickPorts = freePorts
): Promise<T> {
    for (let attempt = 1; ; attempt++) {
        try {
            return await start(await pickPorts(count));
        } catch (err) {
            if (!(err instanceof PortTakenError) || attempt === 3) {
                throw err;
            }
        }
    }
}

/** Whether something accepts connections on `port` of 127.0.0.1. */
function accepts(port: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => {
            socket.destroy();
            resolve(true);
        });
        socket.once('error', () => resolve(false));
    });
}

/**
 * Resolves once the server's log says it is up and every port accepts connections; rejects with the
 * log if it reports a port taken, exits, or takes too long. A port accepting alone is not enough: it
 * may be another process's, the one that made the server's bind fail.
 */
async function waitUntilListening(
    ports: number[],
    ready: RegExp,
    child: ChildProcess,
    describe: () => string
): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
        // nginx keeps retrying a failed bind for a few seconds, squid exits: their logs tell at once.
        if (portTaken.test(describe())) {
            throw new PortTakenError(`a port was taken before the server bound it:\n${describe()}`);
        }

        if (child.exitCode !== null || child.signalCode !== null) {
            throw new Error(`exited (${child.exitCode ?? child.signalCode}) before listening:\n${describe()}`);
        }

        if (ready.test(describe()) && (await Promise.all(ports.map(accepts))).every(Boolean)) {
            return;
        }

        if (Date.now() > deadline) {
            throw new Error(`not listening on ${ports.join(', ')} after 30 s:\n${describe()}`);
        }

        await new Promise((resolve) => setTimeout(resolve, 50));
    }
}

/** A running server process and its temp dir. */
export interface RealServer {
    readonly dir: string;
    read(file: string): string;
    stop(): Promise<void>;
}

/** A server process as `run` starts it: also signalled directly (a crash, a pause). */
interface RunningServer extends RealServer {
    signal(name: NodeJS.Signals): void;
}

/** Starts `binary`; `ready` is the line its `log` shows once its listening sockets are bound. */
async function run(
    binary: string,
    args: string[],
    dir: string,
    ports: number[],
    log: string,
    ready: RegExp
): Promise<RunningServer> {
    const child = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
    });
    const read = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : '');
    const describe = () => `${binary} ${args.join(' ')}\n${output}\n${read(log)}`;
    const stop = async () => {
        if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            await exited;
            clearTimeout(timer);
        }

        rmSync(dir, { recursive: true, force: true });
    };
    try {
        await waitUntilListening(ports, ready, child, describe);
    } catch (err) {
        await stop();
        throw err;
    }

    return { dir, read, stop, signal: (name) => child.kill(name) };
}

/** A temp dir the server's unprivileged workers (nginx's, squid's) can read and write too. */
function serverDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    chmodSync(dir, 0o777);
    return dir;
}

/** The files of an nginx site under `dir`/www, and the test certificate beside them; returns the web root. */
function writeNginxSite(
    dir: string,
    files: Record<string, string | Buffer>,
    tls: { key: Buffer; cert: Buffer }
): string {
    const root = join(dir, 'www');
    for (const [name, content] of Object.entries(files)) {
        mkdirSync(join(root, name, '..'), { recursive: true, mode: 0o755 });
        writeFileSync(join(root, name), content, { mode: 0o644 });
    }

    writeFileSync(join(dir, 'cert.pem'), tls.cert);
    writeFileSync(join(dir, 'key.pem'), tls.key);
    return root;
}

/**
 * The start of an nginx configuration kept under `dir`, up to the opening of its `http` block: one worker,
 * every path of its own in `dir`, the access log in `logFormat`, the MIME `types` given, gzip on for text.
 */
function nginxPreamble(dir: string, logFormat: string, types: string): string {
    return `
            ${isRoot ? 'user root root;' : ''}
            worker_processes 1;
            error_log ${join(dir, 'error.log')} notice;
            pid ${join(dir, 'nginx.pid')};
            events { worker_connections 1024; }
            http {
                client_body_temp_path ${join(dir, 'body')};
                proxy_temp_path ${join(dir, 'proxy')};
                fastcgi_temp_path ${join(dir, 'fastcgi')};
                uwsgi_temp_path ${join(dir, 'uwsgi')};
                scgi_temp_path ${join(dir, 'scgi')};
                log_format tracewire '${logFormat}';
                access_log ${join(dir, 'access.log')} tracewire;
                types { ${types} }
                default_type text/plain;
                gzip on;
                gzip_min_length 1;
                gzip_types text/plain application/json;`;
}

export interface NginxPorts {
    /** Plain http; gzip on; keepalive_timeout 60s; keepalive_requests 1000. */
    http: number;
    /** The same site over TLS with the test certificate. */
    https: number;
    /** Idle connections closed after `idleMs` (the idle-close race). */
    idle: number;
    /** At most `maxRequests` requests per connection. */
    limited: number;
}

export interface Nginx extends RealServer {
    readonly ports: NginxPorts;
    /** The web root: put the files to serve here. */
    readonly root: string;
    /** Access log lines: `connection connection_requests method uri status`. */
    accessLog(): { connection: number; order: number; method: string; uri: string; status: number }[];
}

export async function startNginx(options: {
    tls: { key: Buffer; cert: Buffer };
    idleMs: number;
    maxRequests: number;
    files: Record<string, string | Buffer>;
    /** `content-encoding` values nginx adds to the files of /listed/, by path (none when absent). */
    codings?: Record<string, string>;
    /** Where its four ports come from: `freePorts` when absent (servers.test.ts passes its own). */
    pickPorts?: PickPorts;
}): Promise<Nginx> {
    const binary = ensureBinary('nginx', ['/usr/sbin/nginx', '/usr/local/sbin/nginx'], 'nginx-light');
    return withFreePorts(
        4,
        async (picked) => {
            const dir = serverDir('tracewire-nginx-');
            const root = writeNginxSite(dir, options.files, options.tls);
            const [http = 0, https = 0, idle = 0, limited = 0] = picked;
            const ports: NginxPorts = { http, https, idle, limited };
            // The locations shared by every server block: what the tests ask of a real origin.
            const site = `
            root ${root};
            location = /no-content { add_header content-encoding gzip always; return 204; }
            location /not-modified/ { add_header content-encoding gzip always; }
            location /static-gz/ { gzip_static on; }
            location /listed/ { default_type application/octet-stream; gzip off; add_header content-encoding $listed_coding; }
        `;
            const conf = `${nginxPreamble(dir, '$connection $connection_requests $request_method $request_uri $status', 'text/plain txt; application/json json;')}
                etag on;
                map $uri $listed_coding {
                    default "";
                    ${Object.entries(options.codings ?? {})
                        .map(([path, coding]) => `${path} "${coding}";`)
                        .join('\n')}
                }
                server { listen 127.0.0.1:${ports.http}; keepalive_timeout 60s; keepalive_requests 1000; ${site} }
                server {
                    listen 127.0.0.1:${ports.https} ssl;
                    ssl_certificate ${join(dir, 'cert.pem')};
                    ssl_certificate_key ${join(dir, 'key.pem')};
                    keepalive_timeout 60s;
                    ${site}
                }
                server { listen 127.0.0.1:${ports.idle}; keepalive_timeout ${options.idleMs}ms; ${site} }
                server { listen 127.0.0.1:${ports.limited}; keepalive_timeout 60s; keepalive_requests ${options.maxRequests}; ${site} }
            }`;
            writeFileSync(join(dir, 'nginx.conf'), conf);
            const server = await run(
                binary,
                ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'],
                dir,
                Object.values(ports),
                'error.log',
                // Logged at notice level once the master process has bound every listening socket.
                /start worker processes/
            );
            return {
                ...server,
                ports,
                root,
                accessLog: () =>
                    server
                        .read('access.log')
                        .split('\n')
                        .filter((line) => line !== '')
                        .map((line) => {
                            const [connection, order, method, uri, status] = line.split(' ');
                            return {
                                connection: Number(connection),
                                order: Number(order),
                                method: method!,
                                uri: uri!,
                                status: Number(status)
                            };
                        })
            };
        },
        options.pickPorts
    );
}

/** The access log line of an HTTP/2 nginx: `connection connection_requests method uri status protocol`. */
export interface Http2LogEntry {
    connection: number;
    order: number;
    method: string;
    uri: string;
    status: number;
    protocol: string;
}

export interface NginxHttp2 extends RealServer {
    /** HTTP/2 over TLS (ALPN h2, HTTP/1.1 too), gzip on; PUT under /dav/ writes files. */
    readonly port: number;
    /** The same, with at most `maxRequests` streams per connection (then GOAWAY) and `maxStreams` at once. */
    readonly limitedPort: number;
    readonly root: string;
    accessLog(): Http2LogEntry[];
}

/** nginx 1.25.1 turned `listen ... http2` into the `http2 on` directive. */
function http2Directives(binary: string, port: number): { listen: string; http2: string } {
    // `nginx -v` writes its version to stderr.
    const { stderr } = spawnSync(binary, ['-v'], { encoding: 'utf8' });
    const version = /nginx\/(\d+)\.(\d+)\.(\d+)/.exec(stderr);
    const [major, minor, patch] = (version?.slice(1) ?? ['0', '0', '0']).map(Number) as [number, number, number];
    const separate = major > 1 || (major === 1 && (minor > 25 || (minor === 25 && patch >= 1)));
    return separate
        ? { listen: `listen 127.0.0.1:${port} ssl;`, http2: 'http2 on;' }
        : { listen: `listen 127.0.0.1:${port} ssl http2;`, http2: '' };
}

/**
 * nginx speaking HTTP/2 over TLS with the test certificate, on two ports (`pickPorts`: `freePorts`
 * when absent): one as configured by default, one that limits the streams of a connection.
 */
export async function startNginxHttp2(options: {
    tls: { key: Buffer; cert: Buffer };
    files: Record<string, string | Buffer>;
    maxRequests: number;
    maxStreams: number;
    pickPorts?: PickPorts;
}): Promise<NginxHttp2> {
    const binary = ensureBinary('nginx', ['/usr/sbin/nginx', '/usr/local/sbin/nginx'], 'nginx-light');
    return withFreePorts(
        2,
        async ([port = 0, limitedPort = 0]) => {
            const dir = serverDir('tracewire-nginx-h2-');
            const root = writeNginxSite(dir, options.files, options.tls);
            mkdirSync(join(root, 'dav'), { recursive: true, mode: 0o777 });
            chmodSync(join(root, 'dav'), 0o777);
            const site = (listenPort: number, limits: string) => {
                const { listen, http2 } = http2Directives(binary, listenPort);
                return `server {
                    ${listen} ${http2}
                    ssl_certificate ${join(dir, 'cert.pem')};
                    ssl_certificate_key ${join(dir, 'key.pem')};
                    root ${root};
                    ${limits}
                    location /dav/ { dav_methods PUT; create_full_put_path on; client_max_body_size 64m; }
                }`;
            };
            const conf = `${nginxPreamble(
                dir,
                '$connection $connection_requests $request_method $request_uri $status $server_protocol',
                'text/plain txt; application/json json; application/octet-stream bin;'
            )}
                ${site(port, '')}
                ${site(limitedPort, `keepalive_requests ${options.maxRequests}; http2_max_concurrent_streams ${options.maxStreams};`)}
            }`;
            writeFileSync(join(dir, 'nginx.conf'), conf);
            const server = await run(
                binary,
                ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'],
                dir,
                [port, limitedPort],
                'error.log',
                /start worker processes/
            );
            return {
                ...server,
                port,
                limitedPort,
                root,
                accessLog: () =>
                    server
                        .read('access.log')
                        .split('\n')
                        .filter((line) => line !== '')
                        .map((line) => {
                            const [connection, order, method, uri, status, protocol] = line.split(' ');
                            return {
                                connection: Number(connection),
                                order: Number(order),
                                method: method!,
                                uri: uri!,
                                status: Number(status),
                                protocol: protocol!
                            };
                        })
            };
        },
        options.pickPorts
    );
}

export interface Squid extends RealServer {
    readonly port: number;
    /** Access log lines as squid writes them (its native format). */
    accessLog(): string[];
}

/**
 * Squid as a forward proxy on 127.0.0.1 asking for basic auth, checked by basic_ncsa_auth against an
 * htpasswd file; its port from `pickPorts` (`freePorts` when absent).
 */
export async function startSquid(user: string, password: string, pickPorts?: PickPorts): Promise<Squid> {
    const binary = ensureBinary('squid', ['/usr/sbin/squid', '/usr/local/sbin/squid'], 'squid');
    const helper = ['/usr/lib/squid/basic_ncsa_auth', '/usr/lib64/squid/basic_ncsa_auth'].find((path) =>
        existsSync(path)
    );
    if (helper === undefined) {
        throw new Error('squid is installed without its basic_ncsa_auth helper');
    }

    return withFreePorts(
        1,
        async (picked) => {
            const dir = serverDir('tracewire-squid-');
            const hash = execFileSync('openssl', ['passwd', '-apr1', password]).toString().trim();
            writeFileSync(join(dir, 'htpasswd'), `${user}:${hash}\n`, { mode: 0o644 });
            const [port = 0] = picked;
            const conf = `
        http_port 127.0.0.1:${port}
        visible_hostname tracewire-test
        ${isRoot ? 'cache_effective_user proxy' : ''}
        pid_filename ${join(dir, 'squid.pid')}
        cache_log ${join(dir, 'cache.log')}
        access_log stdio:${join(dir, 'access.log')}
        coredump_dir ${dir}
        cache deny all
        shutdown_lifetime 0 seconds
        auth_param basic program ${helper} ${join(dir, 'htpasswd')}
        auth_param basic realm tracewire
        auth_param basic children 2
        acl authenticated proxy_auth REQUIRED
        http_access allow authenticated
        http_access deny all
    `;
            writeFileSync(join(dir, 'squid.conf'), conf, { mode: 0o644 });
            const server = await run(
                binary,
                ['-N', '-f', join(dir, 'squid.conf')],
                dir,
                [port],
                'cache.log',
                /Accepting HTTP Socket connections/
            );
            return {
                ...server,
                port,
                accessLog: () =>
                    server
                        .read('access.log')
                        .split('\n')
                        .filter((line) => line !== '')
            };
        },
        pickPorts
    );
}

/** A redis-server on 127.0.0.1 that a test can crash, restart on its port, pause and resume. */
export interface RedisServer {
    readonly port: number;
    /** Its log so far (empty while it is not running). */
    log(): string;
    /** Kills it (SIGKILL, a crash): what it held is gone. */
    kill(): Promise<void>;
    /** Runs it again, empty, on the same port, once it was killed. */
    restart(): Promise<void>;
    /** Stops it answering (SIGSTOP): its sockets stay open, nothing is read. */
    pause(): void;
    /** Lets it answer again (SIGCONT). */
    resume(): void;
    /** Ends it for good and removes its files. */
    stop(): Promise<void>;
}

function redisBinaries(): { server: string; cli: string } {
    const server = ensureBinary(
        'redis-server',
        ['/usr/bin/redis-server', '/usr/local/bin/redis-server'],
        'redis-server'
    );
    const cli = ensureBinary('redis-cli', ['/usr/bin/redis-cli', '/usr/local/bin/redis-cli'], 'redis-tools');
    return { server, cli };
}

// Started with no persistence (a restart is empty), its log in its dir; `extra` adds settings (a cluster's).
async function runRedis(binary: string, port: number, extra: string[]): Promise<RunningServer> {
    const dir = serverDir('tracewire-redis-');
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    args.push('--dir', dir, '--logfile', join(dir, 'redis.log'), '--daemonize', 'no', ...extra);
    // Logged once the listening socket is bound (and, in a cluster, the cluster bus's).
    return run(binary, args, dir, [port], 'redis.log', /Ready to accept connections/);
}

/**
 * A redis-server (Debian's `redis-server`) as a child process on a port from `pickPorts`
 * (`freePorts` when absent); `args` are added to its command line (`--maxmemory 2mb`, say).
 */
export async function startRedis(options: { args?: string[]; pickPorts?: PickPorts } = {}): Promise<RedisServer> {
    const { server: binary } = redisBinaries();
    const extra = options.args ?? [];
    let current: RunningServer | undefined;
    const port = await withFreePorts(
        1,
        async ([picked = 0]) => {
            current = await runRedis(binary, picked, extra);
            return picked;
        },
        options.pickPorts
    );
    return {
        port,
        log: () => current?.read('redis.log') ?? '',
        async kill() {
            current?.signal('SIGKILL');
            await current?.stop();
            current = undefined;
        },
        async restart() {
            // The port was the server's a moment ago: another process taking it meanwhile is possible, but rare.
            for (let attempt = 1; ; attempt++) {
                try {
                    current = await runRedis(binary, port, extra);
                    return;
                } catch (err) {
                    if (!(err instanceof PortTakenError) || attempt === 5) {
                        throw err;
                    }

                    await new Promise((resolve) => setTimeout(resolve, 200));
                }
            }
        },
        pause: () => current?.signal('SIGSTOP'),
        resume: () => current?.signal('SIGCONT'),
        async stop() {
            // A paused server ignores SIGTERM until it runs again.
            current?.signal('SIGCONT');
            await current?.stop();
            current = undefined;
        }
    };
}

/** A Redis Cluster of masters on 127.0.0.1, each holding a third of the slots. */
export interface RedisCluster {
    /** The client port of each master. */
    readonly ports: number[];
    stop(): Promise<void>;
}

/**
 * Three redis-server masters in cluster mode (each with its cluster bus on a port of its own), joined
 * by `redis-cli --cluster create`, resolved once every node reports the cluster ok.
 */
export async function startRedisCluster(pickPorts?: PickPorts): Promise<RedisCluster> {
    const { server: binary, cli } = redisBinaries();
    return withFreePorts(
        6,
        async (picked) => {
            const ports = picked.slice(0, 3);
            const nodes: RunningServer[] = [];
            const stop = async () => {
                await Promise.all(nodes.map((node) => node.stop()));
            };
            try {
                for (const [i, port] of ports.entries()) {
                    const bus = String(picked[3 + i]);
                    const cluster = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'];
                    nodes.push(await runRedis(binary, port, [...cluster, '--cluster-port', bus]));
                }

                const addresses = ports.map((port) => `127.0.0.1:${port}`);
                execFileSync(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
                    stdio: 'ignore',
                    timeout: 30_000
                });
                const deadline = Date.now() + 30_000;
                const ok = (port: number) =>
                    execFileSync(cli, ['-p', String(port), 'cluster', 'info'])
                        .toString()
                        .includes('cluster_state:ok');
                while (!ports.every(ok)) {
                    if (Date.now() > deadline) {
                        throw new Error(`the cluster on ${addresses.join(', ')} is not ok after 30 s`);
                    }

                    await new Promise((resolve) => setTimeout(resolve, 100));
                }
            } catch (err) {
                await stop();
                throw err;
            }

            return { ports, stop };
        },
        pickPorts
    );
}
