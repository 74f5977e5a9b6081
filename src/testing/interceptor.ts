import { Readable } from 'node:stream';
import { describeIntercept } from './matching.js';
import { checkReply } from './reply.js';
import type {
    InterceptOptions,
    MockBody,
    MockDelays,
    MockFault,
    MockFaultDetails,
    MockReplyFunction,
    MockResponse
} from './types.js';

/**
 * One interceptor of a `MockNetwork` (docs/testing.md): what it matches, what it answers, how often
 * and how late. Made by `intercept()` (or an origin's `get()`...), it is given its answer once, by
 * `reply()` or `fault()`, which return the same interceptor to say the rest (`times()`, `persist()`,
 * `delay()`, `cutAfter()`).
 */
export interface MockInterceptor {
    /** Answers with `status`, `body` and `headers`. */
    reply(status: number, body?: MockBody, headers?: MockResponse['headers']): MockScope;
    /** Answers with what `reply` makes of the request (its body read whole). */
    reply(reply: MockReplyFunction): MockScope;
    /** Fails the request as the network would (`MockFault`). */
    fault(fault: MockFault, details?: MockFaultDetails): MockScope;
}

/** How often and how an interceptor answers, once it knows what it answers. */
export interface MockScope {
    /** Answers `count` requests (default 1), then no more. */
    times(count: number): MockScope;
    /** Answers every request it matches, for as long as the mock lives. */
    persist(): MockScope;
    /** Waits `ms` before the response headers (or the fault); or, as an object, before the headers and before the body's first byte. */
    delay(delay: number | MockDelays): MockScope;
    /**
     * The connection is reset after `bytes` of the body (0: right after the headers): the body is cut
     * short as when a server goes away mid-response (the read fails; over HTTP/2 the session's every stream).
     */
    cutAfter(bytes: number): MockScope;
}

/** What an interceptor answers. */
export type MockAction =
    | { readonly kind: 'reply'; readonly reply: MockResponse | MockReplyFunction }
    | { readonly kind: 'fault'; readonly fault: MockFault; readonly details: MockFaultDetails };

const faults = new Set<MockFault>(['connection-refused', 'connection-reset', 'tls', 'goaway', 'refused-stream']);

export class Interceptor implements MockInterceptor, MockScope {
    action: MockAction | undefined;
    /** Requests it answered. */
    calls = 0;
    headersDelay = 0;
    bodyDelay = 0;
    cut: number | undefined;
    private limit = 1;
    private persisted = false;

    constructor(readonly options: InterceptOptions) {}

    /** True once it answered as many requests as it may. */
    get exhausted(): boolean {
        return !this.persisted && this.calls >= this.limit;
    }

    /** True while it still expects requests it was told to answer. */
    get pending(): boolean {
        return this.persisted ? this.calls === 0 : this.calls < this.limit;
    }

    /** The interceptor in words, for the errors and `pending()`. */
    describe(): string {
        const what =
            this.action === undefined
                ? 'no reply'
                : this.action.kind === 'fault'
                  ? `fault ${this.action.fault}`
                  : 'reply';
        const count = this.persisted ? `persist, called ${this.calls}×` : `called ${this.calls} of ${this.limit}×`;
        return `${describeIntercept(this.options)} (${what}; ${count})`;
    }

    reply(status: number | MockReplyFunction, body?: MockBody, headers?: MockResponse['headers']): MockScope {
        this.assertUnanswered();
        if (typeof status === 'function') {
            this.action = { kind: 'reply', reply: status };
        } else {
            const response: MockResponse = { status, body, headers };
            checkReply(response);
            this.action = { kind: 'reply', reply: response };
        }

        return this;
    }

    fault(fault: MockFault, details: MockFaultDetails = {}): MockScope {
        this.assertUnanswered();
        if (!faults.has(fault)) {
            throw new TypeError(`Unknown mock fault ${JSON.stringify(fault)}: one of ${[...faults].join(', ')}`);
        }

        if (fault === 'tls' && typeof this.options.origin === 'string' && this.options.origin.startsWith('http:')) {
            throw new TypeError(`A TLS fault needs an https origin, not ${this.options.origin}`);
        }

        this.action = { kind: 'fault', fault, details };
        return this;
    }

    times(count: number): MockScope {
        if (!Number.isInteger(count) || count < 1) {
            throw new TypeError(`times() takes a positive integer, got ${String(count)}`);
        }

        this.assertRepeatable();
        this.limit = count;
        return this;
    }

    persist(): MockScope {
        this.assertRepeatable();
        this.persisted = true;
        return this;
    }

    delay(delay: number | MockDelays): MockScope {
        const { headers = 0, body = 0 } = typeof delay === 'number' ? { headers: delay } : delay;
        for (const ms of [headers, body]) {
            if (!Number.isFinite(ms) || ms < 0) {
                throw new TypeError(`delay() takes milliseconds (0 or more), got ${String(ms)}`);
            }
        }

        this.headersDelay = headers;
        this.bodyDelay = body;
        return this;
    }

    cutAfter(bytes: number): MockScope {
        if (this.action?.kind !== 'reply') {
            throw new TypeError('cutAfter() cuts the body of a reply: call reply() first');
        }

        if (!Number.isInteger(bytes) || bytes < 0) {
            throw new TypeError(`cutAfter() takes a byte count (0 or more), got ${String(bytes)}`);
        }

        this.cut = bytes;
        return this;
    }

    private assertUnanswered(): void {
        if (this.action !== undefined) {
            throw new TypeError(`The interceptor ${describeIntercept(this.options)} already has its answer`);
        }
    }

    /** A stream can be sent once: a reply sent more than once makes one per request (a reply function). */
    private assertRepeatable(): void {
        const action = this.action;
        if (action?.kind === 'reply' && typeof action.reply === 'object' && action.reply.body instanceof Readable) {
            throw new TypeError('A stream body is sent once: reply with a function that makes a stream per request');
        }
    }
}
