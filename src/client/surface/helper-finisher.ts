import type { HttpError } from '../../errors/index.js';
import { type BodyNotes, type DeadlineLeft, readCheckedPayload } from '../bodies/read.js';
import { clientFailure } from '../contract/errors.js';
import type { HopResponse, ReadOptions } from '../contract/types.js';
import type { Finisher } from '../flow/finisher.js';
import { readOptionsOver, type StoredDefaults } from '../options/options.js';
import { HelperOutcome } from './helper-outcome.js';

/**
 * The finisher of a per-method helper (`get()`, `post()`...): reads the final response with the read
 * options of the call, into the helper's outcome (`helper-outcome.ts`).
 */
export class HelperFinisher implements Finisher {
    readonly readsBody = true;

    constructor(
        private readonly defaults: StoredDefaults | undefined,
        private readonly options: ReadOptions | undefined
    ) {}

    finish(
        res: HopResponse,
        resolve: (value: unknown) => void,
        reject: (err: HttpError) => void,
        deadline: DeadlineLeft | undefined,
        bodyNotes: BodyNotes
    ): void {
        try {
            readCheckedPayload(
                res,
                // The caller's read options, not the request's effective ones that listeners and redirects may have edited.
                readOptionsOver(this.defaults, this.options),
                (res.statusCode as number) >= 400,
                new HelperOutcome(res, resolve, reject),
                deadline,
                bodyNotes
            );
        } catch (err) {
            res.destroy();
            bodyNotes.bodyClosed(res);
            reject(clientFailure(`The response could not be read: ${(err as Error).message}`, err));
        }
    }
}
