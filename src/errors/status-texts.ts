import { http } from '../common/node-modules.js';

/**
 * The `error` text of every 4xx and 5xx status the factories make, spelled out rather than taken from
 * Node: Node's wording differs (408 `Request Timeout`, 414 `URI Too Long`, ...) and changes between
 * releases, while clients of hapi-world services match on these exact strings.
 */
const errorTexts: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    402: 'Payment Required',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
    406: 'Not Acceptable',
    407: 'Proxy Authentication Required',
    408: 'Request Time-out',
    409: 'Conflict',
    410: 'Gone',
    411: 'Length Required',
    412: 'Precondition Failed',
    413: 'Request Entity Too Large',
    414: 'Request-URI Too Large',
    415: 'Unsupported Media Type',
    416: 'Requested Range Not Satisfiable',
    417: 'Expectation Failed',
    418: "I'm a Teapot",
    422: 'Unprocessable Entity',
    423: 'Locked',
    424: 'Failed Dependency',
    425: 'Too Early',
    428: 'Precondition Required',
    429: 'Too Many Requests',
    451: 'Unavailable For Legal Reasons',
    500: 'Internal Server Error',
    501: 'Not Implemented',
    502: 'Bad Gateway',
    503: 'Service Unavailable',
    504: 'Gateway Time-out'
};

/** The `error` text of an HTTP error status: ours above, else Node's, else `Unknown`. */
export function statusText(statusCode: number): string {
    return errorTexts[statusCode] ?? http.STATUS_CODES[statusCode] ?? 'Unknown';
}

/**
 * The reason phrases of the IANA HTTP status code registry (RFC 9110 and the RFCs that added codes)
 * that are not the `error` text above, for the `title` of a problem document of type `about:blank`,
 * which RFC 9457 (section 4.2.1) wants to be that phrase: the statuses where hapi-world clients keep
 * older wording (408, 413, 414, 416, 422, 504), and the registered ones no factory makes. Every
 * other registered phrase is its `error` text.
 */
const registeredPhrases: Record<number, string> = {
    408: 'Request Timeout',
    413: 'Content Too Large',
    414: 'URI Too Long',
    416: 'Range Not Satisfiable',
    421: 'Misdirected Request',
    422: 'Unprocessable Content',
    426: 'Upgrade Required',
    431: 'Request Header Fields Too Large',
    504: 'Gateway Timeout',
    505: 'HTTP Version Not Supported',
    506: 'Variant Also Negotiates',
    507: 'Insufficient Storage',
    508: 'Loop Detected',
    510: 'Not Extended',
    511: 'Network Authentication Required'
};

/** The registered reason phrase of a status; a status the registry leaves without one (418) gets its `error` text. */
export function reasonPhrase(statusCode: number): string {
    return registeredPhrases[statusCode] ?? statusText(statusCode);
}
