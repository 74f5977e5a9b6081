import type { ClientRequest, IncomingMessage } from 'node:http';
import {
    type Attributes,
    type Context,
    type Link,
    type Span,
    SpanKind,
    type SpanOptions,
    SpanStatusCode,
    type Tracer
} from '@opentelemetry/api';
import type { EffectiveOptions, RequestUri, ResendReason, ResponseDetails } from '../src/client/index.js';
import {
    ATTR_URL_TEMPLATE,
    addHeaderAttributes,
    type CapturedHeaders,
    normalizeMethod,
    redactedUrl,
    serverAddress,
    serverPort
} from './attributes.js';
import type { BodyCount } from './body-size.js';
import { addCacheOutcome } from './cache-outcome.js';
import { causeOf, failureErrorType, statusErrorType } from './error-type.js';
import type { HopEvents } from './log-events.js';
import type { Measured } from './measured.js';
import {
    ATTR_ERROR_TYPE,
    ATTR_HTTP_REQUEST_METHOD,
    ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
    ATTR_HTTP_REQUEST_RESEND_COUNT,
    ATTR_HTTP_RESPONSE_STATUS_CODE,
    ATTR_NETWORK_PROTOCOL_VERSION,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    ATTR_URL_FULL,
    ERROR_TYPE_VALUE_OTHER
} from './semconv.js';
import { ATTR_TIMEOUT_PHASE, timeoutPhaseOf } from './span-phases.js';
import {
    ATTR_RESENT,
    addResendReason,
    isUnprocessedResend,
    protocolVersionOf,
    recordSessionEnd
} from './transport-attributes.js';

/** What the instrumentation keeps of one hop, from its `preRequest` to the end of its response. */
export interface HopRecord<Owner = unknown> extends Measured {
    /** Whether the span records (it was sampled): a span that does not gets no attribute, only the duration point does. */
    readonly recording: boolean;
    /** The caller's AbortSignal: a response cut because it fired is not an error. */
    readonly signal: AbortSignal | undefined;
    /** Whether the body sizes are wanted (a recording span or the optional metrics). */
    readonly countsBodies: boolean;
    /** The hop's options, read again once its request exists (a later `preRequest` listener may change them). */
    readonly options: EffectiveOptions;
    requestBody: BodyCount | undefined;
    responseBody: BodyCount | undefined;
    details: ResponseDetails | undefined;
    /** The handlers that opened the hop (client-handlers.ts): only they end it. */
    readonly owner: Owner;
}

/** How a hop ended, as its span and duration point tell it. */
export interface HopEnd {
    /** The failure, or the error that cut the response body short. */
    readonly err: Error | undefined;
    readonly res: IncomingMessage | undefined;
    /** The response closed before its body was received, with no error to say why. */
    readonly interrupted: boolean;
    /** For a failed hop the client sent again at once, why (`uri.resent`). */
    readonly resent?: ResendReason | undefined;
}

/**
 * Opens the CLIENT span of a hop with the attributes the request gives (README "Spans and
 * attributes"), and the attributes of its duration point so far.
 */
export function openHopSpan(
    tracer: Tracer,
    uri: RequestUri,
    options: EffectiveOptions,
    parent: Context,
    links: Link[] | undefined
): { span: Span; metricAttributes: Attributes } {
    const method = normalizeMethod(uri.method ?? 'GET');
    const address = serverAddress(uri);
    const port = serverPort(uri);
    const route = typeof options.route === 'string' && options.route !== '' ? options.route : undefined;
    // Built by assignment, not as literals with computed keys: V8 then keeps the objects in a
    // fast shape, which the SDK iterates and hashes (for the histogram) markedly faster.
    const metricAttributes: Attributes = {};
    metricAttributes[ATTR_HTTP_REQUEST_METHOD] = method.value;
    metricAttributes[ATTR_SERVER_ADDRESS] = address;
    metricAttributes[ATTR_SERVER_PORT] = port;
    const attributes: Attributes = {};
    attributes[ATTR_HTTP_REQUEST_METHOD] = method.value;
    attributes[ATTR_SERVER_ADDRESS] = address;
    attributes[ATTR_SERVER_PORT] = port;
    attributes[ATTR_URL_FULL] = redactedUrl(uri);
    if (method.original !== undefined) {
        attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = method.original;
    }

    if (route !== undefined) {
        attributes[ATTR_URL_TEMPLATE] = route;
        metricAttributes[ATTR_URL_TEMPLATE] = route;
    }

    // Retries, redirects and stale-connection re-sends are all re-sends, counted together as the semantic conventions define it.
    const resendCount = uri.redirectCount + uri.retryCount + uri.staleResends;
    if (resendCount > 0) {
        attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] = resendCount;
    }

    addResendReason(attributes, uri.resendReason);
    const name = route === undefined ? method.spanName : `${method.spanName} ${route}`;
    const spanOptions: SpanOptions = { kind: SpanKind.CLIENT, attributes };
    if (links !== undefined) {
        spanOptions.links = links;
    }

    const span = tracer.startSpan(name, spanOptions, parent);
    return { span, metricAttributes };
}

