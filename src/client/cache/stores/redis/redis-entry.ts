import type { CachedResponse } from '../../../contract/cache-store.js';
import { freezeOwnEntry } from '../frozen-entry.js';

/**
 * A stored response as a `RedisCacheStore` keeps it in one hash field: a layout byte, the length of
 * the head (4 bytes, big-endian), the head as JSON (UTF-8) and the body's bytes as they came. The head
 * carries the cache key itself, so a value is never taken for another key's, and a value of another
 * layout (another version of the store sharing the server during a rolling deploy) is skipped.
 */

const layout = 1;
const prefixLength = 5;

type Head = [
    key: string,
    method: string,
    statusCode: number,
    statusMessage: string,
    rawHeaders: readonly string[],
    vary: [string, string | null][] | null,
    requestTime: number,
    responseTime: number,
    deleteAt: number
];

/** The bytes of the head of `entry` for `key`; the value is those, then the body. */
export function encodedHead(key: string, entry: CachedResponse): Buffer {
    const vary =
        entry.vary === undefined
            ? null
            : Object.keys(entry.vary).map((name): [string, string | null] => [name, entry.vary![name] ?? null]);
    const head: Head = [
        key,
        entry.method,
        entry.statusCode,
        entry.statusMessage,
        entry.rawHeaders,
        vary,
        entry.requestTime,
        entry.responseTime,
        entry.deleteAt
    ];
    const json = Buffer.from(JSON.stringify(head));
    const prefix = Buffer.allocUnsafe(prefixLength);
    prefix.writeUInt8(layout, 0);
    prefix.writeUInt32BE(json.length, 1);
    return Buffer.concat([prefix, json]);
}

/**
 * The stored response in `value` if it is one of this layout for `key`, else undefined. Its body is a
 * copy, unless `owned`: `value` is the caller's own copy, which the body is then a view of.
 */
export function decodeEntry(value: Buffer, key: string, owned = false): CachedResponse | undefined {
    if (value.length < prefixLength || value.readUInt8(0) !== layout) {
        return undefined;
    }

    const headEnd = prefixLength + value.readUInt32BE(1);
    let head: Head;
    try {
        head = JSON.parse(value.toString('utf8', prefixLength, headEnd)) as Head;
    } catch {
        return undefined;
    }

    if (!Array.isArray(head) || head[0] !== key) {
        return undefined;
    }

    const [, method, statusCode, statusMessage, rawHeaders, varyPairs, requestTime, responseTime, deleteAt] = head;
    let vary: Record<string, string | undefined> | undefined;
    if (varyPairs !== null) {
        vary = {};
        for (const [name, text] of varyPairs) {
            vary[name] = text ?? undefined;
        }
    }

    return {
        method,
        statusCode,
        statusMessage,
        rawHeaders,
        vary,
        // A copy unless owned: the reply's buffer may be a slice of a larger read, which a kept entry would hold on to.
        body: owned ? value.subarray(headEnd) : Buffer.from(value.subarray(headEnd)),
        requestTime,
        responseTime,
        deleteAt
    };
}

/**
 * The entries decoded from the values a store read, by cache key and variant field: a lookup that reads
 * the very bytes decoded last time gets the same entry object back, not a new one. A new object was
 * parsed from JSON, copied and then read again by the cache's rules (its date, its directives, the
 * fields it answers with: worked out once per entry object), most of what a hit cost on top of the
 * round trip. The bytes are compared whole, so a value written anew (by any instance) is decoded anew.
 * Bounded in count and in the bytes it holds; values larger than a sixteenth of that are not kept.
 * One entry goes to every lookup that reads its bytes: it is frozen (frozen-entry.ts), and its body a
 * view of the bytes kept to compare, so a caller that wrote to the body changed those too, and the next
 * read decodes its value anew instead of handing that body on.
 */
export class DecodedEntries {
    readonly #held = new Map<string, { value: Buffer; entry: CachedResponse }>();
    #bytes = 0;

    constructor(
        readonly maxCount = 1000,
        readonly maxBytes = 4 * 1024 * 1024
    ) {}

    /** The entry in `value`, the field `field` of the hash of `key`; undefined when it is not one (decodeEntry). */
    entryOf(key: string, field: string, value: Buffer): CachedResponse | undefined {
        const id = `${field}\n${key}`;
        const known = this.#held.get(id);
        if (known?.value.equals(value)) {
            return known.entry;
        }

        this.#forget(id, known);
        if (value.length > this.maxBytes / 16) {
            const entry = decodeEntry(value, key);
            return entry === undefined ? undefined : freezeOwnEntry(entry);
        }

        // A copy of the reply's buffer (which may be a slice of a larger read), decoded in place.
        const own = Buffer.from(value);
        const decoded = decodeEntry(own, key, true);
        if (decoded !== undefined) {
            const entry = freezeOwnEntry(decoded);
            this.#held.set(id, { value: own, entry });
            this.#bytes += own.length;
            for (const [oldest, held] of this.#held) {
                if (this.#held.size <= this.maxCount && this.#bytes <= this.maxBytes) {
                    break;
                }

                this.#forget(oldest, held);
            }

            return entry;
        }

        return undefined;
    }

    #forget(id: string, held: { value: Buffer } | undefined): void {
        if (held !== undefined) {
            this.#held.delete(id);
            this.#bytes -= held.value.length;
        }
    }
}
