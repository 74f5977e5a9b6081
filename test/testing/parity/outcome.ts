import type { Client, RequestUri, ResponseDetails, TimedResponse } from '../../../src/client/index.js';
import type { HttpError } from '../../../src/errors/index.js';

/**
 * What the client reports of a call, made comparable between a mock and a real server: the status,
 * the body, the headers an origin chose (not the ones a server adds of itself: `date`, `connection`,
 * `keep-alive`), the error with its cause, and every hop as the event pipeline tells it.
 */

// Fields a Node.js server adds that a mock does not.
const serverFields = new Set(['date', 'connection', 'keep-alive']);

export interface Outcome {
    ok?: {
        status: number;
        body: string;
        headers: Record<string, unknown>;
        httpVersion: string;
        /** The phases of the timings that were measured, the connection's apart (a mock has none). */
        phases: string[];
    };
    err?: {
        status: number;
        message: string;
        code: unknown;
        phase: unknown;
        cause: string | undefined;
        causeCode: unknown;
        attempts: unknown;
        payload: string | undefined;
    };
}

/** The outcome of a helper's call (`get()`, `post()`...). */
export async function outcomeOf(call: Promise<{ res: TimedResponse; payload: unknown }>): Promise<Outcome> {
    try {
        const { res, payload } = await call;
        return { ok: okOf(res, payload) };
    } catch (err) {
        return { err: errOf(err as HttpError) };
    }
}

export function okOf(res: TimedResponse, payload: unknown): NonNullable<Outcome['ok']> {
    const headers: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(res.headers)) {
        if (!serverFields.has(name)) {
            headers[name] = value;
        }
    }

    const phases = res.timings.phases;
    return {
        status: res.statusCode as number,
        body: Buffer.isBuffer(payload) ? payload.toString() : JSON.stringify(payload),
        headers,
        httpVersion: res.httpVersion,
        phases: (['request', 'firstByte', 'download', 'total'] as const).filter((phase) => phases[phase] !== undefined)
    };
}

export function errOf(err: HttpError): NonNullable<Outcome['err']> {
    const data = err.data as { code?: unknown; phase?: unknown; attempts?: unknown; payload?: unknown } | null;
    const cause = err.cause as { message?: string; code?: unknown } | undefined;
    return {
        status: err.output.statusCode,
        message: err.message,
        code: data?.code,
        phase: data?.phase,
        cause: cause?.message,
        causeCode: cause?.code,
        attempts: data?.attempts,
        payload: Buffer.isBuffer(data?.payload) ? data.payload.toString() : undefined
    };
}

/** Every hop of the client's calls, as the `response` event tells it, in the order they ended. */
export function hopsOf(api: Client): string[] {
    const hops: string[] = [];
    api.events?.on('response', (err: HttpError | undefined, details: ResponseDetails) => {
        const uri: RequestUri = details.uri;
        const resend = uri.resendReason === undefined ? '' : ` resend=${uri.resendReason}`;
        const outcome =
            err === undefined
                ? String(details.res?.statusCode)
                : `${err.output.statusCode} ${String((err.data as { code?: unknown } | null)?.code)}`;
        hops.push(
            `${uri.method} ${uri.pathname}${uri.search} retry=${uri.retryCount} redirect=${uri.redirectCount}${resend} reused=${details.req?.reusedSocket === true} -> ${outcome}`
        );
    });
    return hops;
}
