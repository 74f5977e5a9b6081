import { describe, expect, it } from 'vitest';
import { afterWrite, cacheKey, member, pendingMember } from '../../../src/client/cache/cache-call.js';
import { cacheOutcomeOf, cacheStatusMember } from '../../../src/client/cache/cache-status.js';
import { parseDirectives } from '../../../src/client/cache/directives.js';
import { updatedEntry } from '../../../src/client/cache/entries.js';
import { headersOf } from '../../../src/client/cache/fields.js';
import { freshnessLifetime } from '../../../src/client/cache/freshness.js';
import { parseHttpDate } from '../../../src/client/cache/http-date.js';
import {
    invalidatedUrls,
    isStorable,
    judge,
    requestDirectives,
    usefulUntil
} from '../../../src/client/cache/policy.js';
import { satisfiesCallerCondition, updatedBy304, validatedBy304 } from '../../../src/client/cache/validators.js';
import type { CachedResponse } from '../../../src/client/contract/cache-store.js';
import type { HopResponse } from '../../../src/client/contract/types.js';

/** README "Cache": the RFC 9111 rules, as the pure functions the layer acts on. */

const now = Date.UTC(2026, 0, 1);

function stored(rawHeaders: string[], overrides: Partial<CachedResponse> = {}): CachedResponse {
    return {
        method: 'GET',
        statusCode: 200,
        statusMessage: 'OK',
        rawHeaders,
        vary: undefined,
        body: Buffer.alloc(0),
        requestTime: now,
        responseTime: now,
        deleteAt: now + 1000,
        ...overrides
    };
}

describe('Cache-Control directives', () => {
    it('reads quoted values, keeps commas inside quotes, and lets the first occurrence win', () => {
        const directives = parseDirectives('max-age="60", private="a, b", max-age=1, no-cache="x\\"y"');
        expect(directives.maxAge).toBe(60);
        expect(directives.private).toBe(true);
        expect(directives.noCache).toBe(true);
    });

    it('an invalid delta-seconds reads as 0, a huge one as 2^31; max-stale without a value accepts any staleness', () => {
        expect(parseDirectives('max-age=abc').maxAge).toBe(0);
        expect(parseDirectives('max-age').maxAge).toBe(0);
        expect(parseDirectives('max-age=99999999999999').maxAge).toBe(2_147_483_648);
        expect(parseDirectives(['max-stale', 'min-fresh=5']).maxStale).toBe(Number.POSITIVE_INFINITY);
        expect(parseDirectives(undefined).maxAge).toBeUndefined();
        expect(parseDirectives(', ,=1').maxAge).toBeUndefined();
    });

    it('Pragma: no-cache counts only without Cache-Control', () => {
        expect(requestDirectives({ pragma: 'no-cache' }).noCache).toBe(true);
        expect(requestDirectives({ pragma: 'no-cache', 'cache-control': 'max-stale' }).noCache).toBe(false);
        expect(requestDirectives({ 'cache-control': ['no-cache'] }).noCache).toBe(true);
    });
});

describe('HTTP dates', () => {
    it('reads IMF-fixdate, RFC 850 and asctime, and nothing else', () => {
        const expected = Date.UTC(1994, 10, 6, 8, 49, 37);
        expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(expected);
        expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT')).toBe(expected);
        expect(parseHttpDate('Sun Nov  6 08:49:37 1994')).toBe(expected);
        expect(parseHttpDate('Sunday, 06-Nov-30 08:49:37 GMT')).toBe(Date.UTC(2030, 10, 6, 8, 49, 37));
        expect(parseHttpDate('Sun, 06 Foo 1994 08:49:37 GMT')).toBeUndefined();
        expect(parseHttpDate('1994-11-06')).toBeUndefined();
        expect(parseHttpDate(undefined)).toBeUndefined();
    });
});

