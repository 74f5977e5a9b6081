import { MockNetwork } from './mock-network.js';
import { bodyBytes, type RecordedExchange, readRecording } from './recording.js';

/**
 * A MockNetwork that plays back a session a `Recorder` wrote (docs/testing.md, "Record and replay"):
 * each recorded exchange answers one request of the same method, URL (path and query alike) and,
 * when one was recorded, body — the same request recorded twice answers twice, in the file's order —
 * with the response as recorded (its body as it came: a compressed one still compressed, one cut
 * short cut again; dated now) or its fault. A request the file does not hold fails as any unmatched request
 * (naming the closest recorded one), and never goes to the network; `assertNoPending()` names the
 * recorded exchanges that were not replayed.
 */
export function replayFrom(path: string): MockNetwork {
    const mock = new MockNetwork();
    for (const exchange of readRecording(path)) {
        replay(mock, exchange);
    }

    return mock;
}

function replay(mock: MockNetwork, exchange: RecordedExchange): void {
    const url = new URL(exchange.request.url);
    const interceptor = mock.intercept({
        origin: url.origin,
        method: exchange.request.method,
        // With its `?` (an empty query when it had none): the path and the query alike (matching.ts).
        path: `${url.pathname}?${url.search.slice(1)}`,
        body: exchange.request.body ?? bodyBytes(exchange.request)
    });
    const response = exchange.response;
    if (response === undefined) {
        interceptor.fault(exchange.fault as NonNullable<RecordedExchange['fault']>, exchange.faultDetails);
        return;
    }

    const received = bodyBytes(response) ?? Buffer.alloc(0);
    if (response.cut) {
        // The body as its head framed it, cut where the recording stopped.
        const declared = Number(response.headers['content-length']);
        const length = Number.isInteger(declared) && declared > received.length ? declared : received.length + 1;
        const framed = Buffer.concat([received, Buffer.alloc(length - received.length)]);
        interceptor.reply(response.status, framed, replayedHeaders(response.headers)).cutAfter(received.length);
        return;
    }

    interceptor.reply(response.status, received.length === 0 ? undefined : received, replayedHeaders(response.headers));
}

/** A replayed response happens now: its recorded `date` gives way to the mock's (the cache reads its age from it). */
function replayedHeaders(headers: Record<string, string | string[]>): Record<string, string | string[]> {
    const { date: _recorded, ...rest } = headers;
    return rest;
}
