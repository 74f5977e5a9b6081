import { describe, expect, it } from 'vitest';
import { ListMemo } from '../../../src/client/cache/list-memo.js';

describe('ListMemo', () => {
    it('works a value out once per list, and gives each list its own whichever was asked for last', () => {
        const memo = new ListMemo<string>();
        let derived = 0;
        const derive = (list: readonly string[]) => {
            derived++;
            return list.join('=');
        };
        const first = ['ETag', '"a"'];
        // The same lines in another list: a list is known by its identity, never by its content.
        const second = ['ETag', '"a"'];
        expect(memo.of(first, derive)).toBe('ETag="a"');
        expect(memo.of(first, derive)).toBe('ETag="a"');
        expect(derived).toBe(1);
        expect(memo.get(second)).toBeUndefined();
        memo.set(second, 'second');
        expect(memo.get(first)).toBe('ETag="a"');
        expect(memo.get(second)).toBe('second');
        expect(memo.of(first, derive)).toBe('ETag="a"');
        expect(derived).toBe(1);
    });

    it('tells a list with nothing kept from the one asked for last', () => {
        const memo = new ListMemo<number>();
        const kept = ['Age', '1'];
        memo.set(kept, 1);
        expect(memo.get(kept)).toBe(1);
        expect(memo.get(['Age', '1'])).toBeUndefined();
        expect(memo.get(kept)).toBe(1);
    });
});
