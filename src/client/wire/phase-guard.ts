import type { HttpError } from '../../errors/index.js';
import { phaseTimeout } from '../contract/errors.js';
import type { PhaseTimeouts } from '../contract/timings.js';
import { type BoundedPhase, phaseNames } from '../options/timeouts.js';

/**
 * The request option `timeouts` at work (README "Timings"; its grammar is options/timeouts.ts): one
 * bound per phase of a hop, each running from the moment its phase begins as the hop's clock
 * (hop-timings.ts) notes it. One timer per hop at a time, re-armed as the phases follow one another,
 * and none at all for a hop without the option.
 */

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
