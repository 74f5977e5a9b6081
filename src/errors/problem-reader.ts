import { ownValue } from './own-value.js';
import { defineMember, isUnsafeMember, standardMembers } from './problem-members.js';
import type { ProblemDetails } from './types.js';
import { isUriReference } from './uri-reference.js';

/**
 * How much of a received document `readProblem()` keeps. A problem document is a short JSON
 * object; these leave room for a long validation report and bound the work and the memory a
 * hostile one can cost, whatever its size.
 */
export const problemReadLimits = {
    /**
     * The largest body (in bytes, after any decoding) the client reads a problem document from: most
     * are under 1 KiB, a long validation report a few KiB. A larger one is not a problem document.
     */
    bodyBytes: 65_536,
    /** The longest string kept, in a member of RFC 9457 or anywhere in an extension value. */
    stringLength: 8192,
    /** The characters kept in all, names and strings together. */
    totalCharacters: 65_536,
    /** The deepest nesting of an extension value (the member itself is level 1). */
    depth: 16,
    /** The values (objects, arrays, strings, numbers...) kept across all extension members. */
    values: 1000
} as const;

/** What a value that breaks a bound copies to: its member is left out whole. */
const dropped = Symbol('dropped');

interface Budget {
    values: number;
    characters: number;
}

/**
 * Reads a problem document (RFC 9457) out of a parsed JSON value: the members of RFC 9457 whose
 * value has the right type (section 3.1: a member of the wrong type is ignored, as if absent),
 * `type` defaulting to `about:blank`; `type` and `instance` only when they are URI references.
 * Extension members are copied into fresh objects, each left out whole when its value breaks a
 * bound of `problemReadLimits` or is not JSON; no unsafe name (`__proto__`...) is kept, at any level. A value
 * that is not a JSON object gives undefined. Never throws (docs/problem-details.md, "Reading").
 */
export function readProblem(value: unknown): ProblemDetails | undefined {
    try {
        return read(value);
    } catch {
        // Only a value that did not come from JSON.parse can throw here (a Proxy): not a document.
        return undefined;
    }
}

function read(value: unknown): ProblemDetails | undefined {
    if (!isPlainObject(value)) {
        return undefined;
    }

    const budget: Budget = { values: problemReadLimits.values, characters: problemReadLimits.totalCharacters };
    const document: ProblemDetails = { type: 'about:blank' };
    const type = keptString(ownValue(value, 'type'), budget);
    if (type !== undefined && isUriReference(type)) {
        document.type = type;
    }

    const title = keptString(ownValue(value, 'title'), budget);
    if (title !== undefined) {
        document.title = title;
    }

    const status = ownValue(value, 'status');
    if (typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599) {
        document.status = status;
    }

    const detail = keptString(ownValue(value, 'detail'), budget);
    if (detail !== undefined) {
        document.detail = detail;
    }

    const instance = keptString(ownValue(value, 'instance'), budget);
    if (instance !== undefined && isUriReference(instance)) {
        document.instance = instance;
    }

    for (const name in value) {
        if (!Object.hasOwn(value, name) || standardMembers.has(name)) {
            continue;
        }

        const verdict = nameVerdict(name, budget);
        if (budget.values <= 0 || budget.characters < 0) {
            // Once the budget is spent nothing more is kept: the loop costs no more than the budget.
            break;
        }

        if (verdict !== 'keep') {
            continue;
        }

        const copy = copyValue(ownValue(value, name), 1, budget);
        if (copy !== dropped) {
            defineMember(document, name, copy);
        }
    }

    return document;
}

/** A copy of a JSON value within the budget, or `dropped`. */
function copyValue(value: unknown, depth: number, budget: Budget): unknown {
    if (--budget.values < 0) {
        return dropped;
    }

    switch (typeof value) {
        case 'string':
            return keptString(value, budget) ?? dropped;
        case 'number':
            return Number.isFinite(value) ? value : dropped;
        case 'boolean':
            return value;
        case 'object':
            break;
        default:
            return dropped;
    }

    if (value === null) {
        return null;
    }

    if (depth > problemReadLimits.depth) {
        return dropped;
    }

    if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype || value.length > budget.values) {
            return dropped;
        }

        const items: unknown[] = [];
        for (let index = 0; index < value.length; ++index) {
            const item = copyValue(ownValue(value, String(index)), depth + 1, budget);
            if (item === dropped) {
                return dropped;
            }

            items.push(item);
        }

        return items;
    }

    if (!isPlainObject(value)) {
        return dropped;
    }

    const copy: Record<string, unknown> = {};
    for (const name in value) {
        if (!Object.hasOwn(value, name)) {
            continue;
        }

        const verdict = nameVerdict(name, budget);
        if (verdict === 'drop') {
            return dropped;
        }

        if (verdict === 'skip') {
            continue;
        }

        const item = copyValue(ownValue(value, name), depth + 1, budget);
        if (item === dropped) {
            return dropped;
        }

        defineMember(copy, name, item);
    }

    return copy;
}

/** An unsafe name is skipped, at any level; one that breaks the string or character bound drops what holds it. */
function nameVerdict(name: string, budget: Budget): 'keep' | 'skip' | 'drop' {
    if (isUnsafeMember(name)) {
        return 'skip';
    }

    budget.characters -= name.length;
    return budget.characters >= 0 && name.length <= problemReadLimits.stringLength ? 'keep' : 'drop';
}

/** `value` when it is a string within the bounds, charged to the budget. */
function keptString(value: unknown, budget: Budget): string | undefined {
    if (typeof value !== 'string' || value.length > problemReadLimits.stringLength) {
        return undefined;
    }

    budget.characters -= value.length;
    return budget.characters >= 0 ? value : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return false;
    }

    const prototype = Object.getPrototypeOf(value);
    return prototype === Object.prototype || prototype === null;
}
