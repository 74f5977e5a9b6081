/*
 * The names of the OpenTelemetry semantic conventions the instrumentation uses, spelled here rather
 * than imported: `@opentelemetry/semantic-conventions` is 9.6 MiB installed, and its `incubating`
 * entry (where the body sizes, active requests and open connections still are) is one the
 * OpenTelemetry project asks libraries not to import, as it changes between minor releases.
 * test/instrumentation/semconv.test.ts holds every name to the package's own spelling.
 */

export { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '../src/errors/span-attributes.js';

// Stable.
export const ATTR_CLIENT_ADDRESS = 'client.address';
export const ATTR_HTTP_REQUEST_METHOD = 'http.request.method';
export const ATTR_HTTP_REQUEST_METHOD_ORIGINAL = 'http.request.method_original';
export const ATTR_HTTP_REQUEST_RESEND_COUNT = 'http.request.resend_count';
export const ATTR_HTTP_ROUTE = 'http.route';
export const ATTR_NETWORK_PEER_ADDRESS = 'network.peer.address';
export const ATTR_NETWORK_PEER_PORT = 'network.peer.port';
export const ATTR_NETWORK_PROTOCOL_VERSION = 'network.protocol.version';
export const ATTR_SERVER_ADDRESS = 'server.address';
export const ATTR_SERVER_PORT = 'server.port';
export const ATTR_URL_FULL = 'url.full';
export const ATTR_URL_PATH = 'url.path';
export const ATTR_URL_QUERY = 'url.query';
export const ATTR_URL_SCHEME = 'url.scheme';
export const ATTR_USER_AGENT_ORIGINAL = 'user_agent.original';
export const ERROR_TYPE_VALUE_OTHER = '_OTHER';
export const HTTP_REQUEST_METHOD_VALUE_CONNECT = 'CONNECT';
export const HTTP_REQUEST_METHOD_VALUE_DELETE = 'DELETE';
export const HTTP_REQUEST_METHOD_VALUE_GET = 'GET';
export const HTTP_REQUEST_METHOD_VALUE_HEAD = 'HEAD';
export const HTTP_REQUEST_METHOD_VALUE_OPTIONS = 'OPTIONS';
export const HTTP_REQUEST_METHOD_VALUE_OTHER = '_OTHER';
export const HTTP_REQUEST_METHOD_VALUE_PATCH = 'PATCH';
export const HTTP_REQUEST_METHOD_VALUE_POST = 'POST';
export const HTTP_REQUEST_METHOD_VALUE_PUT = 'PUT';
export const HTTP_REQUEST_METHOD_VALUE_TRACE = 'TRACE';
export const METRIC_HTTP_CLIENT_REQUEST_DURATION = 'http.client.request.duration';
export const METRIC_HTTP_SERVER_REQUEST_DURATION = 'http.server.request.duration';

/** `http.request.header.<key>`: `key` is the lowercase header name. */
export const ATTR_HTTP_REQUEST_HEADER = (key: string): string => `http.request.header.${key}`;
/** `http.response.header.<key>`: `key` is the lowercase header name. */
export const ATTR_HTTP_RESPONSE_HEADER = (key: string): string => `http.response.header.${key}`;

// The exception events (in development: `incubating`) and their attributes (stable), spelled where the
// static plugin reads them too.
export {
    ATTR_EXCEPTION_MESSAGE,
    ATTR_EXCEPTION_STACKTRACE,
    ATTR_EXCEPTION_TYPE,
    EVENT_HTTP_CLIENT_REQUEST_EXCEPTION,
    EVENT_HTTP_SERVER_REQUEST_EXCEPTION
} from '../src/common/exception-record.js';

// Still in development (`incubating`): recorded as the conventions spell them today.
export const ATTR_HTTP_REQUEST_BODY_SIZE = 'http.request.body.size';
export const ATTR_HTTP_RESPONSE_BODY_SIZE = 'http.response.body.size';
export const ATTR_HTTP_CONNECTION_STATE = 'http.connection.state';
export const HTTP_CONNECTION_STATE_VALUE_ACTIVE = 'active';
export const METRIC_HTTP_CLIENT_CONNECTION_DURATION = 'http.client.connection.duration';
export const METRIC_DNS_LOOKUP_DURATION = 'dns.lookup.duration';
export const ATTR_DNS_QUESTION_NAME = 'dns.question.name';
export const HTTP_CONNECTION_STATE_VALUE_IDLE = 'idle';
export const METRIC_HTTP_CLIENT_ACTIVE_REQUESTS = 'http.client.active_requests';
export const METRIC_HTTP_CLIENT_OPEN_CONNECTIONS = 'http.client.open_connections';
export const METRIC_HTTP_CLIENT_REQUEST_BODY_SIZE = 'http.client.request.body.size';
export const METRIC_HTTP_CLIENT_RESPONSE_BODY_SIZE = 'http.client.response.body.size';
export const METRIC_HTTP_SERVER_ACTIVE_REQUESTS = 'http.server.active_requests';
export const METRIC_HTTP_SERVER_REQUEST_BODY_SIZE = 'http.server.request.body.size';
export const METRIC_HTTP_SERVER_RESPONSE_BODY_SIZE = 'http.server.response.body.size';
