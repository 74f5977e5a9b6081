import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Hapi from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, client, type ResponseErrorData } from '../../src/client/index.js';
import { errors, problemDetails } from '../../src/index.js';

/*
 * tracewire's own client and server speak problem details to each other out of the box
 * (docs/problem-details.md, "Between tracewire's client and server"): the `problemDetails` plugin in
 * its default mode (it negotiates) on a real hapi server on loopback, and the client's helpers with no
 * header set by the caller.
 */

const typeBase = 'https://example.com/probs/';
const outOfCredit = errors.forbidden(
    'Your balance is 30, that costs 50',
    { account: 'internal-9' },
    {
        type: 'out-of-credit',
        extensions: { balance: 30 }
    }
);

let server: Hapi.Server;
let origin: string;
// The accept header of each request the server got, by path.
const accepts: (string | undefined)[] = [];

beforeAll(async () => {
    server = Hapi.server({ host: '127.0.0.1', port: 0 });
    await server.register({ plugin: problemDetails, options: { typeBase } });
    server.ext('onRequest', (request, h) => {
        accepts.push(request.headers.accept as string | undefined);
        return h.continue;
    });
    server.route([
        {
            method: 'GET',
            path: '/transfers/7',
            handler: () => {
                throw outOfCredit;
            }
        },
        { method: 'POST', path: '/transfers', handler: () => ({ id: 8, amount: 50 }) },
        { method: 'GET', path: '/health', handler: (_request, h) => h.response('ok').type('text/plain') }
    ]);
    await server.start();
    origin = `http://127.0.0.1:${server.info.port}`;
});

afterAll(async () => {
    await server.stop();
});

/** The rejection of a helper's call, as an HttpError carrying the response. */
async function rejectionOf(call: Promise<unknown>): Promise<errors.HttpError<ResponseErrorData>> {
    const err = await call.then(
        () => {
            throw new Error('expected a rejection');
        },
        (failure: unknown) => failure
    );
    expect(errors.isHttpError(err, 403)).toBe(true);
    return err as errors.HttpError<ResponseErrorData>;
}

describe("between tracewire's client and server: a helper that reads JSON", () => {
    it("gets data.problem with json true, 'strict' and 'force', the header it sent saying what it reads", async () => {
        for (const [json, accept] of [
            [true, 'application/json, application/problem+json, */*;q=0.8'],
            ['strict', 'application/json, application/problem+json'],
            ['force', 'application/json, application/problem+json, */*;q=0.8']
        ] as const) {
            accepts.length = 0;
            const err = await rejectionOf(client.get(`${origin}/transfers/7`, { json }));
            expect(accepts).toEqual([accept]);
            expect(err.data.headers['content-type']).toBe('application/problem+json');
            expect(err.data.problem).toStrictEqual({
                type: 'https://example.com/probs/out-of-credit',
                title: 'Forbidden',
                status: 403,
                detail: 'Your balance is 30, that costs 50',
                instance: '/transfers/7',
                balance: 30
            });
            // `json` parsed the document too: the payload is what it gave.
            expect(err.data.payload).toStrictEqual(err.data.problem);
        }
    });

    it('gets JSON for a success, and from a client with json in its defaults, through every helper', async () => {
        const api = new Client().defaults({ json: 'strict', baseUrl: origin });
        accepts.length = 0;
        const { res, payload } = await api.post<{ id: number }>('/transfers', { payload: { amount: 50 } });
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(payload).toStrictEqual({ id: 8, amount: 50 });
        const err = await rejectionOf(api.get('/transfers/7'));
        expect(err.data.problem?.type).toBe('https://example.com/probs/out-of-credit');
        expect(accepts).toEqual([
            'application/json, application/problem+json',
            'application/json, application/problem+json'
        ]);
    });

    it("hands a text body over with json true (a server may answer what accept's */* leaves it)", async () => {
        const { res, payload } = await client.get(`${origin}/health`, { json: true });
        expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(payload).toStrictEqual(Buffer.from('ok'));
    });

    it("sends the caller's own accept, in any case, from the call or the defaults, and nothing else", async () => {
        accepts.length = 0;
        const classic = await rejectionOf(
            client.get(`${origin}/transfers/7`, { json: true, headers: { Accept: 'application/json' } })
        );
        expect(classic.data.problem).toBeUndefined();
        expect(classic.data.payload).toStrictEqual({
            statusCode: 403,
            error: 'Forbidden',
            message: 'Your balance is 30, that costs 50'
        });
        const api = new Client().defaults({ json: true, headers: { ACCEPT: 'application/problem+json' } });
        const asked = await rejectionOf(api.get(`${origin}/transfers/7`));
        expect(asked.data.problem?.type).toBe('https://example.com/probs/out-of-credit');
        expect(accepts).toEqual(['application/json', 'application/problem+json']);
    });

    it('asks for nothing when it does not read JSON, nor does request(): the classic payload, no document', async () => {
        accepts.length = 0;
        const err = await rejectionOf(client.get(`${origin}/transfers/7`));
        expect(err.data.problem).toBeUndefined();
        const res = await new Client().defaults({ json: true }).request('GET', `${origin}/transfers/7`);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        res.resume();
        expect(accepts).toEqual([undefined, undefined]);
    });
});

