import { readFileSync } from 'node:fs';
import type { MockFault, MockFaultDetails } from './types.js';

/**
 * The file of a recorded session (docs/testing.md, "Record and replay"): JSON lines, one exchange a
 * line, its keys in a fixed order, so that a session recorded again diffs line by line. A body is
 * text when it is UTF-8 and not content-encoded, else base64; the headers named for redaction keep
 * their name and lose their value.
 */

/** One exchange of a recorded session. */
export interface RecordedExchange {
    readonly request: {
        readonly method: string;
        readonly url: string;
        readonly headers: Record<string, string | string[]>;
        /** The body as text, or as base64 (`bodyBase64`); neither when there was none or it was a stream (`streamed`). */
        readonly body?: string;
        readonly bodyBase64?: string;
        readonly streamed?: true;
    };
    /** What came back, or the fault (`fault`) that came instead. */
    readonly response?: {
        readonly status: number;
        readonly httpVersion: string;
        readonly headers: Record<string, string | string[]>;
        readonly body?: string;
        readonly bodyBase64?: string;
        /** The body stopped short after the bytes recorded: the connection dropped. */
        readonly cut?: true;
    };
    readonly fault?: MockFault;
    readonly faultDetails?: MockFaultDetails;
}

/** What a redacted header's value is replaced with. */
export const redactedValue = '[REDACTED]';

/** The headers recorded by default without their values. */
export const defaultRedactions = ['authorization', 'cookie', 'set-cookie'] as const;

/** `headers` with lower-case names, the values of those in `redact` replaced. */
export function recordedHeaders(
    headers: Readonly<Record<string, string | number | readonly string[] | undefined>>,
    redact: ReadonlySet<string>
): Record<string, string | string[]> {
    const recorded: Record<string, string | string[]> = {};
    for (const name in headers) {
        const value = headers[name];
        if (value === undefined) {
            continue;
        }

        const lower = name.toLowerCase();
        recorded[lower] = redact.has(lower) ? redactedValue : Array.isArray(value) ? value.map(String) : String(value);
    }

    return recorded;
}

/** The fields a body is recorded in: `body` for UTF-8 text that is not content-encoded, else `bodyBase64`. */
export function bodyFields(body: Buffer, contentEncoding: unknown): { body?: string; bodyBase64?: string } {
    if (body.length === 0) {
        return {};
    }

    const text = body.toString('utf8');
    if ((contentEncoding === undefined || contentEncoding === 'identity') && Buffer.from(text).equals(body)) {
        return { body: text };
    }

    return { bodyBase64: body.toString('base64') };
}

/** The bytes of a recorded body. */
export function bodyBytes(fields: { body?: string; bodyBase64?: string }): Buffer | undefined {
    if (fields.body !== undefined) {
        return Buffer.from(fields.body);
    }

    return fields.bodyBase64 === undefined ? undefined : Buffer.from(fields.bodyBase64, 'base64');
}

/** The line of one exchange. */
export function lineOf(exchange: RecordedExchange): string {
    return `${JSON.stringify(exchange)}\n`;
}

/** The exchanges of a recording file; an Error naming the file and line of one that is not an exchange. */
export function readRecording(path: string): RecordedExchange[] {
    const exchanges: RecordedExchange[] = [];
    const lines = readFileSync(path, 'utf8').split('\n');
    for (const [index, line] of lines.entries()) {
        if (line.trim() === '') {
            continue;
        }

        let parsed: unknown;
        try {
            parsed = JSON.parse(line);
        } catch (err) {
            throw new Error(`${path}:${index + 1} is not JSON: ${(err as Error).message}`);
        }

        const exchange = parsed as RecordedExchange;
        if (
            typeof exchange?.request?.method !== 'string' ||
            typeof exchange.request.url !== 'string' ||
            (exchange.response === undefined) === (exchange.fault === undefined)
        ) {
            throw new Error(`${path}:${index + 1} is not a recorded exchange (a request, and a response or a fault)`);
        }

        exchanges.push(exchange);
    }

    return exchanges;
}
