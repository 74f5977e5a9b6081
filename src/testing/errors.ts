import type { MockedRequest } from './types.js';

/**
 * The cause of the 500 a request fails with when no interceptor answers it (docs/testing.md,
 * "Unmatched requests"): `err.cause` of the client's error (and `err.data`). It names the request
 * and the closest interceptor, with what kept it from answering.
 */
export class MockNotMatchedError extends Error {
    readonly code = 'ERR_MOCK_NOT_MATCHED';

    constructor(
        /** The request as the mock received it. */
        readonly request: MockedRequest,
        /** The closest interceptor and why it did not answer; undefined when the mock has none. */
        readonly closest: string | undefined
    ) {
        super(
            `No mocked reply for ${describeRequest(request)}: ${
                closest === undefined ? 'the mock has no interceptor' : `the closest interceptor is ${closest}`
            }`
        );
        this.name = 'MockNotMatchedError';
    }
}

/** A request in words: `POST https://api.example.com/users (HTTP/2, 18-byte body)`. */
export function describeRequest(request: MockedRequest): string {
    const protocol = request.httpVersion === '2.0' ? 'HTTP/2' : 'HTTP/1.1';
    const body = request.body.length === 0 ? '' : `, ${request.body.length}-byte body`;
    return `${request.method} ${request.url} (${protocol}${body})`;
}
