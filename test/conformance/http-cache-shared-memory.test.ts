import { afterAll, expect, test } from 'vitest';
import { MemoryCacheStore } from '../../src/client/cache/memory-store.js';
import { Client } from '../../src/client/client.js';
import { undiciShared } from './http-cache/baseline.js';
import { runSuite, startOrigin, startProxy, suiteFetch, tableHeader, tableRow } from './http-cache/harness.js';

const origin = await startOrigin();
const client = new Client().defaults({ cache: { store: new MemoryCacheStore(), shared: true } });
const proxy = await startProxy(client, origin.url);
afterAll(async () => {
    await proxy.close();
    await origin.close();
});

test('http-cache-tests, shared cache (proxy mode), MemoryCacheStore: at least as good as undici 8.13', async () => {
    const summary = await runSuite(suiteFetch, proxy.url);
    console.log(`${tableHeader}\n${tableRow('shared, memory', summary)}`);
    console.log(summary.failed.map((failure) => `  ${failure.id}: ${failure.message}`).join('\n'));
    expect(summary.passes).toBeGreaterThanOrEqual(undiciShared.passes);
    expect(summary.requiredFailures).toBeLessThan(undiciShared.requiredFailures);
}, 120_000);
