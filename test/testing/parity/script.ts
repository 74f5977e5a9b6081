import { gzipSync } from 'node:zlib';
import type { Client } from '../../../src/client/index.js';
import type { MockNetwork, MockResponse } from '../../../src/testing/index.js';

/**
 * What an origin does in a parity scenario (test/testing/parity.test.ts), said once and played two
 * ways: by a MockNetwork (`mockScript` below) and by a real server on loopback (real-origin.ts). A
 * scenario's calls then run against each, and what the client reports must be the same.
 */

/** What the origin answers one request with. */
export type Answer =
    | {
          readonly status: number;
          readonly headers?: Record<string, string | string[]>;
          /** A string, or a value sent as JSON. */
          readonly body?: string | object;
          /** Answer with the request's method and body: `${method} ${body}`. */
          readonly echo?: boolean;
          /** The body gzipped, with `content-encoding: gzip`. */
          readonly gzip?: boolean;
          /** Milliseconds before the headers. */
          readonly delay?: number;
          /** Milliseconds between the headers and the body. */
          readonly bodyDelay?: number;
          /** The connection drops after this many bytes of the body. */
          readonly cutAfter?: number;
      }
    | {
          readonly fault: 'connection-reset' | 'goaway' | 'refused-stream';
          readonly delay?: number;
      };

/** One route of the origin: the first step whose method and path match a request, with answers left, answers it. */
export interface Step {
    readonly method?: string;
    readonly path: string;
    readonly answer: Answer;
    /** How many requests it answers; default 1. */
    readonly times?: number;
}

export type Protocol = '1.1' | '2';

export interface Scenario {
    readonly name: string;
    readonly steps: readonly Step[];
    /** Only over this protocol (HTTP/2's faults). */
    readonly only?: Protocol;
    /** Nothing listens at the origin: the connection is refused. */
    readonly refused?: boolean;
    /** The client verifies the server's (self-signed) certificate: the TLS handshake fails. */
    readonly verify?: boolean;
    /** The hops of concurrent calls end in no set order: compared as a set. */
    readonly unordered?: boolean;
    /** The calls, and what the client reported of them (made comparable: outcome.ts). */
    run(api: Client, origin: string): Promise<unknown>;
}

/** An answer that is a reply, not a fault. */
export type Reply = Exclude<Answer, { readonly fault: unknown }>;

/** The bytes and fields of an answer's body as both origins send them. */
export function answerBody(answer: Reply): {
    body: Buffer | undefined;
    headers: Record<string, string | string[]>;
} {
    const headers: Record<string, string | string[]> = { ...answer.headers };
    if (answer.body === undefined) {
        return { body: undefined, headers };
    }

    let body: Buffer;
    if (typeof answer.body === 'string') {
        body = Buffer.from(answer.body);
    } else {
        body = Buffer.from(JSON.stringify(answer.body));
        headers['content-type'] ??= 'application/json';
    }

    if (answer.gzip) {
        body = gzipSync(body);
        headers['content-encoding'] = 'gzip';
    }

    return { body, headers };
}

/** The script played by a mock: one interceptor per step. */
export function mockScript(mock: MockNetwork, origin: string, steps: readonly Step[]): void {
    for (const step of steps) {
        const interceptor = mock.origin(origin).intercept({ method: step.method ?? 'GET', path: step.path });
        const answer = step.answer;
        let scope: ReturnType<typeof interceptor.reply>;
        if ('fault' in answer) {
            scope = interceptor.fault(answer.fault);
        } else if (answer.echo) {
            scope = interceptor.reply(
                (request): MockResponse => ({
                    status: answer.status,
                    headers: answer.headers,
                    body: `${request.method} ${request.text()}`
                })
            );
        } else {
            const { body, headers } = answerBody(answer);
            scope = interceptor.reply(answer.status, body, headers);
            if (answer.cutAfter !== undefined) {
                scope.cutAfter(answer.cutAfter);
            }
        }

        scope.delay({ headers: answer.delay ?? 0, body: 'fault' in answer ? 0 : (answer.bodyDelay ?? 0) });
        if ((step.times ?? 1) > 1) {
            scope.times(step.times as number);
        }
    }
}
