import type { HttpError } from '../../errors/index.js';
import { isHttpError } from '../../errors/index.js';
import { badUpstream, clientFailure } from '../contract/errors.js';
import type { RedirectHop } from '../contract/failure-data.js';
import type { EffectiveOptions, HopRequest, HopResponse } from '../contract/types.js';
import { checkHeaders, checkOptions, copyHeaders } from '../options/options.js';
import type { AnsweredHop } from '../wire/hop.js';
import { redirectOptions, resolveRedirect } from './redirect.js';

/** What following a call's redirects needs of its flow (hop-loop.ts). */
export interface RedirectingFlow {
    readonly settled: boolean;
    redirectCount: number;
    /** The request of the hop under way, once it exists: what `redirected` is given. */
    readonly currentRequest: HopRequest | undefined;
    fail(err: HttpError): void;
    /** Ends the hop under way with `err`, or fails the call between hops. */
    interrupt(err: HttpError): void;
    startHop(method: string, target: URL, options: EffectiveOptions): void;
}

/**
 * The redirects of one call (README "Redirects"), made the first time one is followed: the trace of
 * the 3xx responses so far, `beforeRedirect` and `redirected`. Which redirect is followed, with which
 * method and options, is the pure policy of redirect.ts.
 */
export class RedirectChain {
    // The redirect responses so far: `data` of the errors that end the chain.
    private readonly trace: RedirectHop[] = [];
    // A redirect's `redirected` callback, due once the next hop's request exists.
    private redirectedDue: (() => void) | undefined;

    constructor(private readonly flow: RedirectingFlow) {}

    /** Follows `res`, the response of `hop`, with `redirectMethod`; the caller has let go of its body. */
    follow(hop: AnsweredHop, res: HopResponse, redirectMethod: string): void {
        const options = hop.options;
        const from = hop.destination;
        this.trace.push({ method: hop.method, url: from.href });
        if (options.redirects === 0) {
            this.flow.fail(badUpstream('Maximum redirections reached', this.trace));
            return;
        }

        const target = resolveRedirect(from.href, res.headers.location, this.trace);
        if (!(target instanceof URL)) {
            this.flow.fail(target);
            return;
        }

        const statusCode = res.statusCode as number;
        const next = redirectOptions(options, redirectMethod, from.origin, target.origin);
        if (next.beforeRedirect === undefined) {
            this.redirect(redirectMethod, statusCode, target, next);
        } else {
            this.askBeforeRedirect(redirectMethod, statusCode, target, next, res);
        }
    }

    /** The next hop was sent: `redirected` is told of its request, if it got one. */
    hopSent(): void {
        const redirectedDue = this.redirectedDue;
        if (redirectedDue !== undefined && this.flow.currentRequest !== undefined) {
            this.redirectedDue = undefined;
            redirectedDue();
        }
    }

    /** A hop was answered without a request (by the cache): there is no request to tell `redirected` about. */
    hopAnswered(): void {
        this.redirectedDue = undefined;
    }

    private askBeforeRedirect(
        redirectMethod: string,
        statusCode: number,
        target: URL,
        next: EffectiveOptions,
        res: HopResponse
    ): void {
        let called = false;
        const proceed = (err?: Error) => {
            if (called || this.flow.settled) {
                return;
            }

            called = true;
            if (err) {
                this.flow.fail(isHttpError(err) ? err : clientFailure(`Redirect stopped: ${err.message}`, err));
            } else {
                this.redirect(redirectMethod, statusCode, target, next);
            }
        };

        try {
            const result = next.beforeRedirect!(redirectMethod, statusCode, target.href, res.headers, next, proceed);
            if (result instanceof Promise) {
                result.catch(proceed);
            }
        } catch (err) {
            proceed(err instanceof Error ? err : new Error(String(err)));
        }
    }

    private redirect(method: string, statusCode: number, target: URL, next: EffectiveOptions): void {
        const flow = this.flow;
        // beforeRedirect may have edited the options: hold them to the same rules as the caller's.
        next.headers = copyHeaders(undefined, next.headers);
        const problem = checkOptions(next as unknown as Record<string, unknown>) ?? checkHeaders(next.headers);
        if (problem !== undefined) {
            flow.fail(problem);
            return;
        }

        flow.redirectCount++;
        const redirected = next.redirected;
        this.redirectedDue =
            redirected === undefined
                ? undefined
                : () => {
                      if (flow.settled) {
                          return;
                      }

                      try {
                          redirected(statusCode, target.href, flow.currentRequest!);
                      } catch (err) {
                          flow.interrupt(clientFailure('The redirected callback threw', err));
                      }
                  };
        flow.startHop(method, target, next);
    }
}
