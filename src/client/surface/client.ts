import type { Readable } from 'node:stream';
import type { EventEmitter } from 'eventemitter3';
import { toReadableStream } from '../bodies/payload.js';
import { type ReadableSource, readPayload } from '../bodies/read.js';
import { ownCache } from '../cache/settings.js';
import type {
    Agents,
    ClientEvents,
    DefaultsOptions,
    ReadOptions,
    RequestAndReadOptions,
    RequestOptions,
    RequestPromise,
    ResponseWithPayload
} from '../contract/types.js';
import { resolveResponse } from '../flow/finisher.js';
import { beginCall, RequestFlow } from '../flow/request-flow.js';
import {
    assertDefaults,
    mergeOptions,
    readOptionsOver,
    type StoredDefaults,
    withoutUnset
} from '../options/options.js';
import { createEmitter } from '../pipeline/emitter.js';
import { assertAgents, createAgents } from '../wire/http1/agents.js';
import { type CacheControl, parseCacheControl } from './cache-control.js';
import { HelperFinisher } from './helper-finisher.js';

/** The emitter of a client made with `defaults({ events: true })`; see `ClientEvents` for the contract. */
export type ClientEmitter = EventEmitter<ClientEvents>;

/**
 * A client that has its `events` emitter, as `defaults()` types the clients it makes: one made with
 * `events: true`, and every client derived from such a client without `events: false` (README "The
 * event pipeline"). `client.events.on(...)` needs no check on it.
 */
export type ClientWithEvents = Client & { readonly events: ClientEmitter };

/** Options of `defaults()` that give the new client an emitter whatever its parent has: `events: true`. */
type TurningEventsOn = DefaultsOptions & { events: true };

/** Options of `defaults()` that keep the parent's emitter: `events` left unset (`true` also keeps it). */
type KeepingEvents = DefaultsOptions & { events?: true | null | undefined };

/**
 * An HTTP/HTTPS client (README, "Client"). `client` is a ready instance; `defaults()` derives new ones that
 * share its agents and, when enabled, its event emitter.
 */
export class Client {
    /** The connection pools (README, "Agents"); a property may be replaced by another agent. */
    readonly agents: Agents;
    /** Present only on clients made with `defaults({ events: true })` and the clients derived from them. */
    declare readonly events?: ClientEmitter;

    readonly #defaults: StoredDefaults | undefined;

    constructor(defaults?: StoredDefaults, agents?: Agents, events?: ClientEmitter) {
        this.#defaults = defaults;
        this.agents = agents ?? createAgents();
        if (events !== undefined) {
            // Own property only when enabled: a client without events has no `events` at all.
            (this as { events?: ClientEmitter }).events = events;
        }
    }

    /**
     * A new client whose defaults are these merged with `options` (headers merged by name); repeatable.
     * Throws a `TypeError` naming the option for bad options. With `events: true`, and on a client that
     * has `events` unless `events: false` turns them off, the new client has `events`, and its type says
     * so (`ClientWithEvents`).
     */
    defaults(options: TurningEventsOn): ClientWithEvents;
    defaults(this: ClientWithEvents, options: KeepingEvents): ClientWithEvents;
    defaults(options: DefaultsOptions): Client;
    defaults(options: DefaultsOptions): Client {
        assertDefaults(options);
        const { agents, events, ...rest } = withoutUnset(options);
        if (agents !== undefined) {
            assertAgents(agents);
        }

        // Merged as a request's options are merged over defaults (headers by name, phase timeouts by phase).
        const merged: StoredDefaults = mergeOptions(this.#defaults, rest);
        if (rest.cache !== undefined) {
            merged.cache = ownCache(rest.cache);
        }

        // Derived clients share the parent's emitter, so instrumenting a root client covers them all.
        const emitter = events === false ? undefined : (this.events ?? (events ? createEmitter() : undefined));
        return new Client(setsNothing(merged) ? undefined : merged, agents ?? this.agents, emitter);
    }

    /**
     * Sends a request and resolves with the response once its headers arrive. The promise carries
     * `req`, the first `ClientRequest`. Every failure rejects with an `HttpError`; nothing throws.
     */
    request(method: string | undefined = 'GET', uri: string | URL, options?: RequestOptions): RequestPromise {
        const flow = new RequestFlow(this, resolveResponse);
        beginCall(flow, method, uri, options, this.#defaults);
        const promise = flow.promise;
        promise.req = flow.firstReq;
        return promise;
    }

    /**
     * Reads a response payload into a Buffer, or parsed JSON when JSON parsing applies (README, "Reading").
     * Any readable stream works (a hapi request's raw body, a file, `toReadableStream()`); its
     * `headers`, when it has them, tell the content-type and content-encoding.
     */
    read<T = unknown>(res: ReadableSource, options?: ReadOptions | null): Promise<T> {
        return readPayload(res, readOptionsOver(this.#defaults, options)) as Promise<T>;
    }

    get<T = unknown>(uri: string | URL, options?: RequestAndReadOptions): Promise<ResponseWithPayload<T>> {
        return this.#send('GET', uri, options);
    }

    post<T = unknown>(uri: string | URL, options?: RequestAndReadOptions): Promise<ResponseWithPayload<T>> {
        return this.#send('POST', uri, options);
    }

    patch<T = unknown>(uri: string | URL, options?: RequestAndReadOptions): Promise<ResponseWithPayload<T>> {
        return this.#send('PATCH', uri, options);
    }

    put<T = unknown>(uri: string | URL, options?: RequestAndReadOptions): Promise<ResponseWithPayload<T>> {
        return this.#send('PUT', uri, options);
    }

    delete<T = unknown>(uri: string | URL, options?: RequestAndReadOptions): Promise<ResponseWithPayload<T>> {
        return this.#send('DELETE', uri, options);
    }

    /** A readable stream yielding `payload` (a Buffer, or a string in `encoding`). */
    toReadableStream(payload: Buffer | string, encoding?: BufferEncoding): Readable {
        return toReadableStream(payload, encoding);
    }

    /** The directives of a `cache-control` value, or null when it is malformed. */
    parseCacheControl(field: string): CacheControl | null {
        return parseCacheControl(field);
    }

    /**
     * Request, read, then throw for a 4xx/5xx status with the response in `data` (`ResponseErrorData`). An
     * error status wins over a body that `json` cannot parse (its raw Buffer is then `data.payload`),
     * and a failed read carries the response as `data.res`. The request's flow reads the response
     * itself (helper-finisher.ts, into helper-outcome.ts): one promise per call.
     */
    #send<T>(
        method: string,
        uri: string | URL,
        options: RequestAndReadOptions | undefined
    ): Promise<ResponseWithPayload<T>> {
        const flow = new RequestFlow(this, new HelperFinisher(this.#defaults, options));
        beginCall(flow, method, uri, options, this.#defaults);
        return flow.promise as unknown as Promise<ResponseWithPayload<T>>;
    }
}

/**
 * True for defaults that set nothing but an empty header set (those of `defaults({ events: true })`):
 * such a client keeps none, so its requests skip the merges a client with defaults pays for.
 */
function setsNothing(defaults: StoredDefaults): boolean {
    for (const key in defaults) {
        if (key !== 'headers') {
            return false;
        }
    }

    for (const _name in defaults.headers) {
        return false;
    }

    return true;
}
