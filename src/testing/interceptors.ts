import type { Interceptor } from './interceptor.js';
import { bodyMismatch, closeness, headMismatches, type Mismatch, type RequestHead } from './matching.js';

/** What decides whether an interceptor can answer a request, beside the request itself. */
export interface RequestContext {
    readonly head: RequestHead;
    /** The mock answers over HTTP/2. */
    readonly http2: boolean;
    /** The request goes over TLS. */
    readonly secure: boolean;
    /** The request verifies the server's certificate (not `rejectUnauthorized: false`). */
    readonly verifies: boolean;
}

/**
 * The interceptors of a mock, in the order they were made: a request goes to the first one that
 * matches it and can still answer (docs/testing.md, "Matching").
 */
export class InterceptorList {
    private readonly list: Interceptor[] = [];

    add(interceptor: Interceptor): void {
        this.list.push(interceptor);
    }

    clear(): void {
        this.list.length = 0;
    }

    /**
     * The interceptor that answers a request with this head, chosen before its body is read; `'body'`
     * when the first one that matches the head compares the body (the choice waits for it); undefined
     * when none matches the head.
     */
    byHead(context: RequestContext): Interceptor | 'body' | undefined {
        for (const interceptor of this.list) {
            if (
                unavailable(interceptor, context) === undefined &&
                headMismatches(interceptor.options, context.head).length === 0
            ) {
                return interceptor.options.body === undefined ? interceptor : 'body';
            }
        }

        return undefined;
    }

    /** The interceptor that answers the request, its body read; undefined when none does. */
    byRequest(context: RequestContext, body: Buffer): Interceptor | undefined {
        return this.list.find(
            (interceptor) =>
                unavailable(interceptor, context) === undefined &&
                headMismatches(interceptor.options, context.head).length === 0 &&
                bodyMismatch(interceptor.options.body, body) === undefined
        );
    }

    /**
     * The interceptor closest to a request none answered, and what kept it from answering (the fields
     * that differ, or why it could not): undefined when there is none at all.
     */
    closest(context: RequestContext, body: Buffer): string | undefined {
        let best: { interceptor: Interceptor; score: number; reasons: string[] } | undefined;
        for (const interceptor of this.list) {
            const mismatches: Mismatch[] = headMismatches(interceptor.options, context.head);
            const body_ = bodyMismatch(interceptor.options.body, body);
            if (body_ !== undefined) {
                mismatches.push(body_);
            }

            const reasons = mismatches.map((mismatch) => mismatch.reason);
            const unusable = unavailable(interceptor, context);
            if (unusable !== undefined) {
                reasons.push(unusable);
            }

            // A full match held back by its state (used up, a fault that does not apply) is the closest of all.
            const score = closeness(mismatches);
            if (best === undefined || score > best.score) {
                best = { interceptor, score, reasons };
            }
        }

        return best === undefined ? undefined : `${best.interceptor.describe()}: ${best.reasons.join('; ')}`;
    }

    /** The interceptors still expecting requests (`assertNoPending()`). */
    pending(): Interceptor[] {
        return this.list.filter((interceptor) => interceptor.pending);
    }

    get size(): number {
        return this.list.length;
    }
}

/** Why `interceptor` cannot answer a request in `context` whatever it matches, or undefined when it can. */
function unavailable(interceptor: Interceptor, context: RequestContext): string | undefined {
    const action = interceptor.action;
    if (action === undefined) {
        return 'it has no reply() or fault() yet';
    }

    if (interceptor.exhausted) {
        return `it was used up (called ${interceptor.calls}×)`;
    }

    if (action.kind === 'fault') {
        const { fault } = action;
        if ((fault === 'goaway' || fault === 'refused-stream') && !context.http2) {
            return `its ${fault} fault is HTTP/2's, and the request went over HTTP/1.1`;
        }

        if (fault === 'tls' && !context.secure) {
            return 'its TLS fault needs https';
        }

        if (fault === 'tls' && !context.verifies) {
            return 'its TLS fault is a certificate the request does not verify (rejectUnauthorized: false)';
        }
    }

    return undefined;
}
