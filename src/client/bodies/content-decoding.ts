import type { IncomingHttpHeaders } from 'node:http';
import type { Transform } from 'node:stream';
import { requestMethodOf, responseHasNoBody } from '../../common/message-body.js';
import { zlib } from '../../common/node-modules.js';
import type { HttpError } from '../../errors/index.js';
import { badUpstream } from '../contract/errors.js';

// node:zlib has zstd from Node.js 22.15 / 23.8 on; the @types/node of the oldest supported line do not declare it.
const createZstdDecompress = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;

/** True when this runtime's zlib decodes zstd. */
export const zstdAvailable = typeof createZstdDecompress === 'function';

/**
 * The `accept-encoding` that `gunzip` sends when the caller sets none: every coding `read()` decodes
 * here (zstd only where the runtime has it). deflate is left out: servers disagree on what it means.
 */
export const acceptEncodingOffer = zstdAvailable ? 'gzip, br, zstd' : 'gzip, br';

/** What `read()` needs to know of a response to decode it. */
export interface EncodedSource {
    headers?: IncomingHttpHeaders | undefined;
    statusCode?: number | undefined;
    // On an HTTP/1.1 response, its request, whose method `requestMethodOf` reads (HTTP/2's and the cache's have none).
    req?: { method?: string | undefined } | undefined;
}

/**
 * The decoders for a response, in the order its bytes go through them (an empty list: read as it
 * is), or the error naming a coding that cannot be decoded. A `Content-Encoding` list is in the order
 * the codings were applied (RFC 9110, 8.4), so they are undone from the last; `identity` is no coding.
 */
export function decodersFor(
    source: EncodedSource,
    headers: IncomingHttpHeaders,
    gunzip: boolean | 'force' | undefined
): Transform[] | HttpError {
    if (!gunzip || hasNoBody(source)) {
        return [];
    }

    const codings = codingsOf(headers['content-encoding']);
    if (codings.length === 0) {
        // Unzip tells gzip from zlib-wrapped deflate by the data itself, which is what 'force' needs.
        return gunzip === 'force' ? [zlib.createUnzip()] : [];
    }

    const decoders: Transform[] = [];
    for (let i = codings.length - 1; i >= 0; i--) {
        const decoder = decoderOf(codings[i]!);
        if (!isTransform(decoder)) {
            for (const made of decoders) {
                made.destroy();
            }

            return decoder;
        }

        decoders.push(decoder);
    }

    return decoders;
}

/**
 * A response that has no body by definition: there is nothing to decode, whatever its `content-encoding`.
 * The method it answers is asked of the response (a HEAD's has no body whatever its headers say), which
 * knows it over HTTP/1.1 and HTTP/2 alike, and from the cache.
 */
export function hasNoBody(source: EncodedSource): boolean {
    return responseHasNoBody(requestMethodOf(source), source.statusCode);
}

/** The codings of a `Content-Encoding` value (lower case, in the order applied), `identity` left out. */
function codingsOf(value: string | undefined): string[] {
    if (value === undefined) {
        return [];
    }

    const codings: string[] = [];
    for (const part of value.split(',')) {
        const coding = part.trim().toLowerCase();
        if (coding !== '' && coding !== 'identity') {
            codings.push(coding);
        }
    }

    return codings;
}

function decoderOf(coding: string): Transform | HttpError {
    switch (coding) {
        case 'gzip':
        case 'x-gzip':
        case 'deflate':
            // Unzip takes gzip and zlib-wrapped deflate alike.
            return zlib.createUnzip();
        case 'br':
            return zlib.createBrotliDecompress();
        case 'zstd':
            return createZstdDecompress !== undefined
                ? createZstdDecompress()
                : badUpstream(
                      `Response content-encoding zstd cannot be decoded: this runtime (Node.js ${process.versions.node}) has no zstd in node:zlib (Node.js 22.15 or later has it)`
                  );
        default:
            return badUpstream(
                `Response content-encoding ${JSON.stringify(coding)} cannot be decoded (gunzip decodes gzip, deflate, br${zstdAvailable ? ', zstd' : ''})`
            );
    }
}

function isTransform(value: Transform | HttpError): value is Transform {
    return typeof (value as Transform).pipe === 'function';
}
