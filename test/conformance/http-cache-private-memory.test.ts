import { afterAll, expect, test } from 'vitest';
import { MemoryCacheStore } from '../../src/client/cache/memory-store.js';
import { Client } from '../../src/client/client.js';
import { undiciPrivate } from './http-cache/baseline.js';
import { fetchOver, runSuite, startOrigin, tableHeader, tableRow } from './http-cache/harness.js';

const origin = await startOrigin();
afterAll(() => origin.close());

test('http-cache-tests, private cache, MemoryCacheStore: at least as good as undici 8.13', async () => {
    const client = new Client().defaults({ cache: { store: new MemoryCacheStore() } });
    const summary = await runSuite(fetchOver(client), origin.url);
    console.log(`${tableHeader}\n${tableRow('private, memory', summary)}`);
    console.log(summary.failed.map((failure) => `  ${failure.id}: ${failure.message}`).join('\n'));
    expect(summary.passes).toBeGreaterThanOrEqual(undiciPrivate.passes);
    expect(summary.requiredFailures).toBeLessThan(undiciPrivate.requiredFailures);
}, 120_000);
