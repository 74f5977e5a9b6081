import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import { errors } from '../../src/index.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));

describe('the errors namespace of the root package', () => {
    it('is the errors named export of the root entry', () => {
        expect(Object.keys(root).sort()).toStrictEqual([
            'MemoryCacheStore',
            'RedisCacheStore',
            'SqliteCacheStore',
            'client',
            'errors',
            'problemDetails',
            'staticFiles'
        ]);
        expect(root.problemDetails).toBe(errors.problemDetails);
        expect(typeof errors.notFound).toBe('function');
        expect(typeof errors.HttpError).toBe('function');
        expect(typeof errors.isHttpError).toBe('function');
        expect(typeof errors.toHttpError).toBe('function');
        expect(typeof errors.toSpanAttributes).toBe('function');
        expect(typeof errors.toProblem).toBe('function');
        expect(typeof errors.readProblem).toBe('function');
    });

    /**
     * Runs against dist/: `npm test` builds before it runs the tests (pretest). When dist is missing
     * (the tests were run on their own in a fresh clone) it is built here first.
     */
    describe('require("tracewire") from CommonJS (require(esm) of the built package)', () => {
        beforeAll(() => {
            if (!existsSync(`${repo}dist/src/index.js`)) {
                execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
                    cwd: repo,
                    stdio: 'inherit'
                });
            }
        }, 120_000);

        it('loads and exports exactly MemoryCacheStore, RedisCacheStore, SqliteCacheStore, client, errors, problemDetails, staticFiles', async () => {
            const script = `
                const tracewire = require('tracewire');
                const { errors } = tracewire;
                const error = errors.notFound('x');
                console.log(JSON.stringify({
                    keys: Object.keys(tracewire).sort(),
                    status: error.output.statusCode,
                    isHttpError: errors.isHttpError(error) && error instanceof errors.HttpError
                }));`;
            const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: repo });
            expect(JSON.parse(stdout)).toStrictEqual({
                keys: [
                    'MemoryCacheStore',
                    'RedisCacheStore',
                    'SqliteCacheStore',
                    'client',
                    'errors',
                    'problemDetails',
                    'staticFiles'
                ],
                status: 404,
                isHttpError: true
            });
        });
    });
});
