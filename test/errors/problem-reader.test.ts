import Boom from '@hapi/boom';
import { describe, expect, it } from 'vitest';
import { errors } from '../../src/index.js';
import { seeded } from '../seeded.js';
import { expectValidProblem } from './problem-schema.js';

const { readProblem, problemReadLimits: limits } = errors;

/** readProblem(), whose every answer must be a document of RFC 9457's schema. */
function read(value: unknown): errors.ProblemDetails | undefined {
    const document = readProblem(value);
    if (document !== undefined) {
        expectValidProblem(document);
    }

    return document;
}

/** A parsed body, as the client will hand it over. */
const parsed = (text: string): unknown => JSON.parse(text);

describe('readProblem(): a received problem document', () => {
    it('reads the example of RFC 9457 as it is, extension members included', () => {
        const body = {
            type: 'https://example.com/probs/out-of-credit',
            title: 'You do not have enough credit.',
            detail: 'Your current balance is 30, but that costs 50.',
            instance: '/account/12345/msgs/abc',
            balance: 30,
            accounts: ['/account/12345', '/account/67890']
        };
        expect(read(parsed(JSON.stringify(body)))).toStrictEqual(body);
    });

    it('gives back what toProblem() made, for every kind of error', () => {
        const made = [
            errors.notFound('No user 7'),
            errors.unauthorized('expired', 'Bearer', { realm: 'api' }),
            errors.badGateway('hidden'),
            errors.conflict('taken', null, {
                type: 'https://example.com/probs/taken',
                extensions: { id: [1, { a: null }] }
            }),
            Boom.badRequest('x')
        ];
        for (const error of made) {
            const document = errors.toProblem(error, { instance: '/a/b' });
            expect(read(parsed(JSON.stringify(document)))).toStrictEqual(document);
        }
    });

    it('takes a document without type as about:blank (RFC 9457, 3.1.1), and {} as a document', () => {
        expect(read({})).toStrictEqual({ type: 'about:blank' });
        expect(read({ status: 404, title: 'Not Found' })).toStrictEqual({
            type: 'about:blank',
            title: 'Not Found',
            status: 404
        });
    });

    it('copies, so the document does not change with the value it was read from', () => {
        const body = parsed('{"errors": [{"pointer": "/a"}]}') as { errors: { pointer: string }[] };
        const document = read(body)!;
        body.errors[0]!.pointer = '/changed';
        expect(document.errors).toStrictEqual([{ pointer: '/a' }]);
    });
});

describe('readProblem() ignores what is not a problem document', () => {
    const notObjects: [string, unknown][] = [
        ['null', null],
        ['undefined', undefined],
        ['a number', 404],
        ['a string', '{"type":"about:blank"}'],
        ['a boolean', true],
        ['an array', [{ type: 'about:blank' }]],
        ['a Date', new Date()],
        ['a Map', new Map([['type', 'about:blank']])],
        [
            'a class instance',
            new (class Problem {
                type = 'about:blank';
            })()
        ],
        ['an object with another prototype', Object.create({ type: 'https://evil.example/' })],
        ['a function', () => ({ type: 'about:blank' })],
        ['a Buffer', Buffer.from('{}')]
    ];
    for (const [what, value] of notObjects) {
        it(`gives undefined for ${what}`, () => {
            expect(readProblem(value)).toBeUndefined();
        });
    }

    it('takes an object without prototype, as some parsers make', () => {
        const bare = Object.assign(Object.create(null), { type: 'about:blank', status: 400 });
        expect(read(bare)).toStrictEqual({ type: 'about:blank', status: 400 });
    });
});

