/**
 * `tracewire/testing` (docs/testing.md): mock origins a client uses instead of the network, for
 * HTTP/1.1 and HTTP/2 alike, with faults; and record and replay of real exchanges. Loaded only by a
 * process that imports it.
 */
export { MockNotMatchedError } from './errors.js';
export type { MockInterceptor, MockScope } from './interceptor.js';
export { MockNetwork } from './mock-network.js';
export { MockOrigin, type RouteOptions } from './origin.js';
export { Recorder, type RecorderOptions } from './recorder.js';
export type { RecordedExchange } from './recording.js';
export { replayFrom } from './replay.js';
export type {
    InterceptOptions,
    MockBody,
    MockDelays,
    MockedRequest,
    MockFault,
    MockFaultDetails,
    MockOriginSettings,
    MockReplyFunction,
    MockResponse,
    TextMatcher,
    TlsFailureCode
} from './types.js';
