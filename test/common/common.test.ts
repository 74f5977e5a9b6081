import { describe, expect, it } from 'vitest';
import { BoundedMemo } from '../../src/common/bounded-memo.js';
import { isToken } from '../../src/common/http-token.js';

describe('BoundedMemo', () => {
    it('keeps at most its limit, clearing when full', () => {
        const memo = new BoundedMemo<string, number>(2);
        memo.set('a', 1);
        memo.set('b', 2);
        expect(memo.size).toBe(2);
        memo.set('c', 3);
        expect(memo.size).toBe(1);
        expect(memo.get('a')).toBeUndefined();
        expect(memo.get('c')).toBe(3);
    });

    it('derives a missing value once and stores nothing when deriving throws', () => {
        const memo = new BoundedMemo<string, string>(10);
        let calls = 0;
        const derive = (key: string) => {
            calls++;
            return key.toUpperCase();
        };
        expect(memo.getOrDerive('x', derive)).toBe('X');
        expect(memo.getOrDerive('x', derive)).toBe('X');
        expect(calls).toBe(1);
        expect(() =>
            memo.getOrDerive('y', () => {
                throw new Error('no');
            })
        ).toThrow('no');
        expect(memo.get('y')).toBeUndefined();
    });
});

describe('isToken', () => {
    it('accepts RFC 9110 tokens and refuses separators, spaces and the empty string', () => {
        for (const good of ['GET', 'x-custom', "!#$%&'*+.^_`|~09azAZ-"]) {
            expect(isToken(good)).toBe(true);
        }

        for (const bad of ['', 'a b', 'a,b', 'a"b', 'a\r\nb', 'é', 'a;b', '(x)']) {
            expect(isToken(bad)).toBe(false);
        }
    });
});
