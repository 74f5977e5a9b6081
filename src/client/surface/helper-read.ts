import type { HttpError } from '../../errors/index.js';
import { problemOfBody } from '../bodies/problem-body.js';
import { type BodyNotes, type DeadlineLeft, type ReadSink, readCheckedPayload } from '../bodies/read.js';
import { clientFailure, responseError } from '../contract/errors.js';
import type { HopResponse, ReadOptions, ResponseErrorData } from '../contract/types.js';
import type { Finisher } from '../flow/finisher.js';
import { attemptsOf } from '../flow/retry.js';
import { readOptionsOver, type StoredDefaults } from '../options/options.js';
import { errorReadSettled, errorReadStarted } from '../pipeline/error-read.js';

/** The finisher of a per-method helper: reads the final response with the read options of the call. */
export class ReadForHelper implements Finisher {
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
                new HelperRead(res, resolve, reject),
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

/**
 * The end of a per-method helper (`get()`, `post()`...) once its response has been read:
 * `{ res, payload }`, or for a 4xx/5xx status the error with the response in `data`, and in
 * `data.problem` the problem document of an `application/problem+json` body. It is the reader's
 * sink, so the helper's one promise settles straight from the reader.
 */
export class HelperRead implements ReadSink {
    readonly ownsSource = true;

    constructor(
        private readonly res: HopResponse,
        private readonly resolve: (value: unknown) => void,
        private readonly reject: (err: HttpError) => void
    ) {
        // Its error is the last thing the hop's observers learn (pipeline/error-read.ts).
        if ((res.statusCode as number) >= 400) {
            errorReadStarted(res);
        }
    }

    readSucceeded(payload: unknown, bodyBytes: number): void {
        const res = this.res;
        const statusCode = res.statusCode as number;
        if (statusCode < 400) {
            this.resolve({ res, payload });
            return;
        }

        const headers = res.headers;
        const data: ResponseErrorData<unknown> = { isResponseError: true, headers, payload, res };
        const attempts = attemptsOf.get(res);
        if (attempts !== undefined) {
            data.attempts = attempts;
        }

        const problem = problemOfBody(headers['content-type'], payload, bodyBytes);
        if (problem !== undefined) {
            data.problem = problem;
        }

        this.rejectWith(responseError(statusCode, res.statusMessage as string, data));
    }

    /** A read failure carries the response it was reading as `data.res`. */
    readFailed(err: HttpError): void {
        this.rejectWith(withResponse(err, this.res));
    }

    /** The hop's observers hear of the error before the caller does: a span ends before the caller's handler runs. */
    private rejectWith(err: HttpError): void {
        errorReadSettled(this.res, err);
        this.reject(err);
    }
}

function withResponse(err: HttpError, res: HopResponse): HttpError {
    if (typeof err.data === 'object' && err.data !== null) {
        (err.data as { res?: HopResponse }).res = res;
    } else {
        err.data = { res };
    }

    return err;
}
