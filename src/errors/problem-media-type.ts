import type { MediaType } from '../common/media-range.js';

/**
 * The media type of a problem document in JSON (RFC 9457, section 3): the `content-type` the
 * plugin sends, the type a client's `accept` names to get one, the type the client reads one from.
 */
export const problemJsonType = 'application/problem+json';

/** `problemJsonType` as content negotiation ranks it (`src/common/media-range.ts`). */
export const problemJsonRange: MediaType = { type: 'application', subtype: 'problem+json' };

/** True for `problemJsonType` in any case and with any parameters (`; charset=utf-8`). */
export function isProblemJson(contentType: unknown): boolean {
    if (typeof contentType !== 'string') {
        return false;
    }

    const semicolon = contentType.indexOf(';');
    const mediaType = semicolon === -1 ? contentType : contentType.slice(0, semicolon);
    return mediaType.trim().toLowerCase() === problemJsonType;
}
