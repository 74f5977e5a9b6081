import type { IncomingMessage } from 'node:http';
import type { HttpError } from '../errors/index.js';
import { responseError } from './errors.js';
import type { ReadSink } from './read.js';
import { attemptsOf } from './retry.js';
import type { ResponseErrorData } from './types.js';

/**
 * The end of a per-method helper (`get()`, `post()`...) once its response has been read (spec 7.1):
 * `{ res, payload }`, or for a 4xx/5xx status the error with the response in `data`. It is the
 * reader's sink, so the helper's one promise settles straight from the reader.
 */
export class HelperRead implements ReadSink {
    constructor(
        private readonly res: IncomingMessage,
        private readonly resolve: (value: unknown) => void,
        private readonly reject: (err: HttpError) => void
    ) {}

    readSucceeded(payload: unknown): void {
        const res = this.res;
        const statusCode = res.statusCode as number;
        if (statusCode < 400) {
            this.resolve({ res, payload });
            return;
        }

        const data: ResponseErrorData<unknown> = { isResponseError: true, headers: res.headers, payload, res };
        const attempts = attemptsOf.get(res);
        if (attempts !== undefined) {
            data.attempts = attempts;
        }

        this.reject(responseError(statusCode, res.statusMessage as string, data));
    }

    /** A read failure carries the response it was reading as `data.res`. */
    readFailed(err: HttpError): void {
        this.reject(withResponse(err, this.res));
    }
}

function withResponse(err: HttpError, res: IncomingMessage): HttpError {
    if (typeof err.data === 'object' && err.data !== null) {
        (err.data as { res?: IncomingMessage }).res = res;
    } else {
        err.data = { res };
    }

    return err;
}
