import { execFile } from 'node:child_process';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What importing the package costs a process that uses only the client: the proxy packages, the
 * static plugin's handlers, eventemitter3 and the cache layer load when first used
 * (src/client/wire/proxy-packages.ts, src/static/plugin.ts, src/client/pipeline/emitter.ts, src/client/cache/load-layer.ts,
 * src/client/wire/load-http2.ts),
 * not with the package (and tracewire/testing, an entry of its own, never unless imported), and Node's built-ins are taken without their ES namespaces
 * (src/common/node-modules.ts). Runs the built package (`npm test` builds first) in a process of its own,
 * which records every module it loads through a module hook (`module.registerHooks`, Node 22.15+:
 * every supported line; Node 20 has no synchronous hooks).
 */
describe.runIf(typeof (nodeModule as { registerHooks?: unknown }).registerHooks === 'function')(
    'modules loaded on first use',
    () => {
        it('loads each part with its first use: the proxy packages, the cache layer, the HTTP/2 transport, eventemitter3, the static handlers; tracewire/testing only when imported', async () => {
            const script = `
                import { registerHooks } from 'node:module';
                const http = process.getBuiltinModule('node:http');
                const loaded = [];
                registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
                const proxyModules = () => loaded.filter((url) => /node_modules\\/(https?-proxy-agent|agent-base|proxy-from-env|debug)\\//.test(url)).length;
                const staticModules = () => loaded.filter((url) => url.includes('/dist/src/static/') && !url.endsWith('/plugin.js')).length;
                const seen = {};
                const { client, staticFiles } = await import(${JSON.stringify(`${repo}dist/src/index.js`)});
                seen.imported = { proxy: proxyModules(), static: staticModules() };

                // An origin that also answers as a forward proxy: an http target through a proxy is an absolute-form request to it.
                let stoppedServed = 0;
                const server = http.createServer((req, res) => {
                    stoppedServed += req.url === '/stopped' ? 1 : 0;
                    res.end(req.url.startsWith('http://') ? 'proxied' : 'direct');
                });
                await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
                const origin = 'http://127.0.0.1:' + server.address().port;
                const direct = await client.get(origin + '/');
                const emitterModules = () => loaded.filter((url) => url.includes('/node_modules/eventemitter3/')).length;
                seen.direct = { payload: direct.payload.toString(), proxy: proxyModules(), static: staticModules(), emitter: emitterModules() };
                client.defaults({ events: true });
                seen.events = { emitter: emitterModules() > 0 };
                // Node's bundled undici loads when node:http's ES namespace is built (an ES import of it).
                seen.undici = process.moduleLoadList.some((name) => name.includes('undici'));
                // The cache layer loads with the first request that has a cache; a request stopped meanwhile never starts.
                const cacheLayer = () => loaded.filter((url) => url.endsWith('/dist/src/client/cache/layer.js')).length;
                seen.direct.cacheLayer = cacheLayer();
                const stopped = (options) => {
                    const controller = new AbortController();
                    const call = client.get(origin + '/stopped', { ...options, signal: controller.signal });
                    controller.abort();
                    return call.then(() => 'resolved', (err) => err.message);
                };
                seen.abortedWhileLoading = { cached: await stopped({ cache: true }), plain: await stopped({}), served: stoppedServed };
                const first = await client.get(origin + '/', { cache: true });
                seen.cached = { payload: first.payload.toString(), miss: first.res.headers['cache-status'].includes('fwd=miss'), layer: cacheLayer() };
                const proxied = await client.get('http://example.test/', { proxy: origin });
                seen.proxied = { payload: proxied.payload.toString(), proxy: proxyModules() > 0 };
                server.close();

                // The HTTP/2 transport loads with the first hop that goes over HTTP/2 (an h2c one here).
                // (Its request's handle and fields load with the client: the first hop makes them before the rest has loaded;
                // and its error codes' names, which an observer reads of a failed stream's session end: http2-session-end.ts.)
                const http2Modules = () => loaded.filter((url) => url.includes('/dist/src/client/wire/http2/') && !url.endsWith('/request.js') && !url.endsWith('/headers.js') && !url.endsWith('/error-codes.js')).length;
                const before = http2Modules();
                const h2Server = process.getBuiltinModule('node:http2').createServer((req, res) => res.end('h2'));
                await new Promise((resolve) => h2Server.listen(0, '127.0.0.1', resolve));
                const h2 = await client.get('http://127.0.0.1:' + h2Server.address().port + '/', { http2: { h2c: true, idleTimeout: 1 } });
                seen.http2 = { before, after: http2Modules() > 0, payload: h2.payload.toString(), version: h2.res.httpVersion };
                h2Server.close();

                const Hapi = await import('@hapi/hapi');
                const hapi = Hapi.server();
                await hapi.register(staticFiles);
                seen.registered = { static: staticModules() > 0, handlers: [...hapi.decorations.handler].sort() };

                // tracewire/testing loads only when imported: every use above (plain, cached, proxied, HTTP/2,
                // the static plugin) left it out; imported, it answers the root client, which loads nothing more of it.
                const testingModules = () => loaded.filter((url) => url.includes('/dist/src/testing/')).length;
                const unused = testingModules();
                const { MockNetwork } = await import(${JSON.stringify(`${repo}dist/src/testing/index.js`)});
                const imported = testingModules();
                const mock = new MockNetwork().install();
                mock.origin('https://api.test').get('/').reply(200, 'mocked');
                const mocked = await client.get('https://api.test/');
                mock.uninstall();
                seen.testing = { unused, imported: imported > 0, payload: mocked.payload.toString(), more: testingModules() - imported };
                console.log(JSON.stringify(seen));
                process.exit(0);`;
            const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
                cwd: repo
            });
            expect(JSON.parse(stdout)).toStrictEqual({
                imported: { proxy: 0, static: 0 },
                direct: { payload: 'direct', proxy: 0, static: 0, emitter: 0, cacheLayer: 0 },
                abortedWhileLoading: { cached: 'Client request aborted', plain: 'Client request aborted', served: 0 },
                cached: { payload: 'direct', miss: true, layer: 1 },
                events: { emitter: true },
                undici: false,
                proxied: { payload: 'proxied', proxy: true },
                http2: { before: 0, after: true, payload: 'h2', version: '2.0' },
                registered: { static: true, handlers: ['directory', 'file'] },
                testing: { unused: 0, imported: true, payload: 'mocked', more: 0 }
            });
        }, 30_000);
    }
);
