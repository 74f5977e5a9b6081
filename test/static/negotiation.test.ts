import { describe, expect, it } from 'vitest';
import { negotiateEncoding } from '../../src/static/find-file.js';

const gzipOnly = [['gzip', '.gz']] as const;
const both = [
    ['br', '.br'],
    ['gzip', '.gz']
] as const;

describe('negotiateEncoding remembers parsed headers without changing what it answers', () => {
    it('gives the same answer for a header seen before, for each lookup map', () => {
        const header = 'gzip;q=0.5, br';
        for (let round = 0; round < 3; round++) {
            expect(negotiateEncoding(header, both)).toEqual([
                ['br', '.br'],
                ['gzip', '.gz']
            ]);
            expect(negotiateEncoding(header, gzipOnly)).toEqual([['gzip', '.gz']]);
            expect(negotiateEncoding('gzip;q=0', gzipOnly)).toEqual([]);
            expect(negotiateEncoding('*', gzipOnly)).toEqual([['gzip', '.gz']]);
        }
    });

    it('keeps answering correctly past the number of headers it remembers', () => {
        for (let index = 0; index < 250; index++) {
            const weight = (index % 10) / 10;
            const header = `identity;q=0.${index % 7}, gzip;q=${weight}, x-${index}`;
            expect(negotiateEncoding(header, gzipOnly), header).toEqual(weight > 0 ? [['gzip', '.gz']] : []);
        }
    });
});
