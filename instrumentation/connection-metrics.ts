import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type Attributes, type Histogram, type Meter, ValueType } from '@opentelemetry/api';
import { type RequestUri, type Timings, timingsNow, timingsToMonotonic } from '../src/client/index.js';
import { net } from '../src/common/node-modules.js';
import { serverAddress, serverPort } from './attributes.js';
import { causeOf, failureErrorType } from './error-type.js';
import { DURATION_BUCKETS } from './providers.js';
import {
    ATTR_DNS_QUESTION_NAME,
    ATTR_ERROR_TYPE,
    ATTR_NETWORK_PEER_ADDRESS,
    ATTR_NETWORK_PROTOCOL_VERSION,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    ATTR_URL_SCHEME,
    ERROR_TYPE_VALUE_OTHER,
    METRIC_DNS_LOOKUP_DURATION,
    METRIC_HTTP_CLIENT_CONNECTION_DURATION
} from './semconv.js';
import { protocolVersionOf } from './transport-attributes.js';

/** What one hop tells about its connection and its name lookup, from the `response` event. */
export interface ConnectionFacts {
    readonly uri: RequestUri;
    readonly req: ClientRequest | undefined;
    readonly res: IncomingMessage | undefined;
    readonly timings: Timings;
    readonly err: Error | undefined;
}

/**
 * With `optionalMetrics`, the conventions' connection and DNS histograms (README "Metrics"), both in
 * seconds: `http.client.connection.duration`, how long each connection a hop opened stayed
 * established (recorded when it closes, as .NET, which defined the metric, records it), and
 * `dns.lookup.duration`, each lookup a hop did, failed ones with their `error.type`.
 */
export class ConnectionMetrics {
    private readonly connectionDuration: Histogram;
    private readonly lookupDuration: Histogram;

    constructor(meter: Meter) {
        this.connectionDuration = meter.createHistogram(METRIC_HTTP_CLIENT_CONNECTION_DURATION, {
            description: 'The duration of the successfully established outbound HTTP connections.',
            unit: 's',
            valueType: ValueType.DOUBLE,
            advice: { explicitBucketBoundaries: [...DURATION_BUCKETS, 30, 60, 120, 300] }
        });
        this.lookupDuration = meter.createHistogram(METRIC_DNS_LOOKUP_DURATION, {
            description: 'Measures the time taken to perform a DNS lookup.',
            unit: 's',
            valueType: ValueType.DOUBLE,
            advice: { explicitBucketBoundaries: DURATION_BUCKETS }
        });
    }

    /** Records the lookup of a hop, and follows the connection it opened until that closes. */
    recordHop(facts: ConnectionFacts): void {
        const { timings } = facts;
        if (timings.phases.dns !== undefined || failedInLookup(facts)) {
            this.recordLookup(facts);
        }

        // Established: connected, and for https through the TLS handshake too.
        if (timings.connect !== undefined && (facts.uri.protocol !== 'https:' || timings.secureConnect !== undefined)) {
            this.followConnection(facts, timings.connect);
        }
    }

    private recordLookup({ uri, req, timings, err }: ConnectionFacts): void {
        const attributes: Attributes = {};
        // The name the socket was opened to: that of a proxy for a request sent through one.
        attributes[ATTR_DNS_QUESTION_NAME] = req?.host ?? serverAddress(uri);
        let duration = timings.phases.dns;
        if (duration === undefined) {
            duration = (timings.error ?? timings.abort ?? timingsNow()) - timings.socket!;
            attributes[ATTR_ERROR_TYPE] = failureErrorType(err!, undefined) ?? ERROR_TYPE_VALUE_OTHER;
        }

        this.lookupDuration.record(duration / 1000, attributes);
    }

    private followConnection({ uri, req, res }: ConnectionFacts, connectedAt: number): void {
        const socket: Socket | null | undefined = res?.socket ?? req?.socket;
        if (socket === null || socket === undefined) {
            return;
        }

        const attributes: Attributes = {};
        attributes[ATTR_SERVER_ADDRESS] = serverAddress(uri);
        attributes[ATTR_SERVER_PORT] = serverPort(uri);
        attributes[ATTR_URL_SCHEME] = uri.protocol.slice(0, -1);
        if (res !== undefined) {
            attributes[ATTR_NETWORK_PROTOCOL_VERSION] = protocolVersionOf(res.httpVersion);
        }

        if (socket.remoteAddress !== undefined) {
            attributes[ATTR_NETWORK_PEER_ADDRESS] = socket.remoteAddress;
        }

        // On the monotonic clock: a kept-alive connection may live for hours, over which the epoch
        // clock's anchor follows the wall clock's steps and slewing.
        const since = timingsToMonotonic(connectedAt);
        const record = () => this.connectionDuration.record((performance.now() - since) / 1000, attributes);
        if (socket.closed) {
            record();
        } else {
            socket.once('close', record);
        }
    }
}

/**
 * True when the hop failed in a lookup of its own that failed: its new connection (not a pooled one,
 * nor one to an address or a socket path) had not resolved its host name nor connected, and its error
 * is a lookup's (`lookupFailure`). The timings alone cannot tell a lookup under way from a connection
 * made elsewhere (a custom agent's socket, connected or connecting to an address of its choosing): a
 * reset or a refusal there is no failed lookup. Nor is the caller's abort, or the request `timeout`:
 * the lookup did not fail, the caller stopped waiting (docs/observability.md, "Metrics").
 */
function failedInLookup({ req, timings, err }: ConnectionFacts): boolean {
    if (
        err === undefined ||
        req === undefined ||
        timings.socket === undefined ||
        timings.lookup !== undefined ||
        timings.connect !== undefined ||
        timings.abort !== undefined ||
        req.reusedSocket ||
        !lookupFailure(err)
    ) {
        return false;
    }

    const { host, socketPath } = req as ClientRequest & { socketPath?: string };
    return socketPath === undefined && net.isIP(host.replace(/^\[|\]$/g, '')) === 0;
}

// The codes only a resolver gives: getaddrinfo's (`ENOTFOUND`, and `EAI_*` for the rest) and those of
// node:dns's resolver, which a `lookup` function built on it passes on. Left out are the ones a
// connection gives too (`ECONNREFUSED`, `EOF`, `ENOMEM`...): they do not say a lookup failed.
const lookupCodes: ReadonlySet<string> = new Set([
    'ENOTFOUND',
    'ENODATA',
    'EFORMERR',
    'ESERVFAIL',
    'ENOTIMP',
    'EREFUSED',
    'EBADQUERY',
    'EBADNAME',
    'EBADFAMILY',
    'EBADRESP',
    'ETIMEOUT',
    'ENONAME',
    'EBADHINTS'
]);

/**
 * An error that says a lookup failed: a resolver's code, an error of node:dns (its `syscall`,
 * `getaddrinfo` or a `query…`), or the `timeouts.lookup` bound (a 504 whose phase is `lookup`).
 */
function lookupFailure(err: Error): boolean {
    const cause = causeOf(err) as (Error & { code?: unknown; syscall?: unknown; phase?: unknown }) | undefined;
    if (cause === undefined) {
        return false;
    }

    const { code, syscall } = cause;
    if (code === 'ETIMEDOUT') {
        return cause.phase === 'lookup';
    }

    return (
        (typeof code === 'string' && (lookupCodes.has(code) || code.startsWith('EAI_'))) ||
        (typeof syscall === 'string' && (syscall === 'getaddrinfo' || syscall.startsWith('query')))
    );
}
