import { performance } from 'node:perf_hooks';
import type { HttpError } from '../../errors/index.js';
import type { DeadlineLeft } from '../bodies/read.js';
import { deadlineExceeded } from '../contract/errors.js';

/**
 * The request option `deadline` (README "Timings"): one bound on a whole call, its hops, redirects,
 * retries and the waits before them, and for the helpers the read of the body. The flow that owns
 * it (hop-loop.ts) asks it whether a retry's wait still fits, and hands what is left to the read.
 */

/** What a deadline tells when it passes: the flow, which stops whatever is under way with the error. */
export interface DeadlineOwner {
    deadlinePassed(err: HttpError): void;
}

export class CallDeadline {
    /** True once the deadline has passed: nothing more may be tried. */
    passed = false;
    private readonly at: number;
    private timer: NodeJS.Timeout | undefined;

    constructor(
        private readonly limit: number,
        private readonly owner: DeadlineOwner
    ) {
        this.at = performance.now() + limit;
        this.timer = setTimeout(onDeadline, limit, this);
    }

    /** True when a wait of `delay` ms ends before the deadline, leaving time for the attempt after it. */
    allows(delay: number): boolean {
        return !this.passed && performance.now() + delay < this.at;
    }

    /** What is left, for a read that goes on after the request settled; the timer here stops. */
    handOver(): DeadlineLeft {
        this.stop();
        return { left: Math.max(0, this.at - performance.now()), limit: this.limit };
    }

    stop(): void {
        clearTimeout(this.timer);
        this.timer = undefined;
    }

    expired(): void {
        this.timer = undefined;
        this.passed = true;
        this.owner.deadlinePassed(deadlineExceeded(this.limit));
    }
}

function onDeadline(deadline: CallDeadline): void {
    deadline.expired();
}
