/**
 * What an HTTP message's head says about its body: the client's decoding and progress and the
 * instrumentation's body sizes ask the same two questions and must get the same answers.
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
