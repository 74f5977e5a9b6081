// nginx serving the static benchmark's files, the platform's limit for a file server: one worker,
// sendfile, etag, gzip_static. This script only starts and stops nginx and reports its CPU time;
// the requests go to nginx itself.
//   node bench/servers/nginx.js <fixtures directory>
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { answerParent } from '../lib/processes.js';

const [fixtures] = process.argv.slice(2);
const binary = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find(existsSync);
/** Linux reports CPU times in clock ticks: 100 per second on every common configuration. */
const ticksPerSecond = 100;

function freePort() {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
}

function waitForPort(port, child) {
    return new Promise((resolve, reject) => {
        const deadline = Date.now() + 10_000;
        const attempt = () => {
            if (child.exitCode !== null) {
                reject(new Error(`nginx exited with code ${child.exitCode}`));
                return;
            }

            const socket = net.connect(port, '127.0.0.1', () => {
                socket.destroy();
                resolve();
            });
            socket.once('error', () => {
                socket.destroy();
                if (Date.now() > deadline) {
                    reject(new Error(`nginx did not listen on ${port}`));
                } else {
                    setTimeout(attempt, 50);
                }
            });
        };
        attempt();
    });
}

/** User + system CPU time of nginx's master and workers, in µs (as `process.cpuUsage()` reports). */
function cpuOf(masterPid) {
    const usage = { user: 0, system: 0 };
    for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) {
            continue;
        }

        let stat;
        try {
            stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        } catch {
            continue;
        }

        // The fields after the command name, which may itself hold spaces and parentheses.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const pid = Number(entry);
        const parent = Number(fields[1]);
        if (pid === masterPid || parent === masterPid) {
            usage.user += (Number(fields[11]) / ticksPerSecond) * 1e6;
            usage.system += (Number(fields[12]) / ticksPerSecond) * 1e6;
        }
    }

    return usage;
}

async function start() {
    if (!binary) {
        throw new Error('nginx is not installed (apt-get install -y nginx-light)');
    }

    const dir = mkdtempSync(join(os.tmpdir(), 'tracewire-bench-nginx-'));
    const port = await freePort();
    const conf = `
        ${process.getuid?.() === 0 ? 'user root root;' : ''}
        worker_processes 1;
        error_log ${join(dir, 'error.log')} warn;
        pid ${join(dir, 'nginx.pid')};
        events { worker_connections 1024; }
        http {
            client_body_temp_path ${join(dir, 'body')};
            proxy_temp_path ${join(dir, 'proxy')};
            fastcgi_temp_path ${join(dir, 'fastcgi')};
            uwsgi_temp_path ${join(dir, 'uwsgi')};
            scgi_temp_path ${join(dir, 'scgi')};
            access_log off;
            types { text/plain txt; application/octet-stream bin; }
            charset utf-8;
            charset_types text/plain;
            sendfile on;
            tcp_nopush on;
            etag on;
            keepalive_timeout 60s;
            keepalive_requests 1000000;
            server {
                listen 127.0.0.1:${port};
                location /f/ { alias ${fixtures}/; gzip_static on; }
            }
        }`;
    writeFileSync(join(dir, 'nginx.conf'), conf);
    const child = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
        stdio: 'ignore'
    });
    const stop = () => {
        if (child.exitCode === null) {
            child.kill('SIGTERM');
        }

        rmSync(dir, { recursive: true, force: true });
    };
    process.on('exit', stop);
    await waitForPort(port, child);
    return { port, pid: child.pid };
}

let master = 0;
answerParent({
    cpu: () => cpuOf(master)
});

start().then(
    ({ port, pid }) => {
        master = pid;
        process.send({ ready: true, port });
    },
    (error) => {
        process.send({ error: error.stack ?? String(error) });
        process.exit(1);
    }
);
process.on('SIGTERM', () => process.exit(0));
