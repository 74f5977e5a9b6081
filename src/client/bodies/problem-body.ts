import type { ProblemDetails } from '../../errors/index.js';
import { isProblemJson, problemReadLimits, readProblem } from '../../errors/read-problem.js';

/**
 * The problem document (RFC 9457) of an error response the helpers reject, or undefined
 * (docs/problem-details.md, "The client: `data.problem`"): only for an `application/problem+json`
 * body of at most `problemReadLimits.bodyBytes` (decoded), read by `readProblem()`. `payload` is
 * what the reader gave: the value `json` parsed, which is reused, or the raw Buffer, of which a
 * string copy is parsed here, so `data.payload` stays what it was. Never throws: a document that
 * is not JSON, too large or hostile gives undefined and leaves the rejection as it was.
 */
export function problemOfBody(contentType: unknown, payload: unknown, bodyBytes: number): ProblemDetails | undefined {
    if (bodyBytes > problemReadLimits.bodyBytes || !isProblemJson(contentType)) {
        return undefined;
    }

    if (!Buffer.isBuffer(payload)) {
        return readProblem(payload);
    }

    let parsed: unknown;
    try {
        parsed = JSON.parse(payload.toString('utf8'));
    } catch {
        // Not JSON (a proxy's HTML page, a truncated body): not a document, and not an error of its own.
        return undefined;
    }

    return readProblem(parsed);
}
