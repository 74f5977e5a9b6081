import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, scratchProject } from './scratch.js';

/*
 * A consumer's `tsc` with `skipLibCheck: false` and `module: nodenext`, an ES module (.mts) and a
 * CommonJS one (.cts) each: tracewire's declarations must check with only what each entry point needs.
 */
function typecheck(dir: string, variant: string): string {
    return run(
        process.execPath,
        [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${variant}.json`],
        dir
    );
}

describe('TypeScript consumers (module nodenext, skipLibCheck false, ESM and CommonJS)', () => {
    it('without @hapi/hapi and without OpenTelemetry: tracewire, tracewire/client, tracewire/errors', () => {
        const dir = scratchProject('types-bare', { apps: 'types' });
        expect(existsSync(join(dir, 'node_modules', '@hapi', 'hapi'))).toBe(false);
        expect(existsSync(join(dir, 'node_modules', '@opentelemetry'))).toBe(false);
        expect(typecheck(dir, 'core')).toBe('');
    });

    it('with the OpenTelemetry API and without @hapi/hapi: tracewire/instrumentation as well', () => {
        const dir = scratchProject('types-otel', { apps: 'types' });
        expect(existsSync(join(dir, 'node_modules', '@hapi', 'hapi'))).toBe(false);
        expect(typecheck(dir, 'otel')).toBe('');
    });

    // hapi's own declarations import joi, which a hapi app with skipLibCheck false installs.
    it('with @hapi/hapi: every entry point, plugins registered, h.file() and the handlers typed', () => {
        const dir = scratchProject('types-hapi', { apps: 'types' });
        expect(typecheck(dir, 'hapi')).toBe('');
    });
});
