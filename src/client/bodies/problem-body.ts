import type { ProblemDetails } from '../../errors/index.js';
import { isProblemJson, problemJsonType } from '../../errors/problem-media-type.js';
import { problemReadLimits, readProblem } from '../../errors/problem-reader.js';
import type { ReadOptions } from '../contract/types.js';

/**
 * The `accept` a helper sends when it reads JSON and the caller set none (docs/problem-details.md,
 * "Between tracewire's client and server"): JSON, and problem documents at the same q-value, JSON
 * first. A server that negotiates errors (the `problemDetails` plugin) then answers them as problem
 * documents, which the helper puts in `data.problem`, and one that picks a success's type from the
 * list picks JSON (a `+json` formatter would otherwise label a success `application/problem+json`).
 * `'strict'` reads nothing else (any other type is its 406), so it asks for nothing else; `true`
 * hands another type over unparsed and `'force'` parses whatever the type says, so they accept the
 * rest too, below JSON: a server that refuses what `accept` leaves out still answers them.
 */
export function jsonAcceptFor(json: ReadOptions['json']): string | undefined {
    if (!json) {
        return undefined;
    }

    return json === 'strict' ? strictJsonAccept : jsonAccept;
}

const strictJsonAccept = `application/json, ${problemJsonType}`;
const jsonAccept = `${strictJsonAccept}, */*;q=0.8`;

/**
 * The problem document (RFC 9457) of an error response the helpers reject, or undefined
 * (docs/problem-details.md, "The client: `data.problem`"): only for a `problemJsonType`
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
