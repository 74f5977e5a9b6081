import type { HttpError } from '../errors/index.js';
import { phaseTimeout } from './errors.js';
import { isCount } from './option-values.js';
import type { PhaseTimeouts } from './timings.js';

/**
 * The request option `timeouts` (README "Timings"): one bound per phase of a hop, each running from
 * the moment its phase begins as the hop's clock (hop-timings.ts) notes it. One timer per hop at a
 * time, re-armed as the phases follow one another, and none at all for a hop without the option.
 */

/** A phase a `timeouts` field bounds. */
export type BoundedPhase = keyof PhaseTimeouts;

const phaseNames: readonly BoundedPhase[] = ['lookup', 'connect', 'secureConnect', 'send', 'response'];

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

/** What a guard tells when a phase ran out: the hop, which fails with the error. */
export interface PhaseGuardOwner {
    phaseExpired(err: HttpError): void;
}

/** The bounds of one hop's phases: `enter()` as each begins, `stop()` when the hop ends. */
export class PhaseGuard {
    private timer: NodeJS.Timeout | undefined;
    private phase: BoundedPhase = 'lookup';
    // Once the hop has ended, a late event of its request or socket arms nothing.
    private stopped = false;

    constructor(
        private readonly limits: PhaseTimeouts,
        private readonly owner: PhaseGuardOwner
    ) {}

    /** A guard when `timeouts` bounds any phase, else undefined: an unbounded hop pays nothing. */
    static of(limits: PhaseTimeouts | undefined, owner: PhaseGuardOwner): PhaseGuard | undefined {
        if (limits === undefined) {
            return undefined;
        }

        for (const name of phaseNames) {
            if (limits[name]) {
                return new PhaseGuard(limits, owner);
            }
        }

        return undefined;
    }

    /** `phase` begins: the bound of the phase before it no longer applies, its own (if any) does. */
    enter(phase: BoundedPhase): void {
        if (this.stopped) {
            return;
        }

        clearTimeout(this.timer);
        this.timer = undefined;
        const limit = this.limits[phase];
        if (limit) {
            this.phase = phase;
            this.timer = setTimeout(onExpired, limit, this);
        }
    }

    stop(): void {
        this.stopped = true;
        clearTimeout(this.timer);
        this.timer = undefined;
    }

    expired(): void {
        this.timer = undefined;
        this.owner.phaseExpired(phaseTimeout(this.phase, this.limits[this.phase] as number));
    }
}

function onExpired(guard: PhaseGuard): void {
    guard.expired();
}
