import type { PhaseTimeouts } from '../contract/timings.js';
import { isCount } from './values.js';

/** The grammar of the `timeouts` option (README "Timings") and how a request's limits merge over a client's. */

/** A phase a `timeouts` field bounds. */
export type BoundedPhase = keyof PhaseTimeouts;

/** The phases in the order a hop goes through them. */
export const phaseNames: readonly BoundedPhase[] = ['lookup', 'connect', 'secureConnect', 'send', 'response'];

/** Why a `timeouts` value cannot be used, starting with `.field` when a field is wrong; undefined when it can. */
export function phaseTimeoutsProblem(value: unknown): string | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return `must be an object of phase limits in milliseconds (${phaseNames.join(', ')})`;
    }

    for (const name in value) {
        const limit = (value as Record<string, unknown>)[name];
        if (!phaseNames.includes(name as BoundedPhase)) {
            return `.${name} is not a phase: use ${phaseNames.join(', ')}`;
        }

        if (limit !== undefined && limit !== null && !isCount(limit)) {
            return `.${name} must be a non-negative integer of milliseconds`;
        }
    }

    return undefined;
}

/** The client's default `timeouts` with the request's over them, phase by phase. */
export function mergePhaseTimeouts(defaults: PhaseTimeouts, given: PhaseTimeouts): PhaseTimeouts {
    const merged: PhaseTimeouts = { ...defaults };
    for (const name of phaseNames) {
        const limit = given[name];
        // As for every option, null or undefined leaves the default in place.
        if (limit !== undefined && limit !== null) {
            merged[name] = limit;
        }
    }

    return merged;
}
