import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { MockNetwork } from '../../src/testing/index.js';
import { hopsOf } from './parity/outcome.js';
import { startRealOrigin } from './parity/real-origin.js';
import { scenarios } from './parity/scenarios.js';
import { mockScript, type Protocol, type Scenario } from './parity/script.js';

/**
 * A test written against the mock behaves as the same test against a real server (docs/testing.md,
 * "What the mock is held to"): each scenario's script (parity/script.ts) is played once by a real
 * server on loopback and once by a MockNetwork at the same origin, over HTTP/1.1 and over HTTP/2, and
 * the client must report the same of both: status, body, the origin's headers, the error and its
 * cause, and every hop (retries, redirects, re-sends, connection reuse) as its events tell it.
 */

let cleanups: (() => unknown)[] = [];
afterEach(async () => {
    for (const cleanup of cleanups.reverse()) {
        await cleanup();
    }

    cleanups = [];
});

function clientFor(scenario: Scenario, protocol: Protocol, mock: MockNetwork | undefined): Client {
    const api = new Client().defaults({
        events: true,
        ...(scenario.verify ? {} : { rejectUnauthorized: false }),
        ...(protocol === '2' ? { http2: { idleTimeout: 1000 } } : {}),
        ...(mock === undefined ? {} : { mock })
    });
    cleanups.push(() => {
        for (const agent of Object.values(api.agents)) {
            agent.destroy();
        }
    });
    return api;
}

async function play(scenario: Scenario, protocol: Protocol, mocked: boolean): Promise<unknown> {
    const origin = await startRealOrigin(mocked ? [] : scenario.steps, protocol, scenario.refused === true);
    cleanups.push(() => origin.close());
    let mock: MockNetwork | undefined;
    if (mocked) {
        mock = new MockNetwork();
        cleanups.push(() => mock?.close());
        if (scenario.refused) {
            mock.origin(origin.url)
                .intercept({ path: () => true })
                .fault('connection-refused')
                .persist();
        } else if (scenario.verify) {
            mock.origin(origin.url)
                .intercept({ path: () => true })
                .fault('tls')
                .persist();
        } else {
            mockScript(mock, origin.url, scenario.steps);
        }
    }

    const api = clientFor(scenario, protocol, mock);
    const hops = hopsOf(api);
    const outcome = await scenario.run(api, origin.url);
    if (scenario.unordered) {
        hops.sort();
    }

    // What the hops report is normalized to the origin: the mock's and the server's ports differ.
    return JSON.parse(
        JSON.stringify({ outcome, hops }).replaceAll(origin.url, 'ORIGIN').replaceAll(new URL(origin.url).host, 'HOST')
    );
}

describe.each(['1.1', '2'] as const)('over HTTP/%s, the mock and a real server give the same outcome', (protocol) => {
    const played = scenarios.filter((scenario) => scenario.only === undefined || scenario.only === protocol);
    it.each(played.map((scenario) => [scenario.name, scenario] as const))('%s', async (_name, scenario) => {
        const real = await play(scenario, protocol, false);
        const mocked = await play(scenario, protocol, true);
        expect(mocked).toEqual(real);
    });
});

it('holds at least 30 scenarios over each protocol', () => {
    expect(scenarios.filter((scenario) => scenario.only !== '2').length).toBeGreaterThanOrEqual(30);
    expect(scenarios.filter((scenario) => scenario.only !== '1.1').length).toBeGreaterThanOrEqual(30);
});
