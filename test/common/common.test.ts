import { describe, expect, it } from 'vitest';
import { BoundedMemo } from '../../src/common/bounded-memo.js';
import { isToken } from '../../src/common/http-token.js';
import { ranksAbove } from '../../src/common/media-range.js';

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

describe('ranksAbove', () => {
    const problem = { type: 'application', subtype: 'problem+json' };
    const json = { type: 'application', subtype: 'json' };

    it('ranks by q-value first, whatever the order or specificity', () => {
        expect(ranksAbove('application/json;q=0.5, application/problem+json', problem, json)).toBe(true);
        expect(ranksAbove('application/problem+json;q=0.9, application/json', problem, json)).toBe(false);
        expect(ranksAbove('application/*;q=0.5, application/json;q=0.1', problem, json)).toBe(true);
        expect(ranksAbove('*/*;q=0.1, application/problem+json', problem, json)).toBe(true);
    });

    it('breaks a tie of q-values by specificity, then by order', () => {
        expect(ranksAbove('*/*, application/problem+json', problem, json)).toBe(true);
        expect(ranksAbove('application/problem+json, application/json', problem, json)).toBe(true);
        expect(ranksAbove('application/json, application/problem+json', problem, json)).toBe(false);
    });

    it("with tie 'named': the preferred type when both are named at one q-value, whatever the order", () => {
        expect(ranksAbove('application/json, application/problem+json', problem, json, 'named')).toBe(true);
        expect(ranksAbove('application/problem+json, application/json', problem, json, 'named')).toBe(true);
        expect(ranksAbove('application/json;q=0.5, application/problem+json;q=0.5', problem, json, 'named')).toBe(true);
        // The rest is as without it: q-values, specificity, a wildcard covering both.
        expect(ranksAbove('application/json, application/problem+json;q=0.9', problem, json, 'named')).toBe(false);
        expect(ranksAbove('application/json, application/*', problem, json, 'named')).toBe(false);
        for (const accept of [
            undefined,
            '*/*',
            'application/*',
            'application/problem+json;q=0, application/json;q=0'
        ]) {
            expect(ranksAbove(accept, problem, json, 'named')).toBe(false);
        }
    });

    it('never prefers a type the client does not accept, and nothing without a header', () => {
        for (const accept of [undefined, '', 'text/html', 'application/problem+json;q=0', '*/*;q=0']) {
            expect(ranksAbove(accept, problem, json)).toBe(false);
        }
    });

    it('leaves an indifferent client (a wildcard for both) with the other type', () => {
        for (const accept of ['*/*', 'application/*', 'text/html, */*;q=0.8']) {
            expect(ranksAbove(accept, problem, json)).toBe(false);
        }
    });

    it('reads case-insensitively, ignores other parameters and takes an unreadable q-value as 0', () => {
        expect(
            ranksAbove(' Application/Problem+JSON ; charset=utf-8 ; Q=0.8 , application/json;q=0.7', problem, json)
        ).toBe(true);
        expect(ranksAbove('application/problem+json;q=abc, application/json;q=0.1', problem, json)).toBe(false);
    });
});