describe('readProblem() ignores a member of RFC 9457 whose value has the wrong type (RFC 9457, 3.1)', () => {
    const wrong: [string, unknown[]][] = [
        ['type', [1, null, true, [], {}, '', 'not a uri', 'https://example.com/a b', 'x\r\ny', 'é', 'a#b#c', '1a:b']],
        ['title', [1, null, false, ['Not Found'], { text: 'x' }]],
        ['status', ['404', 404.5, 99, 600, -1, true, null, [404], Number.NaN, Number.POSITIVE_INFINITY]],
        ['detail', [0, null, ['x'], { message: 'x' }]],
        ['instance', [7, null, {}, '', '/a b', '/a\u0000']]
    ];
    for (const [member, values] of wrong) {
        it(`${member}: ${values.length} wrong values, each ignored with the rest of the document kept`, () => {
            for (const value of values) {
                const document = read({ title: 'kept', [member]: value, balance: 30 });
                expect(document).toBeDefined();
                expect(document!.type).toBe('about:blank');
                expect(document!.balance).toBe(30);
                if (member === 'title') {
                    expect(document!.title).toBeUndefined();
                } else {
                    expect(document!.title).toBe('kept');
                    expect(Object.hasOwn(document!, member) && member !== 'type').toBe(false);
                }
            }
        });
    }

    it('never calls an accessor: only data properties are read', () => {
        let calls = 0;
        const value = {
            get type() {
                calls++;
                return 'https://example.com/probs/x';
            },
            get balance() {
                calls++;
                throw new Error('getter ran');
            }
        };
        expect(read(value)).toStrictEqual({ type: 'about:blank' });
        expect(calls).toBe(0);
    });

    it('never throws, even on a Proxy whose traps throw', () => {
        const hostile = new Proxy(
            {},
            {
                ownKeys() {
                    throw new Error('trap');
                },
                getOwnPropertyDescriptor() {
                    throw new Error('trap');
                },
                getPrototypeOf() {
                    return Object.prototype;
                }
            }
        );
        expect(() => readProblem(hostile)).not.toThrow();
        expect(readProblem(hostile)).toBeUndefined();
    });
});

describe('readProblem() is bounded', () => {
    it('ignores a string member longer than the bound, and keeps one of exactly the bound', () => {
        const atBound = 'x'.repeat(limits.stringLength);
        const over = 'x'.repeat(limits.stringLength + 1);
        expect(read({ title: atBound })!.title).toBe(atBound);
        expect(
            read({ title: over, detail: over, instance: `/${over}`, type: `https://e.example/${over}` })
        ).toStrictEqual({
            type: 'about:blank'
        });
    });

    it('reads a 10 MB document into a few kilobytes at most', () => {
        const huge = 'y'.repeat(10 * 1024 * 1024);
        const body = parsed(
            JSON.stringify({
                type: 'https://example.com/probs/big',
                title: huge,
                detail: 'small',
                blob: huge,
                list: [huge]
            })
        );
        expect(read(body)).toStrictEqual({ type: 'https://example.com/probs/big', detail: 'small' });
    });

    it('keeps extension values nested up to the bound, and leaves out a deeper one whole', () => {
        const nest = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
        const document = read(parsed(`{"ok": ${nest(limits.depth)}, "deep": ${nest(limits.depth + 1)}, "after": 1}`))!;
        expect(Object.keys(document)).toStrictEqual(['type', 'ok', 'after']);

        // Far past the bound: JSON.parse accepts it, the reader stops at the bound without recursing on.
        const abyss = read(parsed(`{"abyss": ${nest(100_000)}, "title": "kept"}`));
        expect(abyss).toStrictEqual({ type: 'about:blank', title: 'kept' });
    });

    it('leaves out a value that is a cycle (not JSON, but not a crash either)', () => {
        const cyclic: Record<string, unknown> = { name: 'loop' };
        cyclic.self = cyclic;
        expect(read({ cyclic, title: 't' })).toStrictEqual({ type: 'about:blank', title: 't' });
    });

    it('keeps at most its budget of values however many members and items come', () => {
        const members: Record<string, number> = {};
        for (let index = 0; index < 100_000; index++) {
            members[`m${index}`] = index;
        }

        const document = read({ title: 't', ...members })!;
        expect(Object.keys(document).length - 2).toBe(limits.values);

        const items = read({ items: Array.from({ length: 1_000_000 }, (_, index) => index), small: [1, 2] });
        expect(items).toStrictEqual({ type: 'about:blank', small: [1, 2] });
    });

    it('keeps at most its budget of characters across members', () => {
        const chunk = 'z'.repeat(limits.stringLength);
        const body: Record<string, string> = {};
        for (let index = 0; index < 20; index++) {
            body[`s${index}`] = chunk;
        }

        const document = read(body)!;
        const kept = Object.keys(document).filter((name) => name.startsWith('s'));
        expect(kept.length).toBeGreaterThan(0);
        expect(kept.length * limits.stringLength).toBeLessThanOrEqual(limits.totalCharacters);
    });

    it('leaves out a member whose value holds a name longer than the string bound, or spends the rest of the budget', () => {
        const longName = 'n'.repeat(limits.stringLength + 1);
        expect(read({ nested: { [longName]: 1 }, kept: { short: 1 } })).toStrictEqual({
            type: 'about:blank',
            kept: { short: 1 }
        });

        // Each item passes the array's length check; their members spend the budget before the end.
        const wide = Array.from({ length: 10 }, () =>
            Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]))
        );
        expect(read({ wide, title: 't' })).toStrictEqual({ type: 'about:blank', title: 't' });
    });

    it('skips a member whose name is longer than the string bound', () => {
        expect(read({ ['n'.repeat(limits.stringLength + 1)]: 1, short: 2 })).toStrictEqual({
            type: 'about:blank',
            short: 2
        });
    });

    it('leaves out an extension member whose value JSON could not have made', () => {
        const document = read({
            big: 10n,
            fn: () => 1,
            sym: Symbol('s'),
            undef: undefined,
            nan: Number.NaN,
            date: new Date(0),
            nested: { inner: { f() {} } },
            ok: { inner: [true, null, 'x', 1.5] }
        });
        expect(document).toStrictEqual({ type: 'about:blank', ok: { inner: [true, null, 'x', 1.5] } });
    });
});

