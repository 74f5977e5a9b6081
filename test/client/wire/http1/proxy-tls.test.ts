import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../../../src/client/index.js';
import { isHttpError } from '../../../../src/errors/index.js';
import { type Echo, echo, selfSignedCertificate, startHttp, startHttps, type TestServer } from '../../helpers.js';
import { startProxy, type TestProxy } from '../../test-proxy.js';

/**
 * An `https://` proxy: the client speaks TLS to the proxy itself, then (for an https origin) TLS
 * again inside the CONNECT tunnel. The proxy's certificate is checked against the trusted CAs like
 * any server's; the test certificate is trusted only in a child process started with
 * NODE_EXTRA_CA_CERTS, the way a service behind a corporate proxy trusts its CA.
 */

const repo = fileURLToPath(new URL('../../../..', import.meta.url));
let origin: TestServer;
let secureOrigin: TestServer;
let proxy: TestProxy;
let caDir: string;

beforeAll(async () => {
    origin = await startHttp(echo);
    secureOrigin = await startHttps(echo);
    proxy = await startProxy('user:pa55', selfSignedCertificate());
    caDir = mkdtempSync(join(tmpdir(), 'tracewire-ca-'));
    writeFileSync(join(caDir, 'ca.pem'), selfSignedCertificate().cert);
    // The child process loads the built package: `npm test` builds first; alone, build here (the
    // JavaScript comes from tsconfig.build-js.json, as `npm run build` makes it).
    if (!existsSync(join(repo, 'dist/src/index.js'))) {
        execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build-js.json'], {
            cwd: repo,
            stdio: 'inherit'
        });
    }
}, 120_000);

afterAll(async () => {
    await Promise.all([origin.close(), secureOrigin.close(), proxy.close()]);
    rmSync(caDir, { recursive: true, force: true });
});

describe('proxy: an https:// proxy', () => {
    it('a proxy whose certificate is not trusted: 502 naming the proxy, nothing forwarded', async () => {
        const api = new Client();
        for (const target of [origin.url, secureOrigin.url]) {
            const err = await api.get(`${target}/`, { proxy: proxy.url }).catch((e: unknown) => e);
            expect(isHttpError(err, 502)).toBe(true);
            expect((err as Error).message).toContain(`proxy https://***@127.0.0.1:${proxy.port}`);
            expect((err as Error).message).not.toContain('pa55');
        }

        expect(proxy.forwarded).toHaveLength(0);
        expect(proxy.tunnels).toHaveLength(0);
    });

    it('a trusted proxy carries http origins in absolute form and https origins through a tunnel', async () => {
        const script = `
            import { client } from 'tracewire';
            const [proxy, ...targets] = process.argv.slice(1);
            const answers = [];
            for (const target of targets) {
                const { res, payload } = await client.get(target, { proxy, json: true });
                answers.push({ statusCode: res.statusCode, payload });
            }
            console.log(JSON.stringify(answers));`;
        const { stdout } = await promisify(execFile)(
            process.execPath,
            ['--input-type=module', '-e', script, proxy.url, `${origin.url}/plain`, `${secureOrigin.url}/secure`],
            { cwd: repo, env: { ...process.env, NODE_EXTRA_CA_CERTS: join(caDir, 'ca.pem') } }
        );
        const [plain, secure] = JSON.parse(stdout) as { statusCode: number; payload: Echo }[];
        expect(plain).toMatchObject({ statusCode: 200, payload: { method: 'GET', url: '/plain' } });
        expect(secure).toMatchObject({ statusCode: 200, payload: { method: 'GET', url: '/secure' } });
        // The credentials went to the proxy (on the absolute-form request and on CONNECT), never further.
        const basic = `Basic ${Buffer.from('user:pa55').toString('base64')}`;
        expect(proxy.forwarded.map((hop) => [hop.url, hop.headers['proxy-authorization']])).toEqual([
            [`${origin.url}/plain`, basic]
        ]);
        expect(proxy.tunnels.map((tunnel) => [tunnel.target, tunnel.headers['proxy-authorization']])).toEqual([
            [`127.0.0.1:${secureOrigin.port}`, basic]
        ]);
        expect(plain!.payload.headers['proxy-authorization']).toBeUndefined();
        expect(secure!.payload.headers['proxy-authorization']).toBeUndefined();
    });
});
