import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { selfSignedCertificate } from '../client/helpers.js';
import { freePorts, type PickPorts, startNginx, startSquid } from './servers.js';

/**
 * The harness that starts nginx and squid for the integration tests: a port another process takes
 * between its pick and the server's bind (a shared CI machine's listeners draw from the same range)
 * costs a second start on new ports, not a failed test file.
 */

let held: Server;
let heldPort: number;

beforeAll(async () => {
    held = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    heldPort = (held.address() as { port: number }).port;
});

afterAll(() => new Promise((resolve) => held.close(resolve)));

/** Ports whose first pick includes the held one, as if it had been taken since; picks after that are free ones. */
function takenFirst(): { pick: PickPorts; picks: number[][] } {
    const picks: number[][] = [];
    const pick: PickPorts = async (count) => {
        const ports = await freePorts(count);
        if (picks.length === 0) {
            ports[ports.length - 1] = heldPort;
        }

        picks.push(ports);
        return ports;
    };
    return { pick, picks };
}

describe('servers for the integration tests', () => {
    it('freePorts gives distinct ports', async () => {
        const ports = await freePorts(8);
        expect(new Set(ports).size).toBe(8);
    });

    it('nginx finding one of its ports taken is started again on new ones', async () => {
        const { pick, picks } = takenFirst();
        const nginx = await startNginx({
            tls: selfSignedCertificate(),
            idleMs: 1000,
            maxRequests: 10,
            files: { 'hello.txt': 'hello' },
            pickPorts: pick
        });
        try {
            expect(picks).toHaveLength(2);
            expect(Object.values(nginx.ports)).not.toContain(heldPort);
            const { payload } = await new Client().get(`http://127.0.0.1:${nginx.ports.limited}/hello.txt`);
            expect(String(payload)).toBe('hello');
        } finally {
            await nginx.stop();
        }
    });

    it('squid finding its port taken is started again on a new one', async () => {
        const { pick, picks } = takenFirst();
        const squid = await startSquid('user', 'pass', pick);
        try {
            expect(picks).toHaveLength(2);
            expect(squid.port).not.toBe(heldPort);
            // Without credentials squid refuses with its own challenge: it is the one listening.
            const err = await new Client()
                .get('http://127.0.0.1:1/', { proxy: `http://127.0.0.1:${squid.port}` })
                .catch((e: unknown) => e);
            expect((err as Error).message).toContain('refused the request with 407');
            const data = (err as { data: { headers: Record<string, string> } }).data;
            expect(data.headers['proxy-authenticate']).toContain('Basic realm="tracewire"');
        } finally {
            await squid.stop();
        }
    });
});