describe('readProblem() against prototype pollution', () => {
    const hostile = `{
        "__proto__": { "polluted": "root" },
        "constructor": { "prototype": { "polluted": "constructor" } },
        "prototype": { "polluted": "prototype" },
        "nested": { "__proto__": { "polluted": "nested" }, "constructor": 1, "kept": true },
        "list": [{ "__proto__": { "polluted": "item" } }],
        "title": "t"
    }`;

    it('keeps no member named __proto__, constructor or prototype, at any level', () => {
        const document = read(parsed(hostile))!;
        expect(document).toStrictEqual({ type: 'about:blank', title: 't', nested: { kept: true }, list: [{}] });
        expect(Object.getPrototypeOf(document)).toBe(Object.prototype);
        expect(Object.getPrototypeOf(document.nested)).toBe(Object.prototype);
    });

    it('leaves the objects of a client that merges the document as they were', () => {
        const document = read(parsed(hostile))!;
        const merged = Object.assign({}, document);
        const deep = structuredClone(document);
        const spread = { ...document, ...(document.nested as object) };
        for (const target of [merged, deep, spread, {}]) {
            expect((target as { polluted?: unknown }).polluted).toBeUndefined();
        }

        expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
        expect(Object.prototype).not.toHaveProperty('polluted');
    });
});

describe('readProblem() on a seeded mix of hostile values', () => {
    /** A random value of the kinds a hostile peer or a bug can hand over, JSON and not. */
    function hostileValue(random: () => number, depth: number): unknown {
        const pick = Math.floor(random() * 14);
        switch (pick) {
            case 0:
                return null;
            case 1:
                return random() < 0.5;
            case 2:
                return Math.floor(random() * 1000) - 100;
            case 3:
                return [Number.NaN, Number.POSITIVE_INFINITY, -0, 1e308, 0.1][Math.floor(random() * 5)];
            case 4:
                return 'x'.repeat(Math.floor(random() * 2 * limits.stringLength));
            case 5:
                return ['about:blank', 'https://example.com/p', '/a b', '', '\u0000', '__proto__'][
                    Math.floor(random() * 6)
                ];
            case 6:
                return 10n;
            case 7:
                return undefined;
            case 8:
                return Symbol('s');
            default: {
                if (depth > 24) {
                    return [];
                }

                if (pick < 11) {
                    return Array.from({ length: Math.floor(random() * 6) }, () => hostileValue(random, depth + 1));
                }

                const object: Record<string, unknown> = {};
                const names = [
                    'type',
                    'title',
                    'status',
                    'detail',
                    'instance',
                    '__proto__',
                    'constructor',
                    'a',
                    'b',
                    'errors'
                ];
                for (let index = Math.floor(random() * 6); index > 0; index--) {
                    const name = names[Math.floor(random() * names.length)]!;
                    Object.defineProperty(object, name, {
                        value: hostileValue(random, depth + 1),
                        enumerable: true,
                        configurable: true,
                        writable: true
                    });
                }

                return object;
            }
        }
    }

    it('never throws, answers only documents of the schema, and never changes Object.prototype', () => {
        const random = seeded(9457);
        let documents = 0;
        for (let round = 0; round < 2000; round++) {
            const value = hostileValue(random, 0);
            const document = read(value);
            if (document !== undefined) {
                documents++;
                expect(Object.getPrototypeOf(document)).toBe(Object.prototype);
                expect(JSON.stringify(document).length).toBeLessThan(4 * limits.totalCharacters);
            }
        }

        expect(documents).toBeGreaterThan(100);
        expect(Object.prototype).not.toHaveProperty('polluted');
    });
});
