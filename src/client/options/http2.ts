import type { Http2Options } from '../contract/types.js';
import { isCount } from './values.js';

/** The grammar of the `http2` option (README "HTTP/2"); what a valid one does is the wire's (wire/http2/). */

const fields = [
    'h2c',
    'maxConcurrentStreams',
    'pingInterval',
    'pingTimeout',
    'idleTimeout',
    'initialWindowSize',
    'connectionWindowSize'
] as const satisfies readonly (keyof Http2Options)[];

// The largest flow-control window HTTP/2 allows (RFC 9113 6.9.1).
const maxWindow = 2 ** 31 - 1;

/** Why an `http2` option value cannot be used, starting with `.field` when a field is wrong; undefined when it can. */
export function http2Problem(value: unknown): string | undefined {
    if (typeof value === 'boolean') {
        return undefined;
    }

    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return `must be true, false or an object of HTTP/2 settings (${fields.join(', ')})`;
    }

    for (const field in value) {
        const given = (value as Record<string, unknown>)[field];
        if (!(fields as readonly string[]).includes(field)) {
            return `has an unknown field ${JSON.stringify(field)} (known: ${fields.join(', ')})`;
        }

        if (given === undefined || given === null) {
            continue;
        }

        const problem = fieldProblem(field as keyof Http2Options, given);
        if (problem !== undefined) {
            return `.${field} ${problem}`;
        }
    }

    return undefined;
}

function fieldProblem(field: keyof Http2Options, value: unknown): string | undefined {
    switch (field) {
        case 'h2c':
            return typeof value === 'boolean' ? undefined : `must be a boolean, got ${typeof value}`;
        case 'maxConcurrentStreams':
            return isCount(value) && (value as number) > 0 ? undefined : 'must be a positive integer';
        case 'initialWindowSize':
        case 'connectionWindowSize':
            return isCount(value) && (value as number) >= 65_535 && (value as number) <= maxWindow
                ? undefined
                : `must be an integer of bytes from 65535 to ${maxWindow}`;
        default:
            return isCount(value) ? undefined : 'must be a non-negative integer of milliseconds';
    }
}