describe('freshness', () => {
    it('Expires minus Date; an invalid or repeated Expires is already expired; the Last-Modified heuristic', () => {
        const date = 'Thu, 01 Jan 2026 00:00:00 GMT';
        const none = parseDirectives(undefined);
        expect(freshnessLifetime(stored(['Date', date, 'Expires', 'Thu, 01 Jan 2026 00:01:00 GMT']), none, false)).toBe(
            60
        );
        expect(freshnessLifetime(stored(['Date', date, 'Expires', '0']), none, false)).toBe(0);
        expect(freshnessLifetime(stored(['Date', date, 'Expires', date, 'Expires', date]), none, false)).toBe(0);
        expect(
            freshnessLifetime(stored(['Date', date, 'Last-Modified', 'Wed, 31 Dec 2025 00:00:00 GMT']), none, false)
        ).toBe(8640);
        expect(
            freshnessLifetime(
                stored(['Last-Modified', 'Wed, 31 Dec 2025 00:00:00 GMT'], { statusCode: 299 }),
                none,
                false
            )
        ).toBe(0);
    });

    it('must-revalidate, and proxy-revalidate and s-maxage in a shared cache, forbid serving stale', () => {
        const entry = stored(['Cache-Control', 'max-age=0, proxy-revalidate', 'Date', new Date(now).toUTCString()]);
        const maxStale = requestDirectives({ 'cache-control': 'max-stale=60' });
        expect(judge(entry, maxStale, false, now + 1000).suitability).toBe('stale-allowed');
        expect(judge(entry, maxStale, true, now + 1000).suitability).toBe('validate');
    });
});

describe('storing', () => {
    const request = { headers: {}, directives: requestDirectives({}) };
    it('stores what has explicit freshness, a validator-less heuristic status, public or private; never 206 or Vary: *', () => {
        const none = parseDirectives(undefined);
        expect(isStorable(request, 200, [], none, false)).toBe(true);
        expect(isStorable(request, 299, [], none, false)).toBe(false);
        expect(isStorable(request, 299, [], parseDirectives('public'), false)).toBe(true);
        expect(isStorable(request, 299, [], parseDirectives('private'), false)).toBe(true);
        expect(isStorable(request, 299, [], parseDirectives('private'), true)).toBe(false);
        expect(isStorable(request, 299, ['Expires', 'x'], none, false)).toBe(true);
        expect(isStorable(request, 206, [], parseDirectives('max-age=60'), false)).toBe(false);
        expect(isStorable(request, 200, ['Vary', '*'], parseDirectives('max-age=60'), false)).toBe(false);
        expect(isStorable(request, 599, [], parseDirectives('max-age=60, must-understand'), false)).toBe(false);
        expect(isStorable(request, 200, [], parseDirectives('no-store, must-understand'), false)).toBe(true);
    });

    it('invalidates nothing for a safe method, an error, or a malformed or cross-origin Location', () => {
        const url = new URL('http://a.test/x');
        expect(invalidatedUrls('GET', url, 200, [])).toEqual([]);
        expect(invalidatedUrls('POST', url, 500, [])).toEqual([]);
        expect(
            invalidatedUrls('POST', url, 200, ['Location', 'http://[', 'Content-Location', 'http://b.test/'])
        ).toEqual([url]);
    });

    it('keys GET and HEAD together, other methods apart, a UNIX socket apart, without the fragment', () => {
        expect(cacheKey('HEAD', 'http://a.test/x#frag', undefined)).toBe('http://a.test/x');
        expect(cacheKey('OPTIONS', 'http://a.test/x', undefined)).toBe('OPTIONS http://a.test/x');
        expect(cacheKey('GET', 'http://localhost/x', '/tmp/s.sock')).toBe('unix:/tmp/s.sock http://localhost/x');
    });
});

