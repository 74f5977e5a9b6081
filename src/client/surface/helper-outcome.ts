import type { HttpError } from '../../errors/index.js';
import { problemOfBody } from '../bodies/problem-body.js';
import type { ReadSink } from '../bodies/read.js';
import { responseError } from '../contract/errors.js';
import type { HopResponse, ResponseErrorData } from '../contract/types.js';
import { attemptsOf } from '../flow/retry.js';
import { errorReadSettled, errorReadStarted } from '../pipeline/error-read.js';

/**
 * The outcome of a per-method helper (`get()`, `post()`...) once its response has been read:
 * `{ res, payload }`, or for a 4xx/5xx status the error with the response in `data`, and in
 * `data.problem` the problem document of an `application/problem+json` body. It is the reader's
 * sink, so the helper's one promise settles straight from the reader.
 */
export class HelperOutcome implements ReadSink {
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
