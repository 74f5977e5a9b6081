import * as stable from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import * as ours from '../../instrumentation/semconv.js';

// The instrumentation spells the names it uses (instrumentation/semconv.ts) so that it imports
// nothing of the conventions package at run time; this holds each to the package's spelling.
describe('instrumentation/semconv.ts', () => {
    const table: Record<string, unknown> = { ...ours };
    const conventions: Record<string, unknown> = { ...incubating, ...stable };

    it('spells every name as @opentelemetry/semantic-conventions does', () => {
        for (const [name, value] of Object.entries(table)) {
            const expected = conventions[name];
            expect(expected, name).toBeDefined();
            if (typeof value === 'function') {
                expect(value('x-id'), name).toBe((expected as (key: string) => string)('x-id'));
            } else {
                expect(value, name).toBe(expected);
            }
        }
    });
});