/** The headers actually sent, from the ClientRequest, which includes those the client computed. */
export function recordRequestHeaders(span: Span, captured: CapturedHeaders, req: ClientRequest): void {
    const attributes: Attributes = {};
    addHeaderAttributes(attributes, captured, (name) => req.getHeader(name));
    span.setAttributes(attributes);
}

/** The attributes a response gives, on the duration point and, when it records, on the span. */
export function recordResponse(hop: HopRecord, res: IncomingMessage, captured: CapturedHeaders): void {
    const { span, metricAttributes, recording } = hop;
    const statusCode = res.statusCode as number;
    // A hop the cache answered sent no request (`details.req` undefined): nothing went over the
    // network, so no protocol spoke; `tracewire.cache` says how it was answered.
    const version = hop.details?.req === undefined ? undefined : protocolVersionOf(res.httpVersion);
    metricAttributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = statusCode;
    if (version !== undefined) {
        metricAttributes[ATTR_NETWORK_PROTOCOL_VERSION] = version;
    }

    addCacheOutcome(recording ? span : undefined, metricAttributes, res);
    if (!recording) {
        return;
    }

    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
    if (version !== undefined) {
        span.setAttribute(ATTR_NETWORK_PROTOCOL_VERSION, version);
    }

    // No network.peer.*: reading a socket's peer is a system call per connection, too dear here.
    if (captured.names.length > 0) {
        const headers: Attributes = {};
        addHeaderAttributes(headers, captured, (name) => res.headers[name]);
        span.setAttributes(headers);
    }
}

/**
 * How a response that ended (`end`) or closed (`close`) ended: a body cut short is an error unless
 * nothing was lost or the caller asked for it.
 */
export function responseEnd(hop: HopRecord, res: IncomingMessage): HopEnd {
    const errored = res.errored;
    if (errored !== null && errored !== undefined) {
        return { err: errored, res, interrupted: false };
    }

    // A cancellation the caller asked for, a body received whole but left unread, or a 3xx the
    // client discards to follow the redirect: nothing failed.
    const interrupted = !(hop.signal?.aborted === true || res.complete || isRedirect(res.statusCode));
    return { err: undefined, res, interrupted };
}

/**
 * `error.type` of a hop (README "Spans and attributes"). A response discarded before its end keeps
 * its 4xx/5xx status (the retry policy drops the body of a retried 503 sent chunked or over 64 KiB);
 * only one without such a status is `_OTHER`.
 */
function hopErrorType({ err, res, interrupted }: HopEnd): string | undefined {
    const statusCode = res?.statusCode;
    if (err !== undefined) {
        return failureErrorType(err, statusCode);
    }

    const statusType = statusErrorType(statusCode);
    return interrupted ? (statusType ?? ERROR_TYPE_VALUE_OTHER) : statusType;
}

/**
 * Marks the span and the duration point of a hop that did not succeed, and tells its exception
 * (log-events.ts); no-op for one that did.
 */
export function recordOutcome(hop: HopRecord, end: HopEnd, events: HopEvents): void {
    const { span, metricAttributes } = hop;
    const { err, interrupted, resent } = end;
    if (resent !== undefined) {
        metricAttributes[ATTR_RESENT] = resent;
        if (hop.recording) {
            span.setAttribute(ATTR_RESENT, resent);
        }

        // The server said it never processed the request, and the client sent it again: no error
        // anyone saw (docs/observability.md, "Re-sent hops"). What ended the session is still told.
        if (isUnprocessedResend(resent)) {
            if (hop.recording && err !== undefined) {
                recordSessionEnd(span, err);
            }

            return;
        }
    }

    const errorType = hopErrorType(end);
    if (errorType === undefined) {
        return;
    }

    metricAttributes[ATTR_ERROR_TYPE] = errorType;
    if (err !== undefined) {
        // Told whether the span records or not: an exception the caller saw is not sampled, as a metric is not.
        events.exception(span, hop.recording, causeOf(err) ?? err, errorType, metricAttributes);
    }

    if (!hop.recording) {
        return;
    }

    span.setAttribute(ATTR_ERROR_TYPE, errorType);
    if (err !== undefined) {
        // Which bound ran out, on the span of the hop that hit it (README "Phases on client spans").
        const timeoutPhase = timeoutPhaseOf(err);
        if (timeoutPhase !== undefined) {
            span.setAttribute(ATTR_TIMEOUT_PHASE, timeoutPhase);
        }

        recordSessionEnd(span, err);
        span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    } else if (interrupted) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'The response closed before its body was received' });
    } else {
        span.setStatus({ code: SpanStatusCode.ERROR });
    }
}

function isRedirect(statusCode: number | undefined): boolean {
    return statusCode !== undefined && statusCode >= 300 && statusCode < 400;
}