describe('conditions and Cache-Status', () => {
    it("a caller's If-Modified-Since is met by a stored response not modified since", () => {
        const entry = stored(['Last-Modified', 'Thu, 01 Jan 2026 00:00:00 GMT']);
        expect(satisfiesCallerCondition(entry, undefined, 'Thu, 01 Jan 2026 00:00:00 GMT', parseHttpDate)).toBe(true);
        expect(satisfiesCallerCondition(entry, undefined, 'Wed, 31 Dec 2025 00:00:00 GMT', parseHttpDate)).toBe(false);
        expect(satisfiesCallerCondition(entry, '"x"', undefined, parseHttpDate)).toBe(false);
        expect(satisfiesCallerCondition(stored(['ETag', '"x"']), '*', undefined, parseHttpDate)).toBe(true);
    });

    it('reads back the outcome from the last member, when it is this client’s', () => {
        const outcomes = ['hit', 'miss', 'revalidated', 'request', 'bypass', 'only-if-cached'] as const;
        for (const outcome of outcomes) {
            const member = cacheStatusMember({
                outcome,
                stored: false,
                ttl: undefined,
                forwardStatus: undefined,
                detail: undefined,
                collapsed: undefined
            });
            expect(cacheOutcomeOf(`origin; hit, ${member}`)).toBe(outcome);
            expect(cacheOutcomeOf([member])).toBe(outcome);
        }

        // A call that waited for another's fetch (request coalescing): `collapsed` when the store answered
        // it, whatever it forwarded on; `collapsed=?0` when it had to go to the origin itself.
        const facts = { stored: false, ttl: 60, forwardStatus: undefined, detail: undefined };
        const answered = cacheStatusMember({ ...facts, outcome: 'miss', collapsed: true });
        expect(answered).toBe('tracewire; fwd=miss; collapsed; ttl=60');
        expect(cacheOutcomeOf(answered)).toBe('collapsed');
        expect(cacheOutcomeOf('tracewire; fwd=stale; collapsed')).toBe('collapsed');
        const forwarded = cacheStatusMember({ ...facts, outcome: 'miss', forwardStatus: 200, collapsed: false });
        expect(forwarded).toBe('tracewire; fwd=miss; collapsed=?0; fwd-status=200; ttl=60');
        expect(cacheOutcomeOf(forwarded)).toBe('miss');

        expect(cacheOutcomeOf(undefined)).toBeUndefined();
        expect(cacheOutcomeOf('origin; hit')).toBeUndefined();
        expect(cacheOutcomeOf('tracewire; fwd=partial')).toBeUndefined();
    });

    it('a 304 replaces every line of each field it carries; one that repeats the stored fields keeps the stored list', () => {
        const fields = [
            'ETag',
            '"a"',
            'Cache-Control',
            'max-age=0',
            'Link',
            '</a>',
            'link',
            '</b>',
            'Content-Length',
            '5'
        ];
        const entry = stored(fields);
        const later = now + 5000;
        // Fields of its own (each line of Link replaced); its Content-Length and hop-by-hop fields never count.
        const changed = updatedBy304(
            entry,
            [
                'etag',
                '"a"',
                'Cache-Control',
                'max-age=60',
                'Link',
                '</c>',
                'Content-Length',
                '0',
                'Connection',
                'x-hop',
                'X-Hop',
                '1'
            ],
            now,
            later
        );
        expect(changed.rawHeaders).toStrictEqual([
            'Content-Length',
            '5',
            'etag',
            '"a"',
            'Cache-Control',
            'max-age=60',
            'Link',
            '</c>'
        ]);
        expect(changed.responseTime).toBe(later);
        expect(entry.rawHeaders).toStrictEqual(fields);
        // The same lines (names in any case, the same order of a field's lines): the stored list itself, new times.
        const repeated = updatedBy304(
            entry,
            ['ETAG', '"a"', 'link', '</a>', 'cache-control', 'max-age=0', 'Link', '</b>', 'Content-Length', '0'],
            now,
            later
        );
        expect(repeated.rawHeaders).toBe(entry.rawHeaders);
        expect(repeated).not.toBe(entry);
        expect(repeated.responseTime).toBe(later);
        // Past 64 lines the lines are not compared (the walk is quadratic in them): the update is made as it is.
        const many = Array.from({ length: 65 }, (_, index) => [`X-${index}`, 'v']).flat();
        const large = stored(many);
        const same = updatedBy304(large, many, now, later);
        expect(same.rawHeaders).not.toBe(large.rawHeaders);
        expect(same.rawHeaders).toStrictEqual(many);
        // One line fewer, one more, or a field's lines in another order: not the same fields.
        for (const link of [['</a>'], ['</a>', '</b>', '</c>'], ['</b>', '</a>']]) {
            const update = updatedBy304(
                entry,
                link.flatMap((value) => ['Link', value]),
                now,
                later
            );
            expect(update.rawHeaders).not.toBe(entry.rawHeaders);
            expect(
                update.rawHeaders.filter((_, index, all) => index % 2 === 1 && all[index - 1] === 'Link')
            ).toStrictEqual(link);
        }
    });

    it('a 304 with the lines of one found to repeat the stored list keeps it; one with any other line is merged', () => {
        const entry = stored(['ETag', '"a"', 'Cache-Control', 'max-age=0', 'Date', 'Mon, 01 Jan 2024 00:00:00 GMT']);
        const later = now + 1000;
        const lines = ['Date', 'Mon, 01 Jan 2024 00:00:00 GMT', 'etag', '"a"', 'cache-control', 'max-age=0'];
        expect(updatedBy304(entry, lines, now, later).rawHeaders).toBe(entry.rawHeaders);
        // The same lines again (another array): the stored list, known from the first.
        expect(updatedBy304(entry, [...lines], now, later).rawHeaders).toBe(entry.rawHeaders);
        // As many lines, one value other, one name other: each merged, not taken for the repeat.
        const newer = ['Date', 'Mon, 01 Jan 2024 00:00:01 GMT', 'etag', '"a"', 'cache-control', 'max-age=0'];
        expect(updatedBy304(entry, newer, now, later).rawHeaders).toStrictEqual(newer);
        const renamed = ['Date', 'Mon, 01 Jan 2024 00:00:00 GMT', 'etag', '"a"', 'x-other', 'max-age=0'];
        expect(updatedBy304(entry, renamed, now, later).rawHeaders).toStrictEqual([
            'Cache-Control',
            'max-age=0',
            'Date',
            'Mon, 01 Jan 2024 00:00:00 GMT',
            'etag',
            '"a"',
            'x-other',
            'max-age=0'
        ]);
        // The 304's own list changed after its update (a response's fields may be): what was compared is
        // what it held then, so its new lines are merged as any others.
        const other = stored([...entry.rawHeaders]);
        const changing = [...lines];
        expect(updatedBy304(other, changing, now, later).rawHeaders).toBe(other.rawHeaders);
        changing[5] = 'max-age=60';
        const updated = updatedBy304(other, [...changing], now, later).rawHeaders;
        expect(updated).not.toBe(other.rawHeaders);
        expect(updated).toContain('max-age=60');
    });

    it('a 304 validates the stored response only with its validator, whatever the 304s before it repeated', () => {
        const entry = stored(['ETag', '"a"', 'Cache-Control', 'max-age=0']);
        const later = now + 1000;
        const lines = ['etag', '"a"', 'cache-control', 'max-age=0'];
        expect(validatedBy304(entry, ['etag', '"b"', 'cache-control', 'max-age=0'], now, later)).toBeUndefined();
        const first = validatedBy304(entry, lines, now, later);
        expect(first?.rawHeaders).toBe(entry.rawHeaders);
        // The same lines again: known to validate from the first, the stored list kept, the times the 304's.
        const again = validatedBy304(entry, [...lines], now + 5, later + 5);
        expect(again).toStrictEqual({ ...entry, requestTime: now + 5, responseTime: later + 5 });
        expect(again?.rawHeaders).toBe(entry.rawHeaders);
        // One line other (another ETag, or none where the first had one): looked at again.
        expect(validatedBy304(entry, ['etag', '"b"', 'cache-control', 'max-age=0'], now, later)).toBeUndefined();
        expect(validatedBy304(entry, ['etag', 'W/"a"', 'cache-control', 'max-age=0'], now, later)).toBeUndefined();
        expect(validatedBy304(entry, ['cache-control', 'max-age=60'], now, later)?.rawHeaders).toStrictEqual([
            'ETag',
            '"a"',
            'cache-control',
            'max-age=60'
        ]);
    });

    it('a pending member is made once for the same facts: its strings are the same, its `stored` member too', () => {
        const facts = { outcome: 'revalidated', forwardStatus: 304, ttl: 0 } as const;
        const first = pendingMember({ ...facts });
        expect(pendingMember({ ...facts })).toBe(first);
        expect(afterWrite(first, 'stored')).toBe(afterWrite(pendingMember({ ...facts }), 'stored'));
        // Any fact other: another member, whose own strings say it.
        for (const other of [
            { ...facts, ttl: 1 },
            { ...facts, forwardStatus: 200 },
            { ...facts, outcome: 'miss' },
            { ...facts, collapsed: false }
        ] as const) {
            const pending = pendingMember(other);
            expect(pending).not.toBe(first);
            expect(pending.told).toBe(member(other));
            expect(afterWrite(pending, 'stored')).toBe(member({ ...other, stored: true }));
        }

        expect(pendingMember({ ...facts }).told).toBe('tracewire; fwd=stale; fwd-status=304; ttl=0');
        // A ttl that moved within the second it is told in (a stale entry's, each millisecond): the same member.
        const stale = pendingMember({ ...facts, ttl: -12.3 });
        expect(pendingMember({ ...facts, ttl: -12.4 })).toBe(stale);
        expect(pendingMember({ ...facts, ttl: -12.6 }).told).toBe('tracewire; fwd=stale; fwd-status=304; ttl=-13');
    });

    it("a write's member once it landed: `stored` added to what the pending one told, each for its own facts", () => {
        const sixty = pendingMember({ outcome: 'revalidated', forwardStatus: 304, ttl: 60 });
        const thirty = pendingMember({ outcome: 'revalidated', forwardStatus: 304, ttl: 30 });
        const waited = pendingMember({ outcome: 'revalidated', forwardStatus: 304, ttl: 60, collapsed: false });
        for (let round = 0; round < 2; round++) {
            expect(afterWrite(sixty, 'stored')).toBe('tracewire; fwd=stale; fwd-status=304; stored; ttl=60');
            expect(afterWrite(sixty, 'stored')).toBe('tracewire; fwd=stale; fwd-status=304; stored; ttl=60');
            expect(afterWrite(thirty, 'stored')).toBe('tracewire; fwd=stale; fwd-status=304; stored; ttl=30');
            expect(afterWrite(waited, 'stored')).toBe(
                'tracewire; fwd=stale; collapsed=?0; fwd-status=304; stored; ttl=60'
            );
            expect(afterWrite(sixty, 'timeout')).toBe(
                'tracewire; fwd=stale; fwd-status=304; ttl=60; detail=store-timeout'
            );
        }
    });

    it("a 304's update is kept until it is of no use, worked out from its judgement as it arrived", () => {
        const entry = stored(['ETag', '"a"', 'Cache-Control', 'max-age=0']);
        const later = now + 2000;
        for (const [cacheControl, shared] of [
            ['max-age=60', false],
            ['max-age=60, stale-while-revalidate=30', false],
            ['max-age=5, stale-if-error=200000', false],
            ['s-maxage=100, max-age=10', true],
            ['no-cache', false]
        ] as const) {
            const res = { rawHeaders: ['ETag', '"a"', 'Cache-Control', cacheControl] } as HopResponse;
            const { entry: updated, judgement } = updatedEntry(entry, res, now, later, shared)!;
            const directives = parseDirectives(cacheControl);
            expect(updated.deleteAt).toBe(usefulUntil(updated, directives, shared, later));
            expect(judgement).toStrictEqual(judge(updated, requestDirectives({}), shared, later));
        }
    });

    it('headers of raw fields as Node makes them: set-cookie a list, others joined', () => {
        expect(headersOf(['Set-Cookie', 'a', 'set-cookie', 'b', 'X', '1', 'x', '2'])).toEqual({
            'set-cookie': ['a', 'b'],
            x: '1, 2'
        });
    });
});
