import { isToken } from '../../common/http-token.js';
import { isCount } from './values.js';

/** The grammar of the `retry` option (README "Retries"); what a valid one does is the flow's (flow/retry.ts). */

const retryFields = new Set(['limit', 'methods', 'statusCodes', 'errorCodes', 'backoff', 'maxRetryAfter']);

/**
 * Why a `retry` option value cannot be used, or undefined when it can. A problem with a field
 * starts with `.field`, so the message reads `Option retry.limit must be ...`.
 */
export function retryProblem(value: unknown): string | undefined {
    if (value === null || typeof value === 'boolean') {
        return undefined;
    }

    if (typeof value !== 'object' || Array.isArray(value)) {
        return `must be true, false or an object of ${[...retryFields].join(', ')}`;
    }

    const options = value as Record<string, unknown>;
    for (const field in options) {
        const given = options[field];
        if (!retryFields.has(field)) {
            return `has an unknown field ${JSON.stringify(field)} (known: ${[...retryFields].join(', ')})`;
        }

        if (given === undefined || given === null) {
            continue;
        }

        const problem = fieldProblem(field, given);
        if (problem !== undefined) {
            return `.${field} ${problem}`;
        }
    }

    return undefined;
}

function fieldProblem(field: string, value: unknown): string | undefined {
    switch (field) {
        case 'limit':
            return isCount(value) ? undefined : 'must be a non-negative integer';
        case 'maxRetryAfter':
            return isCount(value) ? undefined : 'must be a non-negative integer of milliseconds';
        case 'methods':
            return isArrayOf(value, (item) => typeof item === 'string' && isToken(item))
                ? undefined
                : 'must be an array of HTTP method names';
        case 'statusCodes':
            return isArrayOf(
                value,
                (item) => Number.isInteger(item) && (item as number) >= 100 && (item as number) <= 599
            )
                ? undefined
                : 'must be an array of HTTP status codes (100-599)';
        case 'errorCodes':
            return isArrayOf(value, (item) => typeof item === 'string' && item !== '')
                ? undefined
                : 'must be an array of error codes such as ECONNRESET';
        default:
            return backoffProblem(value);
    }
}

function backoffProblem(value: unknown): string | undefined {
    if (typeof value === 'function') {
        return undefined;
    }

    if (typeof value !== 'object' || Array.isArray(value)) {
        return 'must be an object { base, cap } of milliseconds or a function (retryCount) => milliseconds';
    }

    for (const field in value) {
        const given = (value as Record<string, unknown>)[field];
        if (field !== 'base' && field !== 'cap') {
            return `has an unknown field ${JSON.stringify(field)} (known: base, cap)`;
        }

        if (given !== undefined && given !== null && !isCount(given)) {
            return `.${field} must be a non-negative integer of milliseconds`;
        }
    }

    return undefined;
}

function isArrayOf(value: unknown, isItem: (item: unknown) => boolean): boolean {
    return Array.isArray(value) && value.every(isItem);
}
