import type { Request, ResponseObject } from '@hapi/hapi';

/*
 * What hapi's response objects carry that its type declarations leave out: read in one place, so the
 * phases of the file response and the span that describes it make the same assumption about hapi.
 */

/** The request a response answers. */
export function requestOf(response: ResponseObject): Request {
    return (response as ResponseObject & { request: Request }).request;
}

/** The content type a 200 would send (hapi adds the charset of text types to the header when it sends it). */
export function contentTypeOf(response: ResponseObject): string | null {
    return (response as ResponseObject & { contentType: string | null }).contentType;
}
