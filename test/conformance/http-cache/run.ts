import { afterAll, expect, test } from 'vitest';
import type { CacheStore } from '../../../src/client/contract/cache-store.js';
import { Client } from '../../../src/client/surface/client.js';
import { undiciPrivate, undiciShared } from './baseline.js';
import { fetchOver, report, runSuite, startOrigin, startProxy, suiteFetch } from './harness.js';

/**
 * One run of the suite, as a test: `mode` private (the suite's fetch replaced by the client) or
 * shared (the suite's proxy mode), on a store made by `makeStore`. It prints the table row and each
 * required failure (docs/cache.md explains them), and asserts the run beats undici 8.13's interceptor.
 * `skip` reports it skipped (a store this Node.js does not have).
 */
export function conformanceRun(
    mode: 'private' | 'shared',
    storeName: string,
    makeStore: () => CacheStore,
    closeStore: (store: CacheStore) => void = () => {},
    { skip = false }: { skip?: boolean } = {}
): void {
    const closers: (() => Promise<void> | void)[] = [];
    afterAll(async () => {
        for (const close of closers.reverse()) {
            await close();
        }
    });

    test.skipIf(skip)(
        `http-cache-tests, ${mode} cache, ${storeName}: more passes and fewer required failures than undici 8.13`,
        async () => {
            const origin = await startOrigin();
            closers.push(origin.close);
            const store = makeStore();
            closers.push(() => closeStore(store));
            const client = new Client().defaults({ cache: { store, shared: mode === 'shared' } });
            let summary: Awaited<ReturnType<typeof runSuite>>;
            if (mode === 'private') {
                summary = await runSuite(fetchOver(client), origin.url);
            } else {
                const proxy = await startProxy(client, origin.url);
                closers.push(proxy.close);
                summary = await runSuite(suiteFetch, proxy.url);
            }

            console.log(report(`${mode}, ${storeName}`, summary));
            const undici = mode === 'private' ? undiciPrivate : undiciShared;
            expect(summary.passes).toBeGreaterThanOrEqual(undici.passes);
            expect(summary.requiredFailures).toBeLessThan(undici.requiredFailures);
        },
        120_000
    );
}
