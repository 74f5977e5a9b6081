/*
 * A strict reader of multipart/byteranges bodies (RFC 9110 14.6, RFC 2046 5.1.1) for the tests:
 * every byte of the body is accounted for, or it throws saying which one is not. Each part is its
 * delimiter (CRLF, `--`, the boundary, CRLF), header lines ending in CRLF, an empty line, then
 * exactly the bytes its `Content-Range` announces; the body ends with the closing delimiter and a
 * CRLF and nothing after it. No preamble or epilogue text, no transport padding, no other header
 * than `Content-Type` and `Content-Range` (each once at most, `Content-Range` required).
 */

export interface ParsedPart {
    /** The part's `Content-Type`, null when it has none. */
    type: string | null;
    from: number;
    to: number;
    /** The representation's size, from `Content-Range`. */
    size: number;
    bytes: Buffer;
}

const boundaryOfType = /^multipart\/byteranges; boundary=([0-9A-Za-z'()+_,./:=?-]{1,70})$/;
const contentRangeValue = /^bytes (\d+)-(\d+)\/(\d+)$/;

/** The boundary of a `multipart/byteranges` content type; throws for any other type. */
export function boundaryOf(contentType: string | undefined): string {
    const match = boundaryOfType.exec(contentType ?? '');
    if (match === null) {
        throw new Error(`not a multipart/byteranges content type: ${contentType}`);
    }

    return match[1]!;
}

/** Every part of `body`, checking each byte of it against the grammar above. */
export function parseMultipart(body: Buffer, contentType: string | undefined): ParsedPart[] {
    const boundary = boundaryOf(contentType);
    const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    const parts: ParsedPart[] = [];
    let at = 0;
    const expect = (bytes: Buffer | string, what: string): void => {
        const wanted = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
        if (!body.subarray(at, at + wanted.length).equals(wanted)) {
            throw new Error(
                `expected ${what} at byte ${at}, found ${JSON.stringify(body.toString('latin1', at, at + 40))}`
            );
        }

        at += wanted.length;
    };

    expect(delimiter, 'the first delimiter');
    for (;;) {
        if (body.subarray(at, at + 2).toString('latin1') === '--') {
            expect('--\r\n', 'the end of the closing delimiter');
            if (at !== body.length) {
                throw new Error(`${body.length - at} bytes after the closing delimiter`);
            }

            if (parts.length === 0) {
                throw new Error('a multipart body without parts');
            }

            return parts;
        }

        expect('\r\n', 'the CRLF after a delimiter');
        const headers = new Map<string, string>();
        for (;;) {
            const end = body.indexOf('\r\n', at, 'latin1');
            if (end === -1) {
                throw new Error(`a part header without its CRLF at byte ${at}`);
            }

            const line = body.toString('latin1', at, end);
            at = end + 2;
            if (line === '') {
                break;
            }

            const colon = line.indexOf(':');
            const name = line.slice(0, colon).toLowerCase();
            if (colon <= 0 || !['content-type', 'content-range'].includes(name) || headers.has(name)) {
                throw new Error(`unexpected part header line: ${JSON.stringify(line)}`);
            }

            headers.set(name, line.slice(colon + 1).trim());
        }

        const range = contentRangeValue.exec(headers.get('content-range') ?? '');
        if (range === null) {
            throw new Error(`a part without a valid content-range: ${headers.get('content-range')}`);
        }

        const [from, to, size] = [Number(range[1]), Number(range[2]), Number(range[3])];
        if (from > to || to >= size) {
            throw new Error(`an impossible content-range: ${range[0]}`);
        }

        const bytes = body.subarray(at, at + to - from + 1);
        if (bytes.length !== to - from + 1) {
            throw new Error(`part ${range[0]} ends after ${bytes.length} bytes`);
        }

        at += bytes.length;
        parts.push({ type: headers.get('content-type') ?? null, from, to, size, bytes });
        expect(delimiter, 'the delimiter after a part');
    }
}
