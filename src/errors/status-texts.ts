import { STATUS_CODES } from 'node:http';

/**
 * The `error` text of each status, as the spec's table gives it. Where the spec's wording differs
 * from Node's own table (408 `Request Time-out`, 414 `Request-URI Too Large`, ...) the spec wins,
 * because clients of hapi-world services match on these exact strings.
 */
const specTexts: Record<number, string> = {
    408: 'Request Time-out',
    413: 'Request Entity Too Large',
    414: 'Request-URI Too Large',
    416: 'Requested Range Not Satisfiable',
    418: "I'm a Teapot",
    422: 'Unprocessable Entity',
    504: 'Gateway Time-out'
};

const texts = new Map<number, string>();
for (let code = 400; code <= 599; ++code) {
    const text = specTexts[code] ?? STATUS_CODES[code];
    if (text !== undefined) {
        texts.set(code, text);
    }
}

/** The `error` text of an HTTP error status, `Unknown` for a code without a registered reason. */
export function statusText(statusCode: number): string {
    return texts.get(statusCode) ?? 'Unknown';
}