const repo = fileURLToPath(new URL('../../', import.meta.url));

/** The `ts` block of the README section `heading`. */
function readmeBlock(heading: string): string {
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf(`\n${heading}\n`));
    const start = section.indexOf('```ts\n') + '```ts\n'.length;
    return section.slice(start, section.indexOf('\n```', start));
}

describe('the README\'s "Problem details" block, run as written', () => {
    let dir: string;
    beforeAll(() => {
        // A user's project: tracewire (this repository, its built dist/: `npm test` builds first) and hapi in its node_modules.
        dir = mkdtempSync(join(tmpdir(), 'tracewire-problem-block-'));
        for (const [name, target] of [
            ['tracewire', repo],
            ['@hapi/hapi', join(repo, 'node_modules', '@hapi', 'hapi')]
        ] as const) {
            mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true });
            symlinkSync(target, join(dir, 'node_modules', name), 'dir');
        }

        writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    });

    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("logs the problem's type: its refused, thrown by a route of its server, reaches its client as a document", async () => {
        const block = readmeBlock('### Problem details');
        const bank = "'https://bank.example.com/transfers/7'";
        expect(block).toContain(bank);
        // What the code around the block has (README test/common/readme-blocks.test.ts declares the same
        // names): a hapi server on loopback whose route throws the block's `refused`, an account, an error.
        const prelude = `
            import Hapi from '@hapi/hapi';
            const server = Hapi.server({ host: '127.0.0.1', port: 0 });
            server.route({ method: 'GET', path: '/transfers/7', handler: () => { throw refused; } });
            await server.start();
            const origin = 'http://127.0.0.1:' + server.info.port;
            const account = '12345';
            const err = new Error('the upstream refused');
        `;
        // Only where the bank is changes: it is the server above. Its types go as tsc emits it (the
        // README blocks test type-checks it).
        writeFileSync(
            join(dir, 'block.ts'),
            `${prelude}\n${block.replace(bank, "origin + '/transfers/7'")}\nawait server.stop();\n`
        );
        const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
        const emit = ['--module', 'esnext', '--target', 'es2022', '--noCheck', '--outDir', 'out', 'block.ts'];
        await promisify(execFile)(process.execPath, [tsc, ...emit], { cwd: dir });
        const { stdout } = await promisify(execFile)(process.execPath, [join('out', 'block.js')], { cwd: dir });
        expect(stdout.trim().split('\n')).toEqual(['https://example.com/probs/out-of-credit']);
    });
});
