/**
 * What an HTTP message's head says about its body: the client's decoding and progress and the
 * instrumentation's body sizes ask the same questions and must get the same answers.
 */

/** The `content-length` of a message as a byte count, when it declares one valid value. */
export function declaredLength(value: unknown): number | undefined {
    if (value === undefined || value === null || Array.isArray(value)) {
        return undefined;
    }

    const length = Number(value);
    return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/**
 * A response that has no body by definition (RFC 9110, 6.4.1): to a HEAD, or a 1xx, 204 or 304,
 * whatever its `content-length` or `content-encoding` say. Node reads no body for them either.
 */
export function responseHasNoBody(method: string | undefined, statusCode: number | undefined): boolean {
    return (
        method === 'HEAD' ||
        (typeof statusCode === 'number' && (statusCode < 200 || statusCode === 204 || statusCode === 304))
    );
}

// The method of the request a response answers, kept on the response by whatever made it without a
// Node `req` to ask: an HTTP/2 stream's response (wire/http2/response.ts) and the cache's answers.
const requestMethodKey = Symbol('tracewire.requestMethod');

interface AnsweringMessage {
    [requestMethodKey]?: string;
    req?: { method?: string | undefined } | undefined;
}

/** Notes on `res` that it answers a request of `method`: for a response made with no `req` (HTTP/2's, the cache's). */
export function noteRequestMethod(res: object, method: string): void {
    (res as AnsweringMessage)[requestMethodKey] = method;
}

/**
 * The method of the request `res` answers, whichever transport carried it: as noted by the response's
 * maker, else as its Node `req` says (an HTTP/1.1 response); undefined for a stream that is no response.
 */
export function requestMethodOf(res: object): string | undefined {
    const message = res as AnsweringMessage;
    return message[requestMethodKey] ?? message.req?.method;
}
