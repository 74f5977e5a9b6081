// wrk, the C load generator, drives the static servers: a JavaScript generator (autocannon) would
// compete with the server for the two cores and flatter whichever server is slower.
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const reportScript = fileURLToPath(new URL('./wrk-report.lua', import.meta.url));

function hasWrk() {
    try {
        execFileSync('wrk', ['--version'], { stdio: 'ignore' });
        return true;
    } catch (error) {
        // `wrk --version` prints its usage and exits 1: only a missing binary is ENOENT.
        return error.code !== 'ENOENT';
    }
}

/**
 * Makes sure `wrk` is on the PATH: installs the Debian package when it is missing and this runs as
 * root, and otherwise says how to get it.
 */
export function ensureWrk(log) {
    if (hasWrk()) {
        return;
    }

    if (process.getuid?.() !== 0) {
        throw new Error(
            'wrk is not installed: install it (Debian/Ubuntu: apt-get install wrk) and run the bench again'
        );
    }

    log('  installing wrk (apt-get update && apt-get install -y wrk)');
    execFileSync('apt-get', ['update'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', 'wrk'], {
        stdio: 'ignore',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    });
    if (!hasWrk()) {
        throw new Error('apt-get install wrk did not put wrk on the PATH');
    }
}

/**
 * Runs wrk with one thread (the other core belongs to the server) and `connections` keep-alive
 * connections for `seconds`, and returns its exact counters: requests, bytes, durationUs, p50Us,
 * p99Us and the error counts (`status` counts answers outside 2xx/3xx).
 */
export function runWrk(url, { seconds, connections = 32, headers = {} }) {
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', reportScript];
    for (const [name, value] of Object.entries(headers)) {
        args.push('-H', `${name}: ${value}`);
    }

    args.push(url);
    return new Promise((resolve, reject) => {
        const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (data) => {
            output += data;
        });
        child.stderr.on('data', (data) => {
            output += data;
        });
        child.on('error', reject);
        child.on('close', (code) => {
            const line = output.split('\n').find((text) => text.startsWith('WRK-JSON '));
            if (code !== 0 || !line) {
                reject(new Error(`wrk ${args.join(' ')} failed (exit ${code}): ${output.trim()}`));
                return;
            }

            resolve(JSON.parse(line.slice('WRK-JSON '.length)));
        });
    });
}
