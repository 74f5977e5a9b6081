import { clientFailure } from '../client/contract/errors.js';
import { agentFor } from '../client/wire/connection-settings.js';
import type { Exchange, ExchangeHop, StandInTransport, Transport } from '../client/wire/transport.js';
import type { HttpError } from '../errors/index.js';
import { MockPools } from './connections.js';
import { MockNotMatchedError } from './errors.js';
import { type ExchangeHost, MockExchange } from './exchange.js';
import { installForProcess, uninstallFromProcess } from './install.js';
import { Interceptor, type MockInterceptor } from './interceptor.js';
import { InterceptorList, type RequestContext } from './interceptors.js';
import { matchesText } from './matching.js';
import { requestHead } from './mocked-request.js';
import { MockOrigin } from './origin.js';
import type { InterceptOptions, MockedRequest, MockOriginSettings, TextMatcher } from './types.js';

/**
 * Mock origins a client uses instead of the network (docs/testing.md), for HTTP/1.1 and HTTP/2
 * alike: given to a client (`client.defaults({ mock })`) or installed for the process (`install()`),
 * it answers each hop from its interceptors under the transport seam, so everything above it — the
 * redirects, retries, timeouts, the cache, decoding, the events, channels, timings and spans — runs
 * as it does on the network. A request no interceptor answers fails with a 500 whose cause, a
 * `MockNotMatchedError`, names it and the closest interceptor; it goes to the network only for an
 * origin `allowNetwork()` names.
 */
export class MockNetwork implements StandInTransport {
    private readonly interceptors = new InterceptorList();
    private readonly settings = new Map<string, MockOriginSettings>();
    private readonly networkOrigins: TextMatcher[] = [];
    // The connections each client's pools hold, by the agent a hop's options choose (one pool each).
    private readonly pools = new WeakMap<object, MockPools>();
    private readonly unpooled = new MockPools();
    private readonly live = new Set<MockExchange>();
    private readonly seen: MockedRequest[] = [];
    private readonly misses: MockNotMatchedError[] = [];
    private readonly host: ExchangeHost = {
        chooseByHead: (context) => take(this.interceptors.byHead(context)),
        chooseByRequest: (context, body) => take(this.interceptors.byRequest(context, body)),
        received: (request, interceptor, context) => this.received(request, interceptor, context),
        exchangeOver: (exchange) => this.live.delete(exchange)
    };

    /** An interceptor (docs/testing.md, "Matching"); answer it with `reply()` or `fault()`. */
    intercept(options: InterceptOptions): MockInterceptor {
        const interceptor = new Interceptor({
            ...options,
            origin: typeof options.origin === 'string' ? originOf(options.origin) : options.origin
        });
        this.interceptors.add(interceptor);
        return interceptor;
    }

    /** The interceptors of one origin (`.get(path)`, `.post(path, body)`...), and what it speaks. */
    origin(origin: string, settings?: MockOriginSettings): MockOrigin {
        const normalized = originOf(origin);
        if (settings !== undefined) {
            this.settings.set(normalized, settings);
        }

        return new MockOrigin(this, normalized);
    }

    /** Lets the requests to these origins that no interceptor matches go to the network. */
    allowNetwork(...origins: TextMatcher[]): this {
        for (const origin of origins) {
            this.networkOrigins.push(typeof origin === 'string' ? originOf(origin) : origin);
        }

        return this;
    }

    /** Every request the mock received, answered or not, in order. */
    get requests(): readonly MockedRequest[] {
        return this.seen;
    }

    /** The requests no interceptor answered (each also failed its call). */
    get unmatched(): readonly MockNotMatchedError[] {
        return this.misses;
    }

    /** The interceptors still expecting requests, in words. */
    pending(): string[] {
        return this.interceptors.pending().map((interceptor) => interceptor.describe());
    }

    /** Throws an Error listing the interceptors that were not called as often as they said (a persisted one: never). */
    assertNoPending(): void {
        const pending = this.pending();
        if (pending.length > 0) {
            const list = pending.map((line) => `\n  - ${line}`).join('');
            throw new Error(
                `${pending.length} mocked ${pending.length === 1 ? 'reply was' : 'replies were'} not used:${list}`
            );
        }
    }

    /** Answers for every client of the process that has no `mock` of its own; throws when another mock or recorder is installed. */
    install(): this {
        installForProcess(this, 'mock');
        return this;
    }

    /** Stops answering for the process (when installed); the clients given it as `mock` keep it. */
    uninstall(): void {
        uninstallFromProcess(this);
    }

    /**
     * Uninstalls the mock, forgets its interceptors and fails the exchanges still under way (a 500, or
     * their body's read): nothing of it is left running.
     */
    close(): void {
        this.uninstall();
        this.interceptors.clear();
        for (const exchange of [...this.live]) {
            exchange.abandon();
        }

        this.live.clear();
    }

    /** The client's way in (src/client/wire/transport.ts, `StandInTransport`); not for callers. */
    openExchange(hop: ExchangeHop, http2: boolean, _network: Transport): Exchange | undefined {
        const { destination, options } = hop;
        const origin = destination.origin;
        const speaksHttp2 = http2 && this.settings.get(origin)?.http2 !== false;
        if (
            this.networkOrigins.some((allowed) => matchesText(allowed, origin)) &&
            !this.answersHead(hop, speaksHttp2)
        ) {
            return undefined;
        }

        const agent = agentFor(destination, options, hop.agents);
        let pools = agent === false ? this.unpooled : this.pools.get(agent);
        if (pools === undefined) {
            pools = new MockPools();
            this.pools.set(agent as object, pools);
        }

        const keepAlive = agent !== false && (agent as { keepAlive?: boolean }).keepAlive === true;
        const exchange = new MockExchange(hop, speaksHttp2, { pools, key: origin, keepAlive }, this.host);
        this.live.add(exchange);
        return exchange;
    }

    /** Whether an interceptor that can still answer matches the hop's head as it is before the `request` listeners. */
    private answersHead(hop: ExchangeHop, http2: boolean): boolean {
        const headers: Record<string, string> = {};
        for (const name in hop.headers) {
            const value = hop.headers[name];
            headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
        }

        const context: RequestContext = {
            head: requestHead(hop.method, hop.destination, headers),
            http2,
            secure: hop.destination.isHttps,
            verifies: hop.options.rejectUnauthorized !== false
        };
        return this.interceptors.byHead(context) !== undefined;
    }

    private received(
        request: MockedRequest,
        interceptor: Interceptor | undefined,
        context: RequestContext
    ): HttpError | undefined {
        this.seen.push(request);
        if (interceptor !== undefined) {
            return undefined;
        }

        const miss = new MockNotMatchedError(request, this.interceptors.closest(context, request.body));
        this.misses.push(miss);
        return clientFailure(miss.message, miss);
    }
}

/** An interceptor chosen is called: counted at once, so that concurrent requests never share its last call. */
function take<T extends Interceptor | 'body' | undefined>(chosen: T): T {
    if (chosen instanceof Interceptor) {
        chosen.calls++;
    }

    return chosen;
}

/** An origin as requests have it (`new URL(...).origin`); a TypeError for anything but an http(s) origin. */
function originOf(origin: string): string {
    let url: URL;
    try {
        url = new URL(origin);
    } catch {
        throw new TypeError(
            `A mock origin must be a URL such as https://api.example.com, got ${JSON.stringify(origin)}`
        );
    }

    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search !== '') {
        throw new TypeError(
            `A mock origin is a scheme, host and port alone, such as https://api.example.com, got ${origin}`
        );
    }

    return url.origin;
}
