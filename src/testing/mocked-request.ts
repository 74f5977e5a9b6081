import type { Destination } from '../client/wire/destination.js';
import type { RequestHead } from './matching.js';
import type { MockedRequest } from './types.js';

/** The head of a request to `destination`, with the headers as sent. */
export function requestHead(method: string, destination: Destination, headers: Record<string, string>): RequestHead {
    const path = destination.path;
    const at = path.indexOf('?');
    return {
        method,
        origin: destination.origin,
        path,
        pathname: at === -1 ? path : path.slice(0, at),
        query: new URLSearchParams(at === -1 ? '' : path.slice(at + 1)),
        headers
    };
}

/** The request as a reply function and `MockNetwork.requests` see it. */
export function mockedRequest(
    method: string,
    destination: Destination,
    head: RequestHead,
    body: Buffer,
    http2: boolean
): MockedRequest {
    return {
        method,
        url: destination.href,
        origin: destination.origin,
        path: head.path,
        query: head.query,
        headers: head.headers,
        body,
        httpVersion: http2 ? '2.0' : '1.1',
        text: () => body.toString('utf8'),
        json: () => JSON.parse(body.toString('utf8'))
    };
}
