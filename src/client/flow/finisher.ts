import type { HttpError } from '../../errors/index.js';
import type { BodyNotes, DeadlineLeft } from '../bodies/read.js';
import type { HopResponse } from '../contract/types.js';

/** How a request settles with its final response: `request()` resolves with it, the helpers read it first. */
export interface Finisher {
    /** True when the finisher reads the response's body before the caller can see the response. */
    readonly readsBody: boolean;
    /**
     * `deadline`: what is left of the call's `deadline`, for a finisher that goes on reading;
     * `bodyNotes`: the hop's timings, for a finisher that reads to tell how the reading ended (at once,
     * where the hop's own listeners, when it has them, would tell on a later tick).
     */
    finish(
        res: HopResponse,
        resolve: (value: unknown) => void,
        reject: (err: HttpError) => void,
        deadline: DeadlineLeft | undefined,
        bodyNotes: BodyNotes
    ): void;
}

/** The finisher of `request()`: the response, its body unread. */
export const resolveResponse: Finisher = {
    readsBody: false,
    finish(res, resolve) {
        resolve(res);
    }
};
